package receive

// Who pushes, read from the environment git runs pre-receive in
// (docs/serving.md "The hook and the pusher").
//
// Decisions:
//   - A signed push (GIT_PUSH_CERT names the certificate blob) is verified
//     here, whatever the rules: the SSH signature over the certificate
//     (namespace "git"), its commands against the pushed updates, the nonce
//     status receive-pack computed (only OK passes) and that this
//     certificate (what its signature covers) was never used before in this
//     repository. Any failure refuses the whole push (bad-push-cert,
//     push-cert-nonce): a forged or replayed certificate is never "no
//     identity".
//   - Without a certificate, the transport's word is taken: GITKIT_KEY (the
//     key git+ serve's SSH server authenticated) or GITPLUS_TOKEN_KEY (the
//     key of the member whose token git+ serve's HTTP layer checked). These
//     variables are set only by git+ serve for the git processes it starts;
//     a process that can set them for a local push can write the refs
//     directly anyway.
//   - GITPLUS_SERVED=1 says the push came through git+ serve, the default
//     of requireKnownPusher (policy/pusher.go).
//   - Without either, the identity another host established, as the
//     repository's gitplus.pusher says (hostident.go).
//   - A certificate is used once: its replay key is the SHA-256 of the text
//     its signature covers (nonce and commands included), never of its raw
//     bytes, and ParsePushCert refuses anything outside ssh-keygen's
//     canonical armor. The records of used certificates, their bound and
//     their expiry are certrecord.go's (docs/serving.md "Replayed
//     certificates").

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/gitplus/gitplus/hubrefs"
	"github.com/gitplus/gitplus/policy"
	"github.com/gitplus/gitplus/receive/gitio"
)

// Refusal codes of the push certificate (README.md "Refusal codes").
const (
	CodeBadPushCert   = "bad-push-cert"         // the certificate does not verify or does not match the push
	CodePushCertNonce = gitio.CodePushCertNonce // the nonce is not the one this server issued, or the certificate was used before
)

// Environment variables git+ serve sets for the git processes it starts.
const (
	EnvServed   = "GITPLUS_SERVED"    // "1": the push came through git+ serve
	EnvSSHKey   = "GITKIT_KEY"        // authorized_keys line of the SSH key that authenticated
	EnvTokenKey = "GITPLUS_TOKEN_KEY" // authorized_keys line of the member whose HTTP token authenticated
)

// PushEnv is what the hook's environment says about who pushes.
type PushEnv struct {
	Served          bool
	SSHKey          string
	TokenKey        string
	Cert            string // GIT_PUSH_CERT: the certificate's blob id; "" for an unsigned push
	CertNonce       string // GIT_PUSH_CERT_NONCE
	CertNonceStatus string // GIT_PUSH_CERT_NONCE_STATUS
	// Offline: no push at all (git+ verify --ref judging a proposed
	// update), so there is no pusher to judge: content rules only.
	Offline bool
	// Host holds the variables another host sets for its authenticated
	// user (HostUserVars, SSH_USER_AUTH), read only as gitplus.pusher
	// says (hostident.go).
	Host map[string]string
	// Now is the server's clock when the hook started (clockskew.go);
	// zero judges no record times.
	Now time.Time
}

// PushFromEnviron picks PushEnv out of an environment in os.Environ form.
func PushFromEnviron(environ []string) PushEnv {
	var p PushEnv
	for _, kv := range environ {
		name, value, ok := strings.Cut(kv, "=")
		if !ok {
			continue
		}
		switch name {
		case EnvServed:
			p.Served = value == "1"
		case EnvSSHKey:
			p.SSHKey = value
		case EnvTokenKey:
			p.TokenKey = value
		case "GIT_PUSH_CERT":
			p.Cert = value
		case "GIT_PUSH_CERT_NONCE":
			p.CertNonce = value
		case "GIT_PUSH_CERT_NONCE_STATUS":
			p.CertNonceStatus = value
		case EnvSSHUserAuth, "GL_USER", "REMOTE_USER", "GITEA_PUSHER_NAME", "GL_USERNAME":
			if p.Host == nil {
				p.Host = map[string]string{}
			}
			p.Host[name] = value
		}
	}
	return p
}

