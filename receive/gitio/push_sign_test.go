package gitio

import (
	"strings"
	"testing"
)

// TestPushSigningArgs: signing sets git's options on its command line only,
// and nothing without a key.
func TestPushSigningArgs(t *testing.T) {
	var none *PushSigning
	if a := none.args(); a != nil {
		t.Fatalf("nil signing: %q", a)
	}
	a := (&PushSigning{Key: "/k", Program: "/bin/gp"}).args()
	want := "-c gpg.format=ssh -c user.signingKey=/k -c gpg.ssh.program=/bin/gp"
	if strings.Join(a, " ") != want {
		t.Fatalf("args %q, want %q", a, want)
	}
}

// TestOnlyCertReplay: only a push whose every refusal is a reused
// certificate counts as stale.
func TestOnlyCertReplay(t *testing.T) {
	replay := "git+: refused refs/heads/x: [push-cert-nonce] this push certificate was used before (a replay); sign a new push (git push --signed)"
	for _, c := range []struct {
		lines []string
		want  bool
	}{
		{nil, false},
		{[]string{replay}, true},
		{[]string{replay, replay}, true},
		{[]string{replay, "git+: refused refs/heads/y: [not-member] ..."}, false},
		{[]string{"git+: refused refs/heads/x: [push-cert-nonce] the push certificate's nonce status is \"BAD\""}, false},
	} {
		if got := onlyCertReplay(c.lines); got != c.want {
			t.Errorf("%q: %v, want %v", c.lines, got, c.want)
		}
	}
}
