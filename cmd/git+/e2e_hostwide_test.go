package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestHostWideHook: git+'s hooks serving every repository of a host (one
// hooks directory for all, as core.hooksPath or a host's common hooks give
// them) pass a repository git+ never initialised untouched, and still
// refuse everything in one git+ initialised whose trust log is gone
// (docs/operating.md "A hook for every repository").
func TestHostWideHook(t *testing.T) {
	t.Parallel()
	w := newE2E(t, nil)
	hooksDir := filepath.Join(w.origin, "hooks")
	c := w.commit(nil, map[string]string{"a.txt": "a\n"}, "one")

	plain := filepath.Join(t.TempDir(), "plain.git")
	w.git(filepath.Dir(plain), "init", "-q", "--bare", plain)
	w.git(plain, "config", "core.hooksPath", hooksDir)
	w.signPushes(w.work, "")
	if out, err := w.push(plain, c+":refs/heads/main"); err != nil || !strings.Contains(out, "refs/heads/main") {
		t.Fatalf("a push into a repository git+ never initialised, under git+'s hooks: %v\n%s", err, out)
	}
	if got := w.git(plain, "rev-parse", "refs/heads/main"); got != c {
		t.Fatalf("main = %s, want %s", got, c)
	}

	// git+ initialised this one: without its trust log it fails closed.
	if got := w.git(w.origin, "config", "gitplus.initialized"); got != "true" {
		t.Fatalf("git+ init left gitplus.initialized = %q", got)
	}
	w.git(w.origin, "update-ref", "-d", "refs/hub/trust")
	w.signPushes(w.work, "admin")
	w.expectRefused(t, "refs/heads/feature", "no-trust", w.origin, c+":refs/heads/feature")
}
