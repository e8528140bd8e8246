package gitio

// Reading another repository's refs, fetching from it, and moving a local
// ref: the git processes around a push (push.go). Each runs the real git
// binary with the caller's extra environment added to this process's.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
)

// RunGit runs git with args (the caller gives --git-dir when it needs one)
// in dir ("" for this process's working directory), with extra added to
// this process's environment, and returns its standard output and error.
func RunGit(ctx context.Context, dir string, extra []string, args ...string) (stdout, stderr []byte, err error) {
	cmd := exec.CommandContext(ctx, "git", args...)
	cmd.Dir = dir
	if len(extra) > 0 {
		cmd.Env = append(os.Environ(), extra...)
	}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err = cmd.Run()
	return out.Bytes(), errb.Bytes(), err
}

// Fetch fetches refspecs from remote into gitDir (quietly, no tags, no
// FETCH_HEAD). A fetch refused because a ref moved while it ran ("not our
// ref": over HTTP the refs are listed in one request and the wants served
// in the next, and a ref rewritten in between, such as the server's status
// ref, leaves the listed commit reachable from no ref) is tried again with
// the refs read afresh, up to fetchAttempts times in all.
func Fetch(ctx context.Context, gitDir, remote string, env []string, refspecs ...string) error {
	args := append([]string{"--git-dir=" + gitDir, "fetch", "--quiet", "--no-tags", "--no-write-fetch-head", remote}, refspecs...)
	for attempt := 1; ; attempt++ {
		_, errb, err := RunGit(ctx, "", env, args...)
		if err == nil {
			return nil
		}
		if attempt >= fetchAttempts || !movedTip(errb) || ctx.Err() != nil {
			return fmt.Errorf("git fetch %s %s into %s: %w: %s", remote, strings.Join(refspecs, " "), gitDir, err, bytes.TrimSpace(errb))
		}
		select {
		case <-ctx.Done():
		case <-time.After(time.Duration(attempt) * 20 * time.Millisecond):
		}
	}
}

// fetchAttempts bounds Fetch's attempts when refs move under it.
const fetchAttempts = 5

// movedTip reports whether git fetch's standard error says the remote
// refused a want that is no longer one of its tips.
func movedTip(stderr []byte) bool {
	return bytes.Contains(stderr, []byte("not our ref"))
}

// LsRemote lists the refs of remote matching patterns (git ls-remote
// --refs: no peeled tags, no HEAD), as seen from gitDir (whose remotes and
// configuration name it).
func LsRemote(ctx context.Context, gitDir, remote string, env []string, patterns ...string) (map[string]plumbing.Hash, error) {
	args := append([]string{"--git-dir=" + gitDir, "ls-remote", "--refs", remote}, patterns...)
	out, errb, err := RunGit(ctx, "", env, args...)
	if err != nil {
		return nil, fmt.Errorf("git ls-remote %s %s: %w: %s", remote, strings.Join(patterns, " "), err, bytes.TrimSpace(errb))
	}
	return ParseLsRemote(out), nil
}

// ParseLsRemote reads `git ls-remote`'s output ("<id>\t<ref>" lines) into
// the refs it lists.
func ParseLsRemote(out []byte) map[string]plumbing.Hash {
	refs := map[string]plumbing.Hash{}
	for _, line := range strings.Split(string(out), "\n") {
		if f := strings.Fields(line); len(f) == 2 && plumbing.IsHash(f[0]) {
			refs[f[1]] = plumbing.NewHash(f[0])
		}
	}
	return refs
}

// RemoteRef reads ref at remote as gitDir sees it: "." is gitDir itself,
// read from its files (ReadRef); another remote through ls-remote. A ref
// that does not exist is the zero id.
func RemoteRef(ctx context.Context, gitDir, remote, ref string, env []string) (plumbing.Hash, error) {
	if remote == "" || remote == "." {
		id, err := ReadRef(gitDir, ref)
		if errors.Is(err, plumbing.ErrReferenceNotFound) {
			return plumbing.ZeroHash, nil
		}
		return id, err
	}
	refs, err := LsRemote(ctx, gitDir, remote, env, ref)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	return refs[ref], nil // the pattern may match refs ending in it too
}

// UpdateRef sets gitDir's ref to id through git update-ref (git's lock file
// and reflog; packed refs updated as git does).
func UpdateRef(ctx context.Context, gitDir, ref string, id plumbing.Hash, env []string) error {
	if _, errb, err := RunGit(ctx, "", env, "--git-dir="+gitDir, "update-ref", ref, id.String()); err != nil {
		return fmt.Errorf("git update-ref %s %s in %s: %w: %s", ref, id, gitDir, err, bytes.TrimSpace(errb))
	}
	return nil
}

// SwapRef moves gitDir's ref from old to new through git update-ref, which
// checks old under git's lock file: old zero means the ref must not exist
// yet, new zero deletes it. A ref that is not at old is an error wrapping
// ErrPushStale (the same lost race as a push's), naming both values.
func SwapRef(ctx context.Context, gitDir, ref string, old, new plumbing.Hash, env []string) error {
	args := []string{"--git-dir=" + gitDir, "update-ref", ref, new.String(), old.String()}
	if new.IsZero() {
		args = []string{"--git-dir=" + gitDir, "update-ref", "-d", ref, old.String()}
		if old.IsZero() {
			return fmt.Errorf("deleting %s in %s: no expected value given: %w", ref, gitDir, ErrPushFailed)
		}
	}
	if _, errb, err := RunGit(ctx, "", env, args...); err != nil {
		cur, rerr := RemoteRef(ctx, gitDir, ".", ref, env)
		if rerr == nil && cur != old {
			return fmt.Errorf("moving %s in %s from %s: it is at %s: read it again: %w", ref, gitDir, old, cur, ErrPushStale)
		}
		return fmt.Errorf("git update-ref %s %s %s in %s: %w: %s", ref, new, old, gitDir, err, bytes.TrimSpace(errb))
	}
	return nil
}
