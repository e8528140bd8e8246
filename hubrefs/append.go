package hubrefs

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
)

// AppendOptions says what to append where.
type AppendOptions struct {
	// GitDir is the repository the event object is written into and pushed
	// from (a bare repository, or a work tree's .git; a work tree root is
	// accepted too).
	GitDir string
	// Remote receives the push: "." (default: GitDir itself, through its own
	// receive hooks), a path, a URL or a remote name such as "origin".
	Remote string
	// Ref is the hub ref, e.g. refs/hub/trust.
	Ref string
	// Payload is the typed payload (see MarshalPayload).
	Payload any
	// Signer signs the event; Name is the member name in author/committer.
	Signer Signer
	Name   string
	// Now is the clock (default time.Now).
	Now func() time.Time
	// PushOptions are passed as git push --push-option (the receiver must
	// set receive.advertisePushOptions).
	PushOptions []string
	// Env is added to the environment git runs with (which is inherited).
	Env []string
	// Attempts, when positive, bounds the pushes when the ref keeps moving;
	// zero means no count bound (Patience bounds the time).
	Attempts int
	// Patience bounds the time spent retrying without progress: a push that
	// keeps losing while the ref stands still, or keeps failing in transport
	// (default DefaultPatience). While the ref keeps moving — other writers
	// are landing — retries go on up to MaxPatience (default
	// DefaultMaxPatience), so a writer that lost many races in a row under
	// load is not starved out. Retries back off with jitter, re-reading the
	// tip each time (docs/queue.md, "Concurrent writers").
	Patience time.Duration
	// MaxPatience bounds the whole retrying, moving ref or not.
	MaxPatience time.Duration
	// Clock measures the patience (default time.Now).
	Clock func() time.Time
	// Sleep waits between retries (default time.Sleep).
	Sleep func(time.Duration)
	// Ceilings bound the payload and parents written (defaults as usual).
	Ceilings Ceilings
}

// RefusedError is a push the receiving hook refused.
type RefusedError struct {
	Ref    string
	Status string   // git's status, e.g. "pre-receive hook declined"
	Lines  []string // the hook's "git+: ..." lines, "remote: " prefix removed
}

func (e *RefusedError) Error() string {
	msg := fmt.Sprintf("push of %s refused (%s)", e.Ref, e.Status)
	if len(e.Lines) > 0 {
		msg += ": " + strings.Join(e.Lines, "; ")
	}
	return msg
}

// Is makes errors.Is(err, ErrRefused) hold.
func (e *RefusedError) Is(target error) bool { return target == ErrRefused }

