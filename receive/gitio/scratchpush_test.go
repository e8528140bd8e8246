package gitio

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/gitplus/gitplus/fixtures"
)

// TestPushScratch: objects pushed from a scratch repository reach the
// target only through receive-pack: a push its hook refuses leaves the
// target's object directory exactly as it was, an accepted one lands the
// commit on top of one the target already holds (read through the
// alternate), and no scratch repository is left behind.
func TestPushScratch(t *testing.T) {
	tmp := t.TempDir() // scratch repositories go here, and only this test's
	t.Setenv("TMPDIR", tmp)
	dir := t.TempDir()
	repo := filepath.Join(dir, "r.git")
	fixtures.GitRaw(t, dir, nil, "init", "-q", "--bare", repo)
	emptyTree, err := WriteLooseObject(repo, plumbing.TreeObject, nil)
	if err != nil {
		t.Fatal(err)
	}
	commit := func(parent plumbing.Hash, msg string) []byte {
		p := ""
		if !parent.IsZero() {
			p = "parent " + parent.String() + "\n"
		}
		return []byte(fmt.Sprintf("tree %s\n%sauthor A <a@x> 1700000000 +0000\ncommitter A <a@x> 1700000000 +0000\n\n%s\n", emptyTree, p, msg))
	}
	base, err := WriteLooseObject(repo, plumbing.CommitObject, commit(plumbing.ZeroHash, "base"))
	if err != nil {
		t.Fatal(err)
	}
	fixtures.GitRaw(t, repo, nil, "update-ref", "refs/heads/x", base.String())
	snapshot := func() string {
		var lines []string
		filepath.WalkDir(filepath.Join(repo, "objects"), func(p string, d fs.DirEntry, err error) error {
			if err == nil {
				lines = append(lines, strings.TrimPrefix(p, repo))
			}
			return nil
		})
		sort.Strings(lines)
		return strings.Join(lines, "\n")
	}
	scratches := func() []string {
		m, _ := filepath.Glob(filepath.Join(tmp, "gitplus-push-*"))
		return m
	}
	hook := filepath.Join(repo, "hooks", "pre-receive")
	next := commit(base, "next")
	id := plumbing.ComputeHash(plumbing.CommitObject, next)
	push := func() error {
		ids, _, err := PushScratch(context.Background(), repo, []ScratchObject{{Type: plumbing.CommitObject, Content: next}},
			PushOptions{Updates: []PushUpdate{{Ref: "refs/heads/x", Old: base, New: id}}})
		if len(ids) != 1 || ids[0] != id {
			t.Fatalf("PushScratch gave ids %v, want [%s]", ids, id)
		}
		return err
	}

	before := snapshot()
	if err := os.WriteFile(hook, []byte("#!/bin/sh\ncat >/dev/null\necho 'git+: refused refs/heads/x: [no] no' >&2\nexit 1\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := push(); !errors.Is(err, ErrPushRefused) {
		t.Fatalf("a refused push: %v", err)
	}
	if after := snapshot(); after != before {
		t.Fatalf("a refused push changed the object directory:\n%s\n---\n%s", before, after)
	}
	os.Remove(hook)
	if err := push(); err != nil {
		t.Fatalf("an accepted push: %v", err)
	}
	if got := strings.TrimSpace(fixtures.GitRaw(t, repo, nil, "rev-parse", "refs/heads/x")); got != id.String() {
		t.Fatalf("refs/heads/x at %s, want %s", got, id)
	}
	if _, err := os.Stat(filepath.Join(repo, "objects", id.String()[:2], id.String()[2:])); err != nil {
		t.Fatalf("the pushed commit is not in the target: %v", err)
	}
	if left := scratches(); len(left) > 0 {
		t.Fatalf("scratch repositories left behind: %v", left)
	}
}