// pushRefusal is a refusal of the whole push for its identity.
type pushRefusal struct{ code, reason string }

func (r *pushRefusal) Error() string { return "[" + r.code + "] " + r.reason }

// pusher establishes who pushes. A *pushRefusal error refuses every update.
// member says whether a key is a current member's (for the record of a used
// certificate); nil: nobody is.
func (p PushEnv) pusher(gitDir string, objs Objects, updates []policy.Update, member func(hubrefs.PublicKey) bool) (policy.Pusher, error) {
	if p.Cert != "" {
		if member == nil {
			member = func(hubrefs.PublicKey) bool { return false }
		}
		key, err := p.verifyCert(gitDir, objs, updates, member)
		if err != nil {
			return policy.Pusher{}, err
		}
		return policy.Pusher{Key: key, Via: "push-cert"}, nil
	}
	for _, c := range []struct{ line, via string }{{p.SSHKey, "ssh"}, {p.TokenKey, "token"}} {
		if c.line == "" {
			continue
		}
		key, _, err := hubrefs.ParseAuthorizedKeyLine(c.line)
		if err != nil {
			return policy.Pusher{}, fmt.Errorf("the %s identity git+ serve passed (%q) does not parse: %w", c.via, c.line, err)
		}
		return policy.Pusher{Key: key, Via: c.via}, nil
	}
	return policy.Pusher{}, nil
}

func certRefusal(code, format string, a ...any) error {
	return &pushRefusal{code: code, reason: fmt.Sprintf(format, a...)}
}

// verifyCert checks the push certificate and returns its signer. member
// says whether a key is a current member's: only a member's certificate is
// recorded as used (certrecord.go).
func (p PushEnv) verifyCert(gitDir string, objs Objects, updates []policy.Update, member func(hubrefs.PublicKey) bool) (hubrefs.PublicKey, error) {
	if !isHex40(p.Cert) {
		return nil, certRefusal(CodeBadPushCert, "GIT_PUSH_CERT %q is not an object id", p.Cert)
	}
	typ, raw, err := objs.ReadObject(plumbing.NewHash(p.Cert))
	if err != nil {
		return nil, fmt.Errorf("reading the push certificate %s: %w", p.Cert, err)
	}
	if typ != plumbing.BlobObject {
		return nil, certRefusal(CodeBadPushCert, "the push certificate %s is a %s, not a blob", p.Cert, typ)
	}
	cert, key, err := VerifyPushCert(raw)
	if err != nil {
		return nil, certRefusal(CodeBadPushCert, "%v", err)
	}
	if err := cert.matches(updates); err != nil {
		return nil, certRefusal(CodeBadPushCert, "%v", err)
	}
	switch {
	case p.CertNonceStatus != "OK":
		return nil, certRefusal(CodePushCertNonce, "the push certificate's nonce status is %q, not OK: its nonce was not issued by this server for this repository just now (a replayed or stale certificate); push again", p.CertNonceStatus)
	case cert.Nonce != p.CertNonce:
		return nil, certRefusal(CodePushCertNonce, "the push certificate's nonce %q is not the nonce %q receive-pack accepted; push again", cert.Nonce, p.CertNonce)
	}
	if err := useCert(gitDir, cert, member(key), time.Now()); err != nil {
		return nil, err
	}
	return key, nil
}

// forgetCert removes the record of the certificate this push made, when the
// judgement refused the push (certrecord.go): the certificate is read again
// only then, so an accepted push pays nothing.
func (p PushEnv) forgetCert(gitDir string, objs Objects) {
	if !isHex40(p.Cert) {
		return
	}
	typ, raw, err := objs.ReadObject(plumbing.NewHash(p.Cert))
	if err != nil || typ != plumbing.BlobObject {
		return
	}
	if cert, err := ParsePushCert(raw); err == nil {
		forgetCert(gitDir, cert)
	}
}

