package sshsign

// The signing half of ssh-keygen's -Y protocol, as git drives it through
// gpg.ssh.program when it signs a push certificate (docs/serving.md "git+
// verbs identify themselves"). git+ points gpg.ssh.program at its own
// binary, so its pushes are signed with the key it signs events with, with
// no ssh-keygen needed and agent keys working alike.
//
// Decisions:
//   - Only `-Y sign -n git -f KEYFILE [-U] [-q] FILE` is answered: it writes
//     the armored signature of FILE's bytes to FILE.sig, as ssh-keygen does.
//     git 2.39 passes exactly this (-U, for "the key is in the agent", comes
//     with later git versions and is accepted). The armor is ssh-keygen's
//     to the byte: lines of 70 base64 characters (hubrefs.ArmorSignature).
//   - KEYFILE holding a private key signs with it; holding a public key
//     (git writes a literal "key::ssh-…" user.signingKey to a temporary
//     file) signs through ssh-agent ($SSH_AUTH_SOCK) with that key.
//   - Only the namespace "git" is signed: it is the one git uses for push
//     certificates and the one hub events are signed in (hubrefs.Signer).
//   - Any other -Y operation (verify, find-principals, check-novalidate:
//     receive-pack asks them only with gpg.ssh.allowedSignersFile set) is
//     refused with exit status 255 and a message: the hook verifies push
//     certificates itself, against the members in the trust log.

import (
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"os"

	"golang.org/x/crypto/ssh"

	"github.com/gitplus/gitplus/hubrefs"
)

// ErrKeygenUsage reports -Y arguments the signer does not answer.
var ErrKeygenUsage = errors.New("unsupported ssh-keygen -Y invocation")

// KeygenRequest is a parsed `-Y sign` invocation.
type KeygenRequest struct {
	Namespace string
	KeyFile   string
	File      string // the file to sign; the signature goes to File+".sig"
}

// ParseKeygenArgs parses the arguments after the program name (they start
// with "-Y").
func ParseKeygenArgs(args []string) (KeygenRequest, error) {
	var r KeygenRequest
	if len(args) < 2 || args[0] != "-Y" {
		return r, fmt.Errorf("%w: want -Y sign ..., got %q", ErrKeygenUsage, args)
	}
	if args[1] != "sign" {
		return r, fmt.Errorf("%w: -Y %s: git+ only signs (the hook verifies push certificates itself); leave gpg.ssh.allowedSignersFile unset for git+'s pushes", ErrKeygenUsage, args[1])
	}
	rest := args[2:]
	for len(rest) > 0 {
		a := rest[0]
		switch a {
		case "-n", "-f":
			if len(rest) < 2 {
				return r, fmt.Errorf("%w: %s needs a value", ErrKeygenUsage, a)
			}
			if a == "-n" {
				r.Namespace = rest[1]
			} else {
				r.KeyFile = rest[1]
			}
			rest = rest[2:]
			continue
		case "-U", "-q":
		default:
			if len(a) > 0 && a[0] == '-' {
				return r, fmt.Errorf("%w: option %s", ErrKeygenUsage, a)
			}
			if r.File != "" {
				return r, fmt.Errorf("%w: more than one file to sign (%s, %s)", ErrKeygenUsage, r.File, a)
			}
			r.File = a
		}
		rest = rest[1:]
	}
	switch {
	case r.KeyFile == "":
		return r, fmt.Errorf("%w: no -f KEYFILE", ErrKeygenUsage)
	case r.File == "":
		return r, fmt.Errorf("%w: no file to sign (git+ signs files, not standard input)", ErrKeygenUsage)
	case r.Namespace != hubrefs.SigNamespace:
		return r, fmt.Errorf("%w: namespace %q: git+ signs only in namespace %q", ErrKeygenUsage, r.Namespace, hubrefs.SigNamespace)
	}
	return r, nil
}

// SignerForKeyFile returns the signer a -f KEYFILE names: the private key
// it holds, or the ssh-agent key equal to the public key it holds.
func SignerForKeyFile(path string, getenv func(string) string) (hubrefs.Signer, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading signing key %s: %w", path, err)
	}
	if pub, _, _, _, perr := ssh.ParseAuthorizedKey(data); perr == nil {
		sock, err := AgentSocket(getenv)
		if err != nil {
			return nil, fmt.Errorf("signing key %s is a public key, to be found in ssh-agent: %w", path, err)
		}
		return AgentSigner(sock, pub)
	}
	return LoadKeyFile(path)
}

// Keygen answers an `ssh-keygen -Y sign` invocation (args after the program
// name) and returns the exit status: 0 with FILE.sig written, 255 with a
// message on stderr otherwise.
func Keygen(args []string, getenv func(string) string, stderr io.Writer) int {
	if err := keygen(args, getenv); err != nil {
		fmt.Fprintln(stderr, "git+ (as gpg.ssh.program):", err)
		return 255
	}
	return 0
}

func keygen(args []string, getenv func(string) string) error {
	r, err := ParseKeygenArgs(args)
	if err != nil {
		return err
	}
	s, err := SignerForKeyFile(r.KeyFile, getenv)
	if err != nil {
		return err
	}
	msg, err := os.ReadFile(r.File)
	if err != nil {
		return fmt.Errorf("reading the data to sign: %w", err)
	}
	sig, err := s.Sign(msg)
	if err != nil {
		return err
	}
	// The file holds the armor exactly as ssh-keygen writes it: git keeps it
	// as it is in the push certificate, and the hook refuses any other
	// layout (docs/serving.md "Replayed certificates").
	block, _ := pem.Decode(sig)
	if block == nil {
		return fmt.Errorf("the signer returned no armored signature")
	}
	if err := os.WriteFile(r.File+".sig", hubrefs.ArmorSignature(block.Bytes), 0o600); err != nil {
		return fmt.Errorf("writing the signature: %w", err)
	}
	return nil
}
