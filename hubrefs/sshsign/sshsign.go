// Package sshsign signs hub events with SSH keys: unencrypted private key
// files and ssh-agent (hubrefs.Signer implementations). It is apart from
// hubrefs so that the pre-receive hook, which only verifies, does not link
// golang.org/x/crypto/ssh.
package sshsign

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"os"

	"github.com/hiddeco/sshsig"
	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/agent"

	"github.com/gitplus/gitplus/hubrefs"
)

// NewSigner wraps an ssh.Signer (ed25519, ecdsa or rsa; rsa signs with
// rsa-sha2-512 as ssh-keygen does).
func NewSigner(s ssh.Signer) hubrefs.Signer { return keySigner{s} }

type keySigner struct{ s ssh.Signer }

func (k keySigner) PublicKey() hubrefs.PublicKey { return k.s.PublicKey() }

func (k keySigner) Sign(msg []byte) ([]byte, error) {
	return signWith(k.s, msg)
}

func signWith(s ssh.Signer, msg []byte) ([]byte, error) {
	sig, err := sshsig.Sign(bytes.NewReader(msg), s, sshsig.HashSHA512, hubrefs.SigNamespace)
	if err != nil {
		return nil, fmt.Errorf("signing with %s key %s: %w", s.PublicKey().Type(), hubrefs.Fingerprint(s.PublicKey()), err)
	}
	return sshsig.Armor(sig), nil
}

// LoadKeyFile reads an unencrypted private key file (OpenSSH or PEM format).
// A passphrase-protected key is refused with advice to use ssh-agent.
func LoadKeyFile(path string) (hubrefs.Signer, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading key file: %w", err)
	}
	s, err := ssh.ParsePrivateKey(data)
	if err != nil {
		var pm *ssh.PassphraseMissingError
		if errors.As(err, &pm) {
			return nil, fmt.Errorf("key file %s is protected by a passphrase, which git+ does not prompt for: add it to ssh-agent (ssh-add %s) and sign through the agent: %w", path, path, hubrefs.ErrKey)
		}
		if _, _, _, _, perr := ssh.ParseAuthorizedKey(data); perr == nil {
			return nil, fmt.Errorf("key file %s holds a public key: pass the private key file, or load the key into ssh-agent: %w", path, hubrefs.ErrKey)
		}
		return nil, fmt.Errorf("key file %s is not an unencrypted OpenSSH or PEM private key (%v): %w", path, err, hubrefs.ErrKey)
	}
	return NewSigner(s), nil
}

// AgentSocket returns the ssh-agent socket path from the environment, read
// through getenv (pass os.Getenv); hubrefs never reads the environment itself.
func AgentSocket(getenv func(string) string) (string, error) {
	sock := getenv(hubrefs.AgentSocketEnv)
	if sock == "" {
		return "", fmt.Errorf("%s is not set: start ssh-agent and ssh-add your key, or pass a key file: %w", hubrefs.AgentSocketEnv, hubrefs.ErrKey)
	}
	return sock, nil
}

// AgentKeys lists the public keys the agent at sock holds, in agent order.
func AgentKeys(sock string) ([]hubrefs.PublicKey, error) {
	conn, err := net.Dial("unix", sock)
	if err != nil {
		return nil, fmt.Errorf("connecting to ssh-agent at %s: %v: %w", sock, err, hubrefs.ErrKey)
	}
	defer conn.Close()
	keys, err := agent.NewClient(conn).List()
	if err != nil {
		return nil, fmt.Errorf("listing ssh-agent keys at %s: %v: %w", sock, err, hubrefs.ErrKey)
	}
	out := make([]hubrefs.PublicKey, 0, len(keys))
	for _, k := range keys {
		pub, err := ssh.ParsePublicKey(k.Marshal())
		if err != nil {
			continue // a key type x/crypto cannot parse cannot sign events either
		}
		out = append(out, pub)
	}
	return out, nil
}

// AgentSigner signs through the ssh-agent listening on sock, with the key
// equal to want, or with the agent's first key when want is nil. It checks
// now that the agent holds the key; each Sign dials the agent afresh, so the
// Signer holds no connection.
func AgentSigner(sock string, want hubrefs.PublicKey) (hubrefs.Signer, error) {
	keys, err := AgentKeys(sock)
	if err != nil {
		return nil, err
	}
	if len(keys) == 0 {
		return nil, fmt.Errorf("ssh-agent at %s holds no keys: ssh-add one: %w", sock, hubrefs.ErrKey)
	}
	if want == nil {
		return agentSigner{sock: sock, pub: keys[0]}, nil
	}
	for _, k := range keys {
		if hubrefs.SameKey(k, want) {
			return agentSigner{sock: sock, pub: k}, nil
		}
	}
	return nil, fmt.Errorf("ssh-agent at %s does not hold key %s: ssh-add it: %w", sock, hubrefs.Fingerprint(want), hubrefs.ErrKey)
}

type agentSigner struct {
	sock string
	pub  hubrefs.PublicKey
}

func (a agentSigner) PublicKey() hubrefs.PublicKey { return a.pub }

func (a agentSigner) Sign(msg []byte) ([]byte, error) {
	conn, err := net.Dial("unix", a.sock)
	if err != nil {
		return nil, fmt.Errorf("connecting to ssh-agent at %s: %v: %w", a.sock, err, hubrefs.ErrKey)
	}
	defer conn.Close()
	signers, err := agent.NewClient(conn).Signers()
	if err != nil {
		return nil, fmt.Errorf("listing ssh-agent keys at %s: %v: %w", a.sock, err, hubrefs.ErrKey)
	}
	for _, s := range signers {
		if hubrefs.SameKey(s.PublicKey(), a.pub) {
			return signWith(s, msg)
		}
	}
	return nil, fmt.Errorf("ssh-agent at %s no longer holds key %s: ssh-add it: %w", a.sock, hubrefs.Fingerprint(a.pub), hubrefs.ErrKey)
}
