package sshsign

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gitplus/gitplus/hubrefs"
)

// TestKeygenArgs: the -Y sign invocations git makes parse; others are
// refused.
func TestKeygenArgs(t *testing.T) {
	for _, c := range []struct {
		args []string
		ok   bool
	}{
		{[]string{"-Y", "sign", "-n", "git", "-f", "/k", "/f"}, true},
		{[]string{"-Y", "sign", "-n", "git", "-f", "/k", "-U", "/f"}, true},
		{[]string{"-Y", "sign", "-n", "file", "-f", "/k", "/f"}, false},
		{[]string{"-Y", "verify", "-n", "git", "-f", "/dev/null", "-I", "x", "-s", "/f.sig"}, false},
		{[]string{"-Y", "sign", "-n", "git", "/f"}, false},
		{[]string{"-Y", "sign", "-n", "git", "-f", "/k"}, false},
		{[]string{"-Y", "sign", "-n", "git", "-f", "/k", "/f", "/g"}, false},
		{[]string{"-Y", "sign", "-n", "git", "-f"}, false},
		{[]string{"-lf", "/k"}, false},
	} {
		r, err := ParseKeygenArgs(c.args)
		if (err == nil) != c.ok {
			t.Errorf("%q: err %v, want ok=%v", c.args, err, c.ok)
		}
		if err != nil && !errors.Is(err, ErrKeygenUsage) {
			t.Errorf("%q: %v does not wrap ErrKeygenUsage", c.args, err)
		}
		if err == nil && (r.KeyFile != "/k" || r.File != "/f") {
			t.Errorf("%q: parsed %+v", c.args, r)
		}
	}
}

// TestKeygenSigns: the signature Keygen writes verifies as git's would
// (hubrefs.VerifyDetached), is armored as ssh-keygen armors and, when ssh-keygen is installed, with
// ssh-keygen -Y check-novalidate (the oracle).
func TestKeygenSigns(t *testing.T) {
	for _, kind := range []string{"ed25519", "ecdsa", "rsa"} {
		k := genKey(t, kind)
		dir := t.TempDir()
		file := filepath.Join(dir, "cert")
		msg := []byte("certificate version 0.1\npusher x\n\n0 1 refs/heads/x\n")
		if err := os.WriteFile(file, msg, 0o600); err != nil {
			t.Fatal(err)
		}
		var errb bytes.Buffer
		if code := Keygen([]string{"-Y", "sign", "-n", "git", "-f", k.path, file}, func(string) string { return "" }, &errb); code != 0 {
			t.Fatalf("%s: exit %d: %s", kind, code, errb.String())
		}
		sig := mustRead(t, file+".sig")
		key, err := hubrefs.VerifyDetached(msg, sig)
		if err != nil || !hubrefs.SameKey(key, k.signer.PublicKey()) {
			t.Fatalf("%s: the signature does not verify as the key's: %v", kind, err)
		}
		// ssh-keygen's armor, to the byte (the hook refuses any other).
		if _, err := hubrefs.CanonicalSignature(sig); err != nil {
			t.Fatalf("%s: the armor is not ssh-keygen's: %v\n%s", kind, err, sig)
		}
		if _, err := exec.LookPath("ssh-keygen"); err == nil {
			cmd := exec.Command("ssh-keygen", "-Y", "check-novalidate", "-n", "git", "-s", file+".sig")
			cmd.Stdin = bytes.NewReader(msg)
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("%s: ssh-keygen -Y check-novalidate: %v\n%s", kind, err, out)
			}
		}
	}
	// A public key file without an agent is refused with a message.
	k := genKey(t, "ed25519")
	file := filepath.Join(t.TempDir(), "f")
	os.WriteFile(file, []byte("x"), 0o600)
	var errb bytes.Buffer
	if code := Keygen([]string{"-Y", "sign", "-n", "git", "-f", k.path + ".pub", file}, func(string) string { return "" }, &errb); code != 255 || !strings.Contains(errb.String(), hubrefs.AgentSocketEnv) {
		t.Fatalf("a public key without an agent: exit %d: %s", code, errb.String())
	}
}

// FuzzKeygenArgs: the argument parser never panics and accepts only sign
// in namespace git with a key and one file.
func FuzzKeygenArgs(f *testing.F) {
	f.Add("-Y\x00sign\x00-n\x00git\x00-f\x00/k\x00/f")
	f.Fuzz(func(t *testing.T, s string) {
		r, err := ParseKeygenArgs(strings.Split(s, "\x00"))
		if err == nil && (r.Namespace != "git" || r.KeyFile == "" || r.File == "") {
			t.Fatalf("accepted %q as %+v", s, r)
		}
	})
}
