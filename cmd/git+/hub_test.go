package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"

	"github.com/gitplus/gitplus/fixtures"
)

func TestReorderArgs(t *testing.T) {
	flags := []cli.Flag{
		&cli.StringFlag{Name: "key"},
		&cli.StringSliceFlag{Name: "cap"},
		&cli.BoolFlag{Name: "json"},
		&cli.BoolFlag{Name: "approve"},
	}
	cases := []struct{ in, want string }{
		{"ID --json", "--json -- ID"},
		{"bob --key K --cap a --cap b", "--key K --cap a --cap b -- bob"},
		{"--key=K bob --approve", "--key=K --approve -- bob"},
		{"- --json", "--json -- -"},
		{"ID -- --json", "-- ID --json"},
		{"--json=false ID", "--json=false -- ID"},
		{"", "--"},
	}
	for _, c := range cases {
		got := strings.Join(reorderArgs(flags, strings.Fields(c.in)), " ")
		if got != c.want {
			t.Errorf("reorderArgs(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestDefaultAdminName(t *testing.T) {
	for in, want := range map[string]string{
		"alice@laptop": "alice", "ci-bot": "ci-bot", "": "admin", "two words": "admin", "@x": "admin",
	} {
		if got := defaultAdminName(in); got != want {
			t.Errorf("defaultAdminName(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestBranchRef(t *testing.T) {
	for in, want := range map[string]string{"main": "refs/heads/main", "refs/heads/rel/1": "refs/heads/rel/1", "a/b": "refs/heads/a/b"} {
		if got, err := branchRef(in); err != nil || got != want {
			t.Errorf("branchRef(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "refs/tags/v1", "a..b", "refs/heads/x y"} {
		if got, err := branchRef(bad); err == nil {
			t.Errorf("branchRef(%q) = %q, want an error", bad, got)
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
		got, err := readKeyArg(arg)
		if err != nil || got != k.Authorized {
			t.Errorf("%s: readKeyArg = %q, %v; want %q", name, got, err, k.Authorized)
		}
	}
	junk := filepath.Join(dir, "junk.pub")
	if err := os.WriteFile(junk, []byte("not a key\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{"", "ssh-ed25519 AAAA!!", junk, filepath.Join(dir, "absent.pub"), "ssh-dss AAAAB3NzaC1kc3MAAACBAP"} {
		if got, err := readKeyArg(bad); err == nil {
			t.Errorf("readKeyArg(%q) = %q, want an error", bad, got)
		}
	}
}
