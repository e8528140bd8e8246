package delivery

// Mirrors (docs/delivery.md).
//
// Decisions:
//   - Every push sends everything, not what changed, in one atomic git push
//     per remote: `refs/hub/*:refs/hub/*` (not forced: hub refs only grow,
//     so a mirror whose record diverged refuses rather than loses records)
//     with `+refs/heads/*:refs/heads/*` (forced: branches such as candidate
//     branches are force-moved), plus a deletion of every branch the mirror
//     holds (`git ls-remote --heads`, read just before) that this
//     repository does not: the mirror converges to exactly this
//     repository's branches. Hub refs are never pruned.
//   - One push, atomic, so that a mirror never holds a branch without the
//     records that explain it (a refused record refuses the branches with
//     it) and a mirror running git+'s own hooks judges a landing together
//     with the records that justify it: records pushed first, alone, carry
//     a pr.merged naming a commit its main does not hold yet, which such a
//     hook refuses (merged-not-landed), and the mirror never caught up.
//     `--prune` cannot be used: it would prune hub refs too. A mirror
//     that runs git+'s hooks still refuses a sync carrying a pull request's
//     whole life (opened, landed, merged) at once: the error says how to
//     catch it up (hookedMirrorHint).
//   - Each remote has its own bound (timeout_seconds, default 20 s) covering
//     the ls-remote and the push; git runs in its own process group, which
//     is killed when the bound passes. GIT_TERMINAL_PROMPT=0: a mirror never waits for a
//     password.
//   - The push runs with the hook's environment minus what describes the
//     push being received (see wake.ChildEnv), so no push option and no pusher
//     identity reaches a mirror. With gitplus.serverKey set, both pushes are
//     signed with that key (hooks/wake/serverkey.go).

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/gitplus/gitplus/hooks/wake"
	"github.com/gitplus/gitplus/receive/gitio"
)

// hookedMirrorHint follows a mirror push that git+'s hooks on the mirror
// refused (docs/delivery.md, "A mirror that runs git+'s hooks").
const hookedMirrorHint = "the mirror runs git+'s hooks, which judge a sync like any push: one that carries a pull request opened and landed since the mirror last took a sync cannot pass there; catch the mirror up from its side with git fetch <this repository> '+refs/hub/*:refs/hub/*' '+refs/heads/*:refs/heads/*' (a fetch is not judged), or run it without git+'s hooks"

// ErrMirror reports a mirror push that failed or timed out.
var ErrMirror = errors.New("mirror push failed")

// PushMirror pushes every refs/hub/* and refs/heads/* ref of gitDir to r.
func PushMirror(ctx context.Context, gitDir string, r Remote, environ []string) error {
	ctx, cancel := context.WithTimeout(ctx, seconds(r.TimeoutSeconds, DefaultMirrorTimeout))
	defer cancel()
	env := wake.ChildEnv(environ, nil, "GIT_TERMINAL_PROMPT=0")
	// Signed with the server's key when one is configured (hooks/wake/serverkey.go).
	global, signed := wake.ServerSigning(gitDir)
	local, err := gitio.ReadRefsUnder(gitDir, mirroredNamespaces, nil)
	if err != nil {
		return fmt.Errorf("mirror %s (%s): reading the refs to push: %w", r.Name, r.URL, err)
	}
	var hub, heads bool
	for n := range local {
		hub = hub || strings.HasPrefix(n, "refs/hub/")
		heads = heads || strings.HasPrefix(n, "refs/heads/")
	}
	// git refuses a glob that matches nothing ("No refs in common"): a
	// namespace this repository does not hold yet is left out.
	var specs []string
	if hub {
		specs = append(specs, "refs/hub/*:refs/hub/*")
	}
	if heads {
		specs = append(specs, "+refs/heads/*:refs/heads/*")
	}
	ls := slices.Concat(global, []string{"ls-remote", "--heads", r.URL})
	out, err := runGit(ctx, gitDir, env, ls...)
	if err != nil {
		return fmt.Errorf("mirror %s (%s): git ls-remote --heads: %w", r.Name, r.URL, err)
	}
	// A branch deleted here before local was read and created again
	// before the push would get two updates in one push, which git refuses:
	// that sync fails, and the next one (its change recorded) carries it.
	specs = append(specs, staleHeads(out, local)...)
	if len(specs) == 0 {
		return nil
	}
	args := slices.Concat(global, []string{"push", "--quiet", "--atomic"}, signed, []string{r.URL}, specs)
	if _, err := runGit(ctx, gitDir, env, args...); err != nil {
		what := strings.Join(args[len(global)+3:], " ")
		if len(what) > 200 {
			what = what[:200] + "…"
		}
		if strings.Contains(err.Error(), "git+: refused") {
			return fmt.Errorf("mirror %s (%s): git %s: %w (%s)", r.Name, r.URL, what, err, hookedMirrorHint)
		}
		return fmt.Errorf("mirror %s (%s): git %s: %w", r.Name, r.URL, what, err)
	}
	return nil
}

// runGit runs git in gitDir in its own process group, killing the group
// when ctx ends, and returns its standard output; a failure carries what it
// wrote (standard error, then standard output).
func runGit(ctx context.Context, gitDir string, env []string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, "git", append([]string{"--git-dir=" + gitDir}, args...)...)
	cmd.Dir = gitDir
	cmd.Env = env
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 2 * time.Second
	var out, errs bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errs
	err := cmd.Run()
	if ctx.Err() != nil {
		return "", fmt.Errorf("%w after %s (%v): %s", ErrMirror, "the time bound", ctx.Err(), clip(errs.String()+out.String()))
	}
	if err != nil {
		return "", fmt.Errorf("%w: %v: %s", ErrMirror, err, clip(errs.String()+out.String()))
	}
	return out.String(), nil
}

// staleHeads returns a deletion refspec (":<ref>") for every branch in
// lsRemote (`git ls-remote --heads` output) that local does not hold, in
// name order.
func staleHeads(lsRemote string, local map[string]plumbing.Hash) []string {
	var del []string
	for ref := range gitio.ParseLsRemote([]byte(lsRemote)) {
		if _, here := local[ref]; !here && strings.HasPrefix(ref, "refs/heads/") {
			del = append(del, ":"+ref)
		}
	}
	slices.Sort(del)
	return del
}

func clip(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 400 {
		s = s[:400] + "…"
	}
	return s
}
