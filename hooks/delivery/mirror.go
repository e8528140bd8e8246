package delivery

// Mirrors (docs/delivery.md).
//
// Decisions:
//   - Every push sends everything, not what changed, in two git pushes per
//     remote: first `refs/hub/*:refs/hub/*` (not forced: hub refs only grow,
//     so a mirror whose record diverged refuses rather than loses records),
//     then `--prune +refs/heads/*:refs/heads/*` (forced and pruned: branches
//     such as candidate branches are force-moved and deleted, and the mirror
//     converges to exactly this repository's branches). Records go first and a
//     failed record push skips the branches, so a mirror never holds a branch
//     without the records that explain it. Hub refs are never pruned.
//   - Each remote has its own bound (timeout_seconds, default 20 s) covering
//     both pushes; git runs in its own process group, which is killed when
//     the bound passes. GIT_TERMINAL_PROMPT=0: a mirror never waits for a
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

	"github.com/gitplus/gitplus/hooks/wake"
	"github.com/gitplus/gitplus/receive/gitio"
)

// ErrMirror reports a mirror push that failed or timed out.
var ErrMirror = errors.New("mirror push failed")

// PushMirror pushes every refs/hub/* and refs/heads/* ref of gitDir to r.
func PushMirror(ctx context.Context, gitDir string, r Remote, environ []string) error {
	ctx, cancel := context.WithTimeout(ctx, seconds(r.TimeoutSeconds, DefaultMirrorTimeout))
	defer cancel()
	env := wake.ChildEnv(environ, nil, "GIT_TERMINAL_PROMPT=0")
	// Signed with the server's key when one is configured (hooks/wake/serverkey.go).
	global, signed := wake.ServerSigning(gitDir)
	steps := [][]string{
		slices.Concat(global, []string{"push", "--quiet"}, signed, []string{r.URL, "refs/hub/*:refs/hub/*"}),
		slices.Concat(global, []string{"push", "--quiet", "--prune"}, signed, []string{r.URL, "+refs/heads/*:refs/heads/*"}),
	}
	for i, args := range steps {
		// git refuses a glob that matches nothing ("No refs in common"):
		// a namespace this repository does not hold yet is skipped.
		ns := []string{"refs/hub/", "refs/heads/"}[i]
		if refs, err := gitio.ReadRefsUnder(gitDir, []string{ns}, nil); err == nil && len(refs) == 0 {
			continue
		}
		if err := runGit(ctx, gitDir, env, args...); err != nil {
			return fmt.Errorf("mirror %s (%s): git %s: %w", r.Name, r.URL, strings.Join(args[len(global)+2:], " "), err)
		}
	}
	return nil
}

// runGit runs git in gitDir in its own process group, killing the group
// when ctx ends.
func runGit(ctx context.Context, gitDir string, env []string, args ...string) error {
	cmd := exec.CommandContext(ctx, "git", append([]string{"--git-dir=" + gitDir}, args...)...)
	cmd.Dir = gitDir
	cmd.Env = env
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 2 * time.Second
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	if ctx.Err() != nil {
		return fmt.Errorf("%w after %s (%v): %s", ErrMirror, "the time bound", ctx.Err(), clip(out.String()))
	}
	if err != nil {
		return fmt.Errorf("%w: %v: %s", ErrMirror, err, clip(out.String()))
	}
	return nil
}

func clip(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 400 {
		s = s[:400] + "…"
	}
	return s
}