// VerifyPushCert parses a push certificate (ParsePushCert) and verifies its
// SSH signature, returning the signer. It says nothing about the nonce,
// the updates pushed or whether the certificate was used before, nor
// whether the signer is trusted. Errors read as a sentence after "the push
// certificate".
func VerifyPushCert(raw []byte) (*PushCert, hubrefs.PublicKey, error) {
	cert, err := ParsePushCert(raw)
	if err != nil {
		return nil, nil, fmt.Errorf("the push certificate does not parse: %w; push again with git push --signed (gpg.format=ssh)", err)
	}
	key, err := hubrefs.VerifyDetached(cert.Signed, cert.Signature)
	if err != nil {
		return nil, nil, fmt.Errorf("the push certificate's signature: %w; sign with an SSH key (gpg.format=ssh, user.signingkey)", err)
	}
	return cert, key, nil
}

// PushCert is a parsed push certificate (git's "certificate version 0.1").
type PushCert struct {
	Pusher, Pushee, Nonce string
	Updates               []policy.Update
	Signed                []byte // the bytes the signature covers
	Signature             []byte // the armored signature
}

// ErrPushCert reports a push certificate that does not parse.
var ErrPushCert = errors.New("malformed push certificate")

// maxPushCert bounds a certificate (a header and one line per ref).
const maxPushCert = 4 << 20

// ParsePushCert parses a push certificate: header lines up to a blank line,
// one "<old> <new> <ref>" line per command, then the signature block, which
// must be an SSH signature armored exactly as ssh-keygen writes it and end
// the certificate (hubrefs.CanonicalSignature): a certificate has one byte
// form for what its signature covers (docs/serving.md "Replayed
// certificates").
func ParsePushCert(raw []byte) (*PushCert, error) {
	if len(raw) > maxPushCert {
		return nil, fmt.Errorf("%w: %d bytes, over %d", ErrPushCert, len(raw), maxPushCert)
	}
	at := bytes.Index(raw, []byte("\n-----BEGIN "))
	if at < 0 {
		return nil, fmt.Errorf("%w: no signature block", ErrPushCert)
	}
	if _, err := hubrefs.CanonicalSignature(raw[at+1:]); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrPushCert, err)
	}
	c := &PushCert{Signed: raw[:at+1], Signature: raw[at+1:]}
	head, body, ok := bytes.Cut(c.Signed, []byte("\n\n"))
	if !ok {
		return nil, fmt.Errorf("%w: no blank line after the header", ErrPushCert)
	}
	lines := strings.Split(string(head), "\n")
	if lines[0] != "certificate version 0.1" {
		return nil, fmt.Errorf("%w: first line %q, want \"certificate version 0.1\"", ErrPushCert, lines[0])
	}
	seen := map[string]bool{}
	for _, l := range lines[1:] {
		name, value, _ := strings.Cut(l, " ")
		if seen[name] && name != "push-option" {
			return nil, fmt.Errorf("%w: header %q twice", ErrPushCert, name)
		}
		seen[name] = true
		switch name {
		case "pusher":
			c.Pusher = value
		case "pushee":
			c.Pushee = value
		case "nonce":
			c.Nonce = value
		}
	}
	if !seen["pusher"] {
		return nil, fmt.Errorf("%w: no pusher header", ErrPushCert)
	}
	ups, err := ParseHookInput(bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("%w: commands: %w", ErrPushCert, err)
	}
	c.Updates = ups
	return c, nil
}

// matches checks that the certificate's commands are exactly the updates
// pushed (receive-pack takes them from the certificate; this says so).
func (c *PushCert) matches(updates []policy.Update) error {
	want := map[policy.Update]int{}
	for _, u := range c.Updates {
		want[u]++
	}
	for _, u := range updates {
		if want[u] == 0 {
			return fmt.Errorf("the push updates %s (%s -> %s), which its certificate does not sign; push again with git push --signed", u.Ref, u.Old, u.New)
		}
		want[u]--
	}
	for u, n := range want {
		if n > 0 {
			return fmt.Errorf("the push certificate signs an update of %s the push does not carry", u.Ref)
		}
	}
	return nil
}
