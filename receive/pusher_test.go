package receive

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/hiddeco/sshsig"
	"golang.org/x/crypto/ssh"

	"github.com/gitplus/gitplus/fixtures"
	"github.com/gitplus/gitplus/hubrefs"
	"github.com/gitplus/gitplus/policy"
)

const (
	certOld = "1111111111111111111111111111111111111111"
	certNew = "2222222222222222222222222222222222222222"
)

func newSSHSigner(t *testing.T) ssh.Signer { return fixtures.NewSSHSigner(t) }

// signCert writes a push certificate as git's send-pack does and signs it
// (SSHSIG, namespace "git").
func signCert(t *testing.T, s ssh.Signer, nonce string, cmds ...string) []byte {
	t.Helper()
	var b strings.Builder
	b.WriteString("certificate version 0.1\npusher Dev <dev@example.invalid> 1700000000 +0000\npushee http://h/r.git\n")
	b.WriteString("nonce " + nonce + "\n\n")
	for _, c := range cmds {
		b.WriteString(c + "\n")
	}
	sig, err := sshsig.Sign(strings.NewReader(b.String()), s, sshsig.HashSHA512, "git")
	if err != nil {
		t.Fatal(err)
	}
	return append([]byte(b.String()), hubrefs.ArmorSignature(sig.Marshal())...)
}

// nonceAt is a nonce of receive-pack's form issued at t.
func nonceAt(t time.Time, hmac string) string { return fmt.Sprintf("%d-%s", t.Unix(), hmac) }

// everyone is a member.
func everyone(hubrefs.PublicKey) bool { return true }

func TestParsePushCert(t *testing.T) {
	s := newSSHSigner(t)
	good := signCert(t, s, "1700000000-abc", certOld+" "+certNew+" refs/heads/main")
	c, err := ParsePushCert(good)
	if err != nil {
		t.Fatal(err)
	}
	if c.Nonce != "1700000000-abc" || c.Pusher == "" || c.Pushee != "http://h/r.git" || len(c.Updates) != 1 ||
		c.Updates[0] != (policy.Update{Ref: "refs/heads/main", Old: plumbing.NewHash(certOld), New: plumbing.NewHash(certNew)}) {
		t.Fatalf("parsed %+v", c)
	}
	if key, err := hubrefs.VerifyDetached(c.Signed, c.Signature); err != nil || !hubrefs.SameKey(key, s.PublicKey()) {
		t.Fatalf("the parsed parts do not verify: %v", err)
	}
	for name, raw := range map[string]string{
		"no signature":   "certificate version 0.1\npusher x\n\n" + certOld + " " + certNew + " refs/heads/main\n",
		"other version":  strings.Replace(string(good), "version 0.1", "version 0.2", 1),
		"no pusher":      strings.Replace(string(good), "pusher ", "pushr ", 1),
		"nonce twice":    strings.Replace(string(good), "nonce ", "nonce a\nnonce ", 1),
		"bad command":    strings.Replace(string(good), certOld+" ", "zz ", 1),
		"no blank line":  strings.Replace(string(good), "\n\n", "\n", 1),
		"empty":          "",
		"only signature": "-----BEGIN SSH SIGNATURE-----\n",
		// Outside the canonical armor (hubrefs.CanonicalSignature): each
		// would change the certificate's bytes but not what it signs.
		"whitespace line after END": string(good) + " \n",
		"blank line after END":      string(good) + "\n",
		"text after END":            string(good) + "x\n",
		"armor wrapped at 64":       string(rewrap(t, good, 64)),
		"armor wrapped at 76":       string(rewrap(t, good, 76)),
		"PGP signature":             strings.Replace(string(good), "SSH SIGNATURE", "PGP SIGNATURE", 2),
		"space in the armor":        strings.Replace(string(good), "-----\n", "-----\n ", 1),
	} {
		if _, err := ParsePushCert([]byte(raw)); !errors.Is(err, ErrPushCert) {
			t.Errorf("%s: %v, want ErrPushCert", name, err)
		}
	}
}

// rewrap lays the armor of a certificate out in lines of n characters.
func rewrap(t *testing.T, cert []byte, n int) []byte {
	t.Helper()
	at := bytes.Index(cert, []byte("-----BEGIN SSH SIGNATURE-----\n"))
	end := bytes.Index(cert, []byte("-----END SSH SIGNATURE-----\n"))
	if at < 0 || end < at {
		t.Fatalf("no armor in %q", cert)
	}
	head := at + len("-----BEGIN SSH SIGNATURE-----\n")
	b64 := bytes.ReplaceAll(cert[head:end], []byte("\n"), nil)
	out := append([]byte{}, cert[:head]...)
	for len(b64) > 0 {
		k := min(n, len(b64))
		out = append(append(out, b64[:k]...), '\n')
		b64 = b64[k:]
	}
	return append(out, cert[end:]...)
}

func FuzzParsePushCert(f *testing.F) {
	f.Add([]byte("certificate version 0.1\npusher x\nnonce n\n\n" + certOld + " " + certNew + " refs/heads/main\n-----BEGIN SSH SIGNATURE-----\nAA==\n-----END SSH SIGNATURE-----\n"))
	f.Add([]byte("certificate version 0.1\n\n\n-----BEGIN "))
	f.Add([]byte("certificate version 0.1\npusher x\nnonce n\n\n" + certOld + " " + certNew + " refs/heads/main\n-----BEGIN SSH SIGNATURE-----\nAA==\n-----END SSH SIGNATURE-----\n \n"))
	f.Fuzz(func(t *testing.T, raw []byte) {
		c, err := ParsePushCert(raw)
		if err != nil {
			return
		}
		// What parses splits the input exactly into signed part and signature.
		if !bytes.Equal(append(append([]byte{}, c.Signed...), c.Signature...), raw) {
			t.Fatal("signed part and signature are not the certificate")
		}
		// The signature is ssh-keygen's armor of its blob, to the byte.
		blob, err := hubrefs.CanonicalSignature(c.Signature)
		if err != nil || !bytes.Equal(hubrefs.ArmorSignature(blob), c.Signature) {
			t.Fatalf("accepted a signature outside the canonical armor: %q", c.Signature)
		}
	})
}