// Append writes a new event on top of Ref's current value (or as a root when
// the ref does not exist) into GitDir and pushes it to Remote with the old
// value as the expected one (compare-and-swap), so the receive hooks judge
// it. When the push loses a race it fetches the ref (remotes other than
// "."), rebuilds the event on the new tip and tries again, up to Attempts
// times; then ErrStale. A hook refusal is *RefusedError (ErrRefused). It
// returns the id of the event that landed.
func Append(ctx context.Context, o AppendOptions) (plumbing.Hash, error) {
	if o.Remote == "" {
		o.Remote = "."
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Patience <= 0 {
		o.Patience = DefaultPatience
	}
	if o.MaxPatience <= 0 {
		o.MaxPatience = DefaultMaxPatience
	}
	if o.MaxPatience < o.Patience {
		o.MaxPatience = o.Patience
	}
	if o.Sleep == nil {
		o.Sleep = time.Sleep
	}
	if o.Clock == nil {
		o.Clock = time.Now
	}
	start := o.Clock()
	progress := start // when the ref was last seen to move
	var seen plumbing.Hash
	transport := 1
	c := o.Ceilings.norm()
	if !strings.HasPrefix(o.Ref, "refs/hub/") {
		return plumbing.ZeroHash, fmt.Errorf("appending to %q: events live under refs/hub/: %w", o.Ref, ErrMalformed)
	}
	gitDir, err := ResolveGitDir(o.GitDir)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	_, body, err := MarshalPayload(o.Payload)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	if len(body) > c.EventBytes {
		return plumbing.ZeroHash, fmt.Errorf("appending to %s: payload of %d bytes, over the ceiling of %d: %w", o.Ref, len(body), c.EventBytes, ErrCeiling)
	}
	for attempt := 1; ; attempt++ {
		old, err := localRef(gitDir, o.Ref, o.Env)
		if err != nil {
			return plumbing.ZeroHash, err
		}
		if attempt > 1 && old != seen {
			progress = o.Clock()
		}
		seen = old
		var parents []plumbing.Hash
		if !old.IsZero() {
			parents = []plumbing.Hash{old}
		}
		raw, err := EncodeEvent(o.Payload, parents, o.Name, o.Now(), o.Signer)
		if err != nil {
			return plumbing.ZeroHash, fmt.Errorf("appending to %s: %w", o.Ref, err)
		}
		id, err := writeLoose(gitDir, plumbing.CommitObject, raw)
		if err != nil {
			return plumbing.ZeroHash, fmt.Errorf("appending to %s: %w", o.Ref, err)
		}
		err = push(ctx, gitDir, o, old, id)
		if err != nil && !errors.Is(err, ErrStale) && !errors.Is(err, ErrRefused) && ctx.Err() == nil {
			// Transport (a broken pipe, a killed connection): the push may
			// or may not have taken effect. Read the ref back: holding our
			// event means done; otherwise retry like a lost race.
			switch {
			case landed(ctx, gitDir, o, id):
				err = nil
			case transport >= TransportAttempts:
				return plumbing.ZeroHash, fmt.Errorf("appending to %s at %s: the push failed %d times in transport: %w", o.Ref, o.Remote, transport, err)
			default:
				transport++
				err = fmt.Errorf("%w (transport: %w)", ErrStale, err)
			}
		}
		if err == nil {
			if o.Remote != "." {
				// Keep the local copy current so the next append starts from
				// the right tip; it is only a copy, so a failure is harmless.
				runGit(ctx, "", o.Env, "--git-dir="+gitDir, "update-ref", o.Ref, id.String())
			}
			return id, nil
		}
		if !errors.Is(err, ErrStale) {
			return plumbing.ZeroHash, err
		}
		if now := o.Clock(); o.Attempts > 0 && attempt >= o.Attempts || now.Sub(progress) >= o.Patience || now.Sub(start) >= o.MaxPatience {
			return plumbing.ZeroHash, fmt.Errorf("appending to %s at %s: the push kept losing: gave up after %d attempts in %s (others are writing to it; try again): %w",
				o.Ref, o.Remote, attempt, now.Sub(start).Round(time.Millisecond), err)
		}
		o.Sleep(Backoff(attempt))
		if o.Remote != "." {
			if err := fetchRefspec(ctx, gitDir, o.Remote, "+"+o.Ref+":"+o.Ref, o.Env); err != nil {
				return plumbing.ZeroHash, fmt.Errorf("appending to %s: after a stale push: %w", o.Ref, err)
			}
		}
	}
}

// TransportAttempts bounds the pushes of one Append that fail in transport
// (git ends without reporting the ref): a broken pipe is retried, a remote
// that is down or refuses the credentials fails soon.
const TransportAttempts = 3

// DefaultPatience is how long Append keeps retrying while the ref does not
// move; DefaultMaxPatience how long it keeps retrying while it does.
const (
	DefaultPatience    = 2 * time.Minute
	DefaultMaxPatience = 10 * time.Minute
)

// Backoff is the wait before retry n (1-based) of a lost race: 10 ms
// doubling up to 160 ms, plus a random jitter of up to the same again, so
// writers that collided spread out instead of colliding again. The cap is
// about one push through the hooks: a writer that lost many races in a row
// must not wait much longer than a newcomer, or it starves under load.
func Backoff(n int) time.Duration {
	d := 10 * time.Millisecond << min(max(n-1, 0), 4)
	return d + time.Duration(rand.Int63n(int64(d)))
}

// landed reports whether o.Ref at o.Remote holds id (after a push whose
// outcome git did not report).
func landed(ctx context.Context, gitDir string, o AppendOptions, id plumbing.Hash) bool {
	if o.Remote == "." {
		cur, err := localRef(gitDir, o.Ref, o.Env)
		return err == nil && cur == id
	}
	out, _, err := runGit(ctx, "", o.Env, "--git-dir="+gitDir, "ls-remote", o.Remote, o.Ref)
	if err != nil {
		return false
	}
	for _, line := range strings.Split(string(out), "\n") {
		if f := strings.Fields(line); len(f) == 2 && f[1] == o.Ref && f[0] == id.String() {
			return true
		}
	}
	return false
}

// Fetch fetches every hub ref from remote into gitDir
// (+refs/hub/*:refs/hub/*), so that Append and ReadLog see the remote's events.
func Fetch(ctx context.Context, gitDir, remote string) error {
	gitDir, err := ResolveGitDir(gitDir)
	if err != nil {
		return err
	}
	return fetchRefspec(ctx, gitDir, remote, "+refs/hub/*:refs/hub/*", nil)
}

// ResolveGitDir turns a repository path (a git directory, or a work tree
// holding .git) into an absolute git directory, or says what is wrong.
func ResolveGitDir(dir string) (string, error) {
	if dir == "" {
		return "", fmt.Errorf("no git directory given: %w", ErrMalformed)
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", fmt.Errorf("git directory %s: %w", dir, err)
	}
	if fi, err := os.Stat(filepath.Join(abs, ".git")); err == nil && fi.IsDir() {
		abs = filepath.Join(abs, ".git")
	}
	if _, err := os.Stat(filepath.Join(abs, "objects")); err != nil {
		return "", fmt.Errorf("%s is not a git directory (no objects/): pass the repository's git dir: %w", dir, err)
	}
	return abs, nil
}

func runGit(ctx context.Context, dir string, env []string, args ...string) (stdout, stderr []byte, err error) {
	if len(env) > 0 {
		env = append(os.Environ(), env...)
	}
	return runGitEnv(ctx, dir, env, args...)
}

// runGitEnv runs git with exactly env as its environment (nil: this
// process's).
func runGitEnv(ctx context.Context, dir string, env []string, args ...string) (stdout, stderr []byte, err error) {
	cmd := exec.CommandContext(ctx, "git", args...)
	cmd.Dir = dir
	cmd.Env = env
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err = cmd.Run()
	return out.Bytes(), errb.Bytes(), err
}

// localRef reads ref in gitDir through git (loose or packed); zero if absent.
func localRef(gitDir, ref string, env []string) (plumbing.Hash, error) {
	out, errb, err := runGit(context.Background(), gitDir, env, "--git-dir="+gitDir, "for-each-ref", "--format=%(objectname) %(refname)", ref)
	if err != nil {
		return plumbing.ZeroHash, fmt.Errorf("reading %s in %s: %v: %s", ref, gitDir, err, bytes.TrimSpace(errb))
	}
	// the pattern also matches refs below ref/; take the exact name only
	for _, line := range strings.Split(string(out), "\n") {
		if id, name, ok := strings.Cut(line, " "); ok && name == ref {
			if h, ok := parseHex([]byte(id)); ok {
				return h, nil
			}
		}
	}
	return plumbing.ZeroHash, nil
}

func fetchRefspec(ctx context.Context, gitDir, remote, refspec string, env []string) error {
	_, errb, err := runGit(ctx, "", env, "--git-dir="+gitDir, "fetch", "--quiet", "--no-tags", "--no-write-fetch-head", remote, refspec)
	if err != nil {
		return fmt.Errorf("git fetch %s %s into %s: %v: %s", remote, refspec, gitDir, err, bytes.TrimSpace(errb))
	}
	return nil
}

// push runs git push with old as the expected value of o.Ref and classifies
// the outcome: nil, ErrStale (lost a race), *RefusedError, or another error.
func push(ctx context.Context, gitDir string, o AppendOptions, old, id plumbing.Hash) error {
	expect := ""
	if !old.IsZero() {
		expect = old.String()
	}
	args := []string{"--git-dir=" + gitDir, "push", "--porcelain"}
	optArgs, env := PushArgs(o.Remote, o.PushOptions, o.Env)
	args = append(args, optArgs...)
	args = append(args, "--force-with-lease="+o.Ref+":"+expect, o.Remote, id.String()+":"+o.Ref)
	dir := ""
	if o.Remote == "." {
		dir = gitDir // "." is resolved against the working directory
	}
	out, errb, runErr := runGitEnv(ctx, dir, env, args...)
	flag, status, found := porcelainStatus(out, o.Ref)
	if runErr == nil && found && flag != '!' {
		return nil
	}
	if !found {
		return fmt.Errorf("git push %s %s:%s: %v: %s", o.Remote, id, o.Ref, runErr, bytes.TrimSpace(errb))
	}
	switch {
	case strings.Contains(status, "stale info"), strings.Contains(status, "fetch first"),
		strings.Contains(status, "non-fast-forward"), strings.Contains(status, "cannot lock ref"),
		strings.Contains(status, "failed to update ref"), strings.Contains(status, "failed to lock"),
		strings.Contains(status, "incorrect old value"):
		return fmt.Errorf("push of %s to %s: %s: %w", o.Ref, o.Remote, status, ErrStale)
	case strings.Contains(status, "hook declined") && onlyMoved(HookLines(errb)):
		// The hook saw the ref already moved by a concurrent push (its
		// ref-moved refusal): a lost race like git's own stale report.
		return fmt.Errorf("push of %s to %s: the hook found the ref moved: %w", o.Ref, o.Remote, ErrStale)
	case strings.Contains(status, "hook declined"):
		return &RefusedError{Ref: o.Ref, Status: strings.Trim(strings.TrimPrefix(status, "[remote rejected]"), " ()"), Lines: HookLines(errb)}
	}
	return fmt.Errorf("push of %s to %s rejected: %s: %s", o.Ref, o.Remote, status, bytes.TrimSpace(errb))
}

// porcelainStatus finds ref's line in git push --porcelain output:
// "<flag>\t<from>:<to>\t<summary>".
func porcelainStatus(out []byte, ref string) (byte, string, bool) {
	for _, line := range strings.Split(string(out), "\n") {
		if len(line) < 2 || line[1] != '\t' {
			continue
		}
		fields := strings.SplitN(line[2:], "\t", 2)
		if len(fields) != 2 {
			continue
		}
		if _, to, ok := strings.Cut(fields[0], ":"); ok && to == ref {
			return line[0], fields[1], true
		}
	}
	return 0, "", false
}

// refMovedCode is the boundary's refusal code for an update whose expected
// old value no longer holds (policy.CodeRefMoved; hubrefs cannot import
// policy).
const refMovedCode = "[ref-moved]"

// onlyMoved reports whether the hook refused only because refs had moved.
func onlyMoved(lines []string) bool {
	for _, l := range lines {
		if !strings.Contains(l, refMovedCode) {
			return false
		}
	}
	return len(lines) > 0
}

// HookLines keeps the hook's "git+:" lines from git push's standard error,
// without the "remote: " prefix and git's trailing padding.
func HookLines(stderr []byte) []string {
	var lines []string
	for _, line := range strings.Split(string(stderr), "\n") {
		line = strings.TrimRight(line, " \t\r")
		line = strings.TrimRight(strings.TrimSuffix(line, "\x1b[K"), " \t")
		line = strings.TrimPrefix(line, "remote: ")
		if strings.HasPrefix(line, "git+:") {
			lines = append(lines, line)
		}
	}
	return lines
}
