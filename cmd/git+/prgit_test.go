package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/gitplus/gitplus/fixtures"
)

// TestHeadOnRemote: a head is on the remote when a remote ref is it or
// contains it; commits this repository lacks and hub refs are ignored.
func TestHeadOnRemote(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "r")
	fixtures.Git(t, filepath.Dir(dir), "init", "-q", "-b", "main", dir)
	commit := func(name string) string {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(name), 0o644); err != nil {
			t.Fatal(err)
		}
		fixtures.Git(t, dir, "add", name)
		fixtures.Git(t, dir, "commit", "-q", "-m", name)
		return fixtures.Git(t, dir, "rev-parse", "HEAD")
	}
	a := commit("a")
	b := commit("b")
	fixtures.Git(t, dir, "checkout", "-q", "-b", "side", a)
	c := commit("c")
	missing := "0123456789012345678901234567890123456789"
	h := &hubRepo{GitDir: filepath.Join(dir, ".git")}
	cases := []struct {
		name string
		head string
		refs map[string]string
		want bool
	}{
		{"a ref is the head", c, map[string]string{"refs/heads/x": c}, true},
		{"a ref contains it", a, map[string]string{"refs/heads/main": b}, true},
		{"only a sibling", c, map[string]string{"refs/heads/main": b}, false},
		{"missing commits are skipped", a, map[string]string{"refs/heads/y": missing, "refs/heads/main": b}, true},
		{"only missing", a, map[string]string{"refs/heads/y": missing}, false},
		{"hub refs do not count", a, map[string]string{"refs/hub/pr/x": b}, false},
		{"no refs", a, map[string]string{}, false},
	}
	for _, tc := range cases {
		if got := h.headOnRemote(tc.head, tc.refs); got != tc.want {
			t.Errorf("%s: headOnRemote = %v, want %v", tc.name, got, tc.want)
		}
	}
}