// certRepo is a bare repository holding raw as a blob.
func certRepo(t *testing.T, raw []byte) (string, Objects, string) {
	t.Helper()
	dir := t.TempDir()
	fixtures.GitRaw(t, dir, nil, "init", "-q", "--bare")
	id := strings.TrimSpace(fixtures.GitRaw(t, dir, raw, "hash-object", "-w", "--stdin"))
	st, err := OpenStore(dir, QuarantineEnv{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return dir, Objects{st}, id
}

func TestPusherFromEnvironment(t *testing.T) {
	s := newSSHSigner(t)
	other := newSSHSigner(t)
	up := policy.Update{Ref: "refs/heads/main", Old: plumbing.NewHash(certOld), New: plumbing.NewHash(certNew)}
	cmd := certOld + " " + certNew + " refs/heads/main"
	n1, n2 := nonceAt(time.Now(), "aa"), nonceAt(time.Now(), "bb")
	tampered := signCert(t, s, n1, cmd)
	tampered = bytes.Replace(tampered, []byte("pushee http://h/"), []byte("pushee http://x/"), 1)
	for _, c := range []struct {
		name    string
		cert    []byte
		status  string
		envNon  string
		updates []policy.Update
		want    string // refusal code; "" accepted
	}{
		{"valid", signCert(t, s, n1, cmd), "OK", n1, []policy.Update{up}, ""},
		{"stale nonce", signCert(t, s, n1, cmd), "SLOP", n1, []policy.Update{up}, CodePushCertNonce},
		{"forged nonce", signCert(t, s, n1, cmd), "BAD", n1, []policy.Update{up}, CodePushCertNonce},
		{"nonce not the accepted one", signCert(t, s, n1, cmd), "OK", n2, []policy.Update{up}, CodePushCertNonce},
		{"tampered", tampered, "OK", n1, []policy.Update{up}, CodeBadPushCert},
		{"signs another update", signCert(t, s, n1, cmd), "OK", n1, []policy.Update{{Ref: "refs/heads/other", Old: up.Old, New: up.New}}, CodeBadPushCert},
		{"signs more than pushed", signCert(t, s, n1, cmd, certOld+" "+certNew+" refs/heads/x"), "OK", n1, []policy.Update{up}, CodeBadPushCert},
		{"other signer, valid", signCert(t, other, n1, cmd), "OK", n1, []policy.Update{up}, ""},
		{"whitespace line after the armor", append(signCert(t, s, n1, cmd), " \n"...), "OK", n1, []policy.Update{up}, CodeBadPushCert},
		{"nonce not receive-pack's", signCert(t, s, "n1", cmd), "OK", "n1", []policy.Update{up}, CodePushCertNonce},
		{"nonce over an hour old", signCert(t, s, nonceAt(time.Now().Add(-2*time.Hour), "aa"), cmd), "OK", nonceAt(time.Now().Add(-2*time.Hour), "aa"), []policy.Update{up}, CodePushCertNonce},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir, objs, id := certRepo(t, c.cert)
			env := PushFromEnviron([]string{"GIT_PUSH_CERT=" + id, "GIT_PUSH_CERT_NONCE=" + c.envNon, "GIT_PUSH_CERT_NONCE_STATUS=" + c.status, "GITKIT_KEY=ignored when signed"})
			p, err := env.pusher(dir, objs, c.updates, everyone)
			var r *pushRefusal
			switch {
			case c.want == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case c.want == "" && (p.Via != "push-cert" || p.Key == nil):
				t.Fatalf("pusher %+v", p)
			case c.want != "" && (!errors.As(err, &r) || r.code != c.want):
				t.Fatalf("got %v, want [%s]", err, c.want)
			}
			if c.want == "" {
				// The same certificate again is a replay.
				if _, err := env.pusher(dir, objs, c.updates, everyone); !errors.As(err, &r) || r.code != CodePushCertNonce {
					t.Fatalf("replay: %v", err)
				}
			}
		})
	}

	key := hubrefs.AuthorizedKey(s.PublicKey())
	for _, c := range []struct {
		env []string
		via string
	}{
		{[]string{"GITKIT_KEY=" + key}, "ssh"},
		{[]string{"GITPLUS_TOKEN_KEY=" + key}, "token"},
		{[]string{"GITPLUS_SERVED=1"}, ""},
		{nil, ""},
	} {
		p, err := PushFromEnviron(c.env).pusher(t.TempDir(), Objects{}, nil, nil)
		if err != nil || p.Via != c.via || (c.via != "") != (p.Key != nil) {
			t.Fatalf("%v: %+v %v", c.env, p, err)
		}
	}
	if _, err := PushFromEnviron([]string{"GITKIT_KEY=ssh-ed25519 garbage"}).pusher(t.TempDir(), Objects{}, nil, nil); err == nil {
		t.Fatal("a GITKIT_KEY that does not parse was taken")
	}
	if !PushFromEnviron([]string{"GITPLUS_SERVED=1"}).Served || PushFromEnviron([]string{"GITPLUS_SERVED=0"}).Served {
		t.Fatal("GITPLUS_SERVED")
	}
}
