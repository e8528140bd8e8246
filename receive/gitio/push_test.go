package gitio

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/matryer/is"

	"github.com/gitplus/gitplus/fixtures"
)

func TestHookLines(t *testing.T) {
	is := is.New(t)
	stderr := "remote: git+: refused refs/hub/a: [x] not OK        \n" +
		"remote: git+: refused refs/hub/b: [y] why\x1b[K\n" +
		"remote: other\nerror: failed to push some refs to '.'\n" +
		"git+: refused refs/hub/c: [z] local\n"
	is.Equal(HookLines([]byte(stderr)), []string{
		"git+: refused refs/hub/a: [x] not OK",
		"git+: refused refs/hub/b: [y] why",
		"git+: refused refs/hub/c: [z] local",
	})
	got := parsePorcelain([]byte("To .\n!\tabc:refs/hub/x\t[rejected] (stale info)\nDone\n"))
	is.Equal(got["refs/hub/x"], RefResult{Ref: "refs/hub/x", Flag: '!', Status: "[rejected] (stale info)"})
	_, ok := parsePorcelain([]byte("To .\n*\tabc:refs/hub/xy\t[new reference]\n"))["refs/hub/x"]
	is.True(!ok)
}

func TestOnlyMoved(t *testing.T) {
	cases := []struct {
		lines []string
		want  bool
	}{
		{nil, false},
		{[]string{"git+: refused refs/hub/trust: [ref-moved] refs/hub/trust is at 1234, not 5678 as the push expects"}, true},
		{[]string{"git+: refused refs/hub/trust: [ref-moved] x", "git+: refused refs/heads/main: [not-approved] y"}, false},
		{[]string{"git+: refused refs/hub/trust: [not-member] z"}, false},
	}
	for i, c := range cases {
		if got := OnlyMoved(c.lines); got != c.want {
			t.Errorf("case %d: OnlyMoved = %v, want %v", i, got, c.want)
		}
	}
}

