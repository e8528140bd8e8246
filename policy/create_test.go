package policy

import (
	"testing"

	"github.com/go-git/go-git/v5/plumbing"
)

// TestCreateProtectedFromContained: a branch matching a protected glob can be
// created at a commit an existing protected branch contains, and at nothing
// else without a pull request (docs/boundary.md).
func TestCreateProtectedFromContained(t *testing.T) {
	w := newWorld(t, `{"protected": {"refs/heads/main": {"requiredApprovals": 1, "requiredChecks": ["ci"]},
		"refs/heads/release/*": {"requiredApprovals": 1, "requiredChecks": ["ci"]},
		"refs/heads/signed/*": {"requireProvenance": true}}}`)
	c1 := w.commit(w.c0, "a.txt", "a\n")
	w.refs[main] = c1
	unlanded := w.commit(c1, "b.txt", "b\n")
	const rel1, rel2 = "refs/heads/release/1", "refs/heads/release/2"
	for _, tc := range []struct {
		name string
		ref  string
		new  plumbing.Hash
		code string
	}{
		{"at main's tip", rel1, c1, ""},
		{"at an older commit of main", rel1, w.c0, ""},
		{"at a commit main does not contain", rel1, unlanded, CodeNotAPRHead},
		{"provenance branch from a branch without provenance", "refs/heads/signed/x", c1, CodeNotAPRHead},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := w.judge1(Update{Ref: tc.ref, New: tc.new})
			if v.Code != tc.code {
				t.Fatalf("creating %s at %s: got [%s] %s, want [%s]", tc.ref, short(tc.new), v.Code, v.Reason, tc.code)
			}
		})
	}
	// Once release/1 exists, release/2 may be cut from it too.
	w.refs[rel1] = w.c0
	if v := w.judge1(Update{Ref: rel2, New: w.c0}); v.Code != "" {
		t.Fatalf("creating %s from %s: [%s] %s", rel2, rel1, v.Code, v.Reason)
	}
	// Updating an existing protected branch still needs a pull request.
	if v := w.judge1(Update{Ref: rel1, Old: w.c0, New: c1}); v.Code != CodeNotAPRHead {
		t.Fatalf("moving %s to a commit of main: got [%s] %s, want not-a-pr-head", rel1, v.Code, v.Reason)
	}
}
