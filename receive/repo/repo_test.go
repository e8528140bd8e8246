package repo

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gitplus/gitplus/fixtures"
)

func TestMatchPrefix(t *testing.T) {
	ids := []string{
		"01a23af3-1111-7000-8000-000000000001",
		"01a23af3-1112-7000-8000-000000000002",
		"01a23af4-0000-7000-8000-000000000003",
	}
	cases := []struct {
		prefix string
		want   string
		err    error
	}{
		{"01a23af4", ids[2], nil},
		{"01a23af3-1111", ids[0], nil},
		{ids[1], ids[1], nil},
		{"01a23af3", "", ErrAmbiguousID},
		{"01a2", "", ErrAmbiguousID},
		{"ffff", "", ErrUnknownID},
	}
	for _, tc := range cases {
		got, err := MatchPrefix(ids, tc.prefix, "pull request", "repo.git")
		if !errors.Is(err, tc.err) || got != tc.want {
			t.Errorf("MatchPrefix(%q) = %q, %v; want %q, %v", tc.prefix, got, err, tc.want, tc.err)
		}
		if errors.Is(err, ErrAmbiguousID) && (!strings.Contains(err.Error(), ids[0]) || !strings.Contains(err.Error(), ids[1])) {
			t.Errorf("ambiguity %q does not list the matches", err)
		}
	}
}

func TestValidPrefix(t *testing.T) {
	for s, ok := range map[string]bool{
		"01a2": true, "01A2-b": true, "01a": false, "": false, "01a2x": false, "../x": false,
		"01a23af3-1111-7000-8000-0000000000011": false, // longer than a UUID
	} {
		if err := ValidPrefix(s); (err == nil) != ok {
			t.Errorf("ValidPrefix(%q) = %v, want ok=%v", s, err, ok)
		}
	}
}

// FuzzMatchPrefix: a match is one of the ids and starts with the prefix;
// no match or an ambiguity is an error.
func FuzzMatchPrefix(f *testing.F) {
	f.Add("01a2", "01a23af3-1111-7000-8000-000000000001", "01a23af4-0000-7000-8000-000000000003")
	f.Fuzz(func(t *testing.T, p, a, b string) {
		got, err := MatchPrefix([]string{a, b}, p, "queue", "x")
		if err != nil {
			return
		}
		if got != a && got != b || !strings.HasPrefix(got, p) {
			t.Fatalf("MatchPrefix(%q) = %q", p, got)
		}
		if a != b && strings.HasPrefix(a, p) && strings.HasPrefix(b, p) {
			t.Fatalf("MatchPrefix(%q) picked %q of two matches", p, got)
		}
	})
}

func TestDefaultAdminName(t *testing.T) {
	for in, want := range map[string]string{
		"alice@laptop": "alice", "ci-bot": "ci-bot", "": "admin", "two words": "admin", "@x": "admin",
	} {
		if got := DefaultAdminName(in); got != want {
			t.Errorf("DefaultAdminName(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestBranchRef(t *testing.T) {
	for in, want := range map[string]string{"main": "refs/heads/main", "refs/heads/rel/1": "refs/heads/rel/1", "a/b": "refs/heads/a/b"} {
		if got, err := BranchRef(in); err != nil || got != want {
			t.Errorf("BranchRef(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "refs/tags/v1", "a..b", "refs/heads/x y"} {
		if got, err := BranchRef(bad); err == nil {
			t.Errorf("BranchRef(%q) = %q, want an error", bad, got)
		}
	}
}

func TestReadKeyArg(t *testing.T) {
	dir := t.TempDir()
	k := fixtures.NewKey(t, dir, "k")
	for name, arg := range map[string]string{
		"line":         k.Authorized,
		"line+comment": k.Authorized + " k@host",
		"pub file":     k.Path + ".pub",
		"private file": k.Path,
	} {
		got, err := ReadKeyArg(arg)
		if err != nil || got != k.Authorized {
			t.Errorf("%s: ReadKeyArg = %q, %v; want %q", name, got, err, k.Authorized)
		}
	}
	junk := filepath.Join(dir, "junk.pub")
	if err := os.WriteFile(junk, []byte("not a key\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{"", "ssh-ed25519 AAAA!!", junk, filepath.Join(dir, "absent.pub"), "ssh-dss AAAAB3NzaC1kc3MAAACBAP"} {
		if got, err := ReadKeyArg(bad); err == nil {
			t.Errorf("ReadKeyArg(%q) = %q, want an error", bad, got)
		}
	}
}

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
	h := &Repo{GitDir: filepath.Join(dir, ".git")}
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
		if got := h.HeadOnRemote(tc.head, tc.refs); got != tc.want {
			t.Errorf("%s: HeadOnRemote = %v, want %v", tc.name, got, tc.want)
		}
	}
}