// TestPushOutcomes drives the one push client into a real bare repository
// and checks each outcome's classification: a move, a lost lease, an atomic
// pair, a hook's refusal with its lines, a hook that refuses only because a
// ref moved (a lost race), and a push killed in transport (outcome
// unknown). Every case checks the refs afterwards.
func TestPushOutcomes(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	repo := filepath.Join(dir, "r.git")
	fixtures.GitRaw(t, dir, nil, "init", "-q", "--bare", repo)
	blob := func(s string) plumbing.Hash {
		h, err := WriteLooseObject(repo, plumbing.BlobObject, []byte(s))
		if err != nil {
			t.Fatal(err)
		}
		return h
	}
	tree := func(b plumbing.Hash) plumbing.Hash {
		h, err := WriteLooseObject(repo, plumbing.TreeObject, append([]byte("100644 f\x00"), b[:]...))
		if err != nil {
			t.Fatal(err)
		}
		return h
	}
	commit := func(msg string) plumbing.Hash {
		raw := fmt.Sprintf("tree %s\nauthor A <a@x> 1700000000 +0000\ncommitter A <a@x> 1700000000 +0000\n\n%s\n", tree(blob(msg)), msg)
		h, err := WriteLooseObject(repo, plumbing.CommitObject, []byte(raw))
		if err != nil {
			t.Fatal(err)
		}
		return h
	}
	hook := func(script string) {
		path := filepath.Join(repo, "hooks", "pre-receive")
		if script == "" {
			os.Remove(path)
			return
		}
		if err := os.WriteFile(path, []byte("#!/bin/sh\ncat >/dev/null\n"+script), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	ref := func(name string) plumbing.Hash {
		h, err := RemoteRef(context.Background(), repo, ".", name, nil)
		if err != nil {
			t.Fatal(err)
		}
		return h
	}
	push := func(ups ...PushUpdate) (PushResult, error) {
		return Push(context.Background(), PushOptions{GitDir: repo, Updates: ups})
	}
	a, b, c := commit("a"), commit("b"), commit("c")

	// A new ref and a move, each with its expected old value.
	if res, err := push(PushUpdate{Ref: "refs/heads/x", New: a}); err != nil || len(res.Refs) != 1 || res.Refs[0].Flag != '*' {
		t.Fatalf("create: %+v, %v", res, err)
	}
	if _, err := push(PushUpdate{Ref: "refs/heads/x", Old: a, New: b}); err != nil || ref("refs/heads/x") != b {
		t.Fatalf("move: %v, at %s", err, ref("refs/heads/x"))
	}
	// A lease that no longer holds: stale, nothing moved.
	if _, err := push(PushUpdate{Ref: "refs/heads/x", Old: a, New: c}); !errors.Is(err, ErrPushStale) || ref("refs/heads/x") != b {
		t.Fatalf("stale lease: %v, at %s", err, ref("refs/heads/x"))
	}
	// A ref that must not exist yet, but does.
	if _, err := push(PushUpdate{Ref: "refs/heads/x", New: c}); !errors.Is(err, ErrPushStale) || ref("refs/heads/x") != b {
		t.Fatalf("create over an existing ref: %v, at %s", err, ref("refs/heads/x"))
	}
	// Atomic: one stale lease keeps the other ref where it was.
	if _, err := push(PushUpdate{Ref: "refs/heads/x", Old: a, New: c}, PushUpdate{Ref: "refs/heads/y", New: c}); !errors.Is(err, ErrPushStale) || !ref("refs/heads/y").IsZero() {
		t.Fatalf("atomic: %v, y at %s", err, ref("refs/heads/y"))
	}

	// The hook refuses: its lines come back, "remote: " removed.
	hook("echo 'git+: refused refs/heads/x: [not-approved] no review' >&2\necho noise >&2\nexit 1\n")
	_, err := push(PushUpdate{Ref: "refs/heads/x", Old: b, New: c})
	var refused *PushRefusedError
	if !errors.As(err, &refused) || !errors.Is(err, ErrPushRefused) || errors.Is(err, ErrPushStale) ||
		len(refused.Lines) != 1 || refused.Lines[0] != "git+: refused refs/heads/x: [not-approved] no review" ||
		refused.Status != "pre-receive hook declined" || ref("refs/heads/x") != b {
		t.Fatalf("hook refusal: %#v, %v", refused, err)
	}
	// The hook refuses only because the ref moved: a lost race.
	hook("echo 'git+: refused refs/heads/x: [ref-moved] refs/heads/x is at 1, not 2 as the push expects' >&2\nexit 1\n")
	if _, err := push(PushUpdate{Ref: "refs/heads/x", Old: b, New: c}); !errors.Is(err, ErrPushStale) || errors.Is(err, ErrPushRefused) {
		t.Fatalf("ref-moved refusal: %v", err)
	}
	// receive-pack dies mid-push (as on a dropped connection): git reports
	// no ref, so the outcome is unknown.
	hook("kill -9 $PPID\nexit 0\n")
	if _, err := push(PushUpdate{Ref: "refs/heads/x", Old: b, New: c}); !errors.Is(err, ErrPushTransport) || !errors.Is(err, ErrPushFailed) || errors.Is(err, ErrPushStale) {
		t.Fatalf("killed push: %v", err)
	}
	hook("")
	if _, err := push(PushUpdate{Ref: "refs/heads/x", Old: b}); err != nil || !ref("refs/heads/x").IsZero() {
		t.Fatalf("delete: %v, at %s", err, ref("refs/heads/x"))
	}
}

// TestSwapRef: a local compare-and-swap of one ref through git's lock
// file: create (must not exist), move, a lost race, delete.
func TestSwapRef(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	repo := filepath.Join(dir, "r.git")
	fixtures.GitRaw(t, dir, nil, "init", "-q", "--bare", repo)
	ctx := context.Background()
	commit := func(msg string) plumbing.Hash {
		raw := "tree 4b825dc642cb6eb9a060e54bf8d69288fbee4904\nauthor A <a@x> 1700000000 +0000\ncommitter A <a@x> 1700000000 +0000\n\n" + msg + "\n"
		if _, err := WriteLooseObject(repo, plumbing.TreeObject, nil); err != nil {
			t.Fatal(err)
		}
		h, err := WriteLooseObject(repo, plumbing.CommitObject, []byte(raw))
		if err != nil {
			t.Fatal(err)
		}
		return h
	}
	at := func() plumbing.Hash {
		h, err := RemoteRef(ctx, repo, ".", "refs/hub/trust", nil)
		if err != nil {
			t.Fatal(err)
		}
		return h
	}
	a, b := commit("a"), commit("b")
	if err := SwapRef(ctx, repo, "refs/hub/trust", plumbing.ZeroHash, a, nil); err != nil || at() != a {
		t.Fatalf("create: %v, at %s", err, at())
	}
	if err := SwapRef(ctx, repo, "refs/hub/trust", plumbing.ZeroHash, b, nil); !errors.Is(err, ErrPushStale) || at() != a {
		t.Fatalf("create over an existing ref: %v, at %s", err, at())
	}
	if err := SwapRef(ctx, repo, "refs/hub/trust", b, a, nil); !errors.Is(err, ErrPushStale) || at() != a {
		t.Fatalf("stale move: %v, at %s", err, at())
	}
	if err := SwapRef(ctx, repo, "refs/hub/trust", a, b, nil); err != nil || at() != b {
		t.Fatalf("move: %v, at %s", err, at())
	}
	if err := SwapRef(ctx, repo, "refs/hub/trust", b, plumbing.ZeroHash, nil); err != nil || !at().IsZero() {
		t.Fatalf("delete: %v, at %s", err, at())
	}
}
