package gitio

// The client side of a compare-and-swap push: a push through the real git
// binary, so that the receiving repository's hooks judge it, with an
// expected old value per ref, the per-ref result and the hook's refusal
// lines read back. It is the one push client of git+: landings and
// candidate branches (the queue runner, `git+ pr merge`), and event appends
// (hubrefs.Append) all push through Push.
//
// Decisions:
//   - Every update carries --force-with-lease=<ref>:<old> (an empty <old>
//     for a ref that must not exist yet), so a concurrent writer makes the
//     push fail as stale instead of being overwritten, and a non-fast-forward
//     the caller meant (a candidate branch rebuilt) is still allowed.
//   - Several updates go in one push with --atomic unless the caller asks
//     otherwise: either every ref moves or none does.
//   - The result is read from `git push --porcelain`; the hook's lines are
//     the "git+:" lines of git's stderr with the "remote: " prefix removed
//     (HookLines); the host's other "remote: " lines (gitolite's DENIED, a
//     chained hook's words) are kept beside them, bounded (pushhost.go).
//   - A lost race is ErrPushStale whichever side saw it: git's own reports
//     of a lease that failed, a hook that refused every update only because
//     the ref had already moved ([ref-moved], docs/queue.md "Concurrent
//     writers"), and, for a signed push, a hook that refused only because an
//     identical certificate went first ([push-cert-nonce] "used before").
//   - A push git ended without reporting every ref (a broken pipe, a killed
//     connection) may or may not have taken effect: ErrPushTransport, which
//     callers answer by reading the ref back (RemoteRef) before retrying.
//   - A push the server refused for its credentials is ErrPushAuth
//     (pushauth.go), not a transport failure: nothing moved.
//   - Pushing to "." runs git in the git directory itself, so "." means
//     that repository (its own receive hooks run), and its push options
//     travel in the environment (pushenv.go).
//   - With Sign, the push identifies its pusher with a push certificate
//     (docs/serving.md "git+ verbs identify themselves"): git runs with
//     gpg.format=ssh, user.signingKey and gpg.ssh.program given on its
//     command line (so no configuration file is read or changed) and
//     --signed=if-asked, so a receiver that does not take certificates (a
//     plain mirror) still gets the push, unsigned.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
)

var (
	// ErrPushStale: a ref's expected old value did not hold (someone else
	// moved it first). Nothing was changed by this push.
	ErrPushStale = errors.New("ref moved meanwhile")
	// ErrPushRefused: the receiving repository's hook refused the push
	// (see *PushRefusedError for its lines).
	ErrPushRefused = errors.New("refused by the receiving hook")
	// ErrPushFailed: git push failed for another reason (transport, a
	// missing object, a rejected update not due to the hook).
	ErrPushFailed = errors.New("push failed")
	// ErrPushTransport: git ended without reporting every ref's outcome (a
	// broken pipe, a killed connection, an unreachable remote), so the push
	// may or may not have taken effect: read the ref back. An error wrapping
	// it wraps ErrPushFailed too.
	ErrPushTransport = errors.New("push outcome unknown (transport)")
)

// Refusal codes of the hook that can mean a lost race, not a judgement
// (README.md "Refusal codes"). receive.CodePushCertNonce is this one;
// policy.CodeRefMoved is checked equal to CodeRefMoved by receive's tests
// (policy sits above this package).
const (
	CodeRefMoved      = "ref-moved"
	CodePushCertNonce = "push-cert-nonce"
)

// PushUpdate is one ref to move: from Old (zero: the ref must not exist)
// to New (zero: delete the ref).
type PushUpdate struct {
	Ref      string
	Old, New plumbing.Hash
}

// PushOptions say what to push where.
type PushOptions struct {
	// GitDir is the repository pushed from (bare, or a work tree's .git; a
	// work tree root is accepted too). It must hold every New object.
	GitDir string
	// Remote receives the push: "." (default: GitDir itself), a path, a URL
	// or a remote name such as "origin".
	Remote string
	// Updates are the refs to move.
	Updates []PushUpdate
	// NotAtomic pushes the updates independently (default: --atomic when
	// there are several).
	NotAtomic bool
	// PushOptions are passed as --push-option (the receiver must set
	// receive.advertisePushOptions).
	PushOptions []string
	// Env is added to the environment git runs with (which is inherited).
	Env []string
	// Sign, when set, signs the push (a push certificate) if the receiver
	// asks for one.
	Sign *PushSigning
}

// PushSigning says how git signs a push certificate.
type PushSigning struct {
	// Key is git's user.signingKey: a private key file's absolute path, or
	// "key::" and a public key line for a key held by ssh-agent.
	Key string
	// Program is gpg.ssh.program, the ssh-keygen compatible signer; empty:
	// git's default (ssh-keygen). git+ passes its own binary, which
	// answers `-Y sign` (hubrefs/sshsign.Keygen).
	Program string
}

// args returns git's global options that set the signing up.
func (s *PushSigning) args() []string {
	if s == nil || s.Key == "" {
		return nil
	}
	a := []string{"-c", "gpg.format=ssh", "-c", "user.signingKey=" + s.Key}
	if s.Program != "" {
		a = append(a, "-c", "gpg.ssh.program="+s.Program)
	}
	return a
}

// RefResult is one ref's outcome as `git push --porcelain` reports it.
type RefResult struct {
	Ref    string
	Flag   byte   // ' ' fast-forward, '+' forced, '-' deleted, '*' new, '=' up to date, '!' rejected
	Status string // git's summary, e.g. "[remote rejected] (pre-receive hook declined)"
}

// OK reports whether the ref was updated (or already held the value).
func (r RefResult) OK() bool { return r.Flag != '!' && r.Flag != 0 }

// PushResult is what a push did.
type PushResult struct {
	Refs      []RefResult // one per update, in the order given
	HookLines []string    // the hook's "git+: ..." lines
	HostLines []string    // the host's other "remote: " lines (HostLines)
	Stderr    string      // git's whole standard error, for diagnostics
}

// PushRefusedError is a push the receiving hook refused.
type PushRefusedError struct {
	Refs   []string // the refs the push tried to move
	Status string   // git's status, e.g. "pre-receive hook declined"
	Lines  []string // the hook's "git+: ..." lines, "remote: " prefix removed
	// Host are the receiving side's other lines (HostLines): a host's own
	// hook's refusal, or what the chained hook printed.
	Host []string
}

func (e *PushRefusedError) Error() string {
	msg := fmt.Sprintf("push of %s refused (%s)", strings.Join(e.Refs, ", "), e.Status)
	if len(e.Lines) > 0 {
		msg += ": " + strings.Join(e.Lines, "; ")
	}
	if len(e.Host) > 0 {
		msg += "; remote: " + strings.Join(e.Host, "; remote: ")
	}
	return msg
}

// Is makes errors.Is(err, ErrPushRefused) hold.
func (e *PushRefusedError) Is(target error) bool { return target == ErrPushRefused }

// Push runs one git push of o.Updates to o.Remote with each Old as the
// expected value and reads back the outcome. It returns the result and nil
// when every ref moved; otherwise an error wrapping ErrPushStale (a lease
// failed, or the hook refused only because a ref had moved: some ref moved
// meanwhile), *PushRefusedError (the hook refused), or ErrPushFailed — and
// also ErrPushTransport when git did not report every ref, so the push may
// have landed. The result is filled in as far as git reported it in every
// case.
func Push(ctx context.Context, o PushOptions) (PushResult, error) {
	var res PushResult
	if len(o.Updates) == 0 {
		return res, fmt.Errorf("push to %s: no refs to update: %w", o.Remote, ErrPushFailed)
	}
	if o.Remote == "" {
		o.Remote = "."
	}
	gitDir, err := ResolveGitDir(o.GitDir)
	if err != nil {
		return res, err
	}
	args := append([]string{"--git-dir=" + gitDir}, o.Sign.args()...)
	args = append(args, "push", "--porcelain")
	if o.Sign.args() != nil {
		args = append(args, "--signed=if-asked")
	}
	if len(o.Updates) > 1 && !o.NotAtomic {
		args = append(args, "--atomic")
	}
	// A push into "." carries no push options (pushenv.go: an
	// empty command list with options makes git die of SIGPIPE).
	optArgs, env := PushArgs(o.Remote, o.PushOptions, o.Env)
	args = append(args, optArgs...)
	refs := make([]string, len(o.Updates))
	var specs []string
	for i, u := range o.Updates {
		if !strings.HasPrefix(u.Ref, "refs/") {
			return res, fmt.Errorf("push to %s: %q is not a full ref name (refs/...): %w", o.Remote, u.Ref, ErrPushFailed)
		}
		refs[i] = u.Ref
		expect := ""
		if !u.Old.IsZero() {
			expect = u.Old.String()
		}
		args = append(args, "--force-with-lease="+u.Ref+":"+expect)
		if u.New.IsZero() {
			specs = append(specs, ":"+u.Ref)
		} else {
			specs = append(specs, u.New.String()+":"+u.Ref)
		}
	}
	args = append(args, o.Remote)
	args = append(args, specs...)

	cmd := exec.CommandContext(ctx, "git", args...)
	if o.Remote == "." {
		cmd.Dir = gitDir // "." is resolved against the working directory
	}
	cmd.Env = env
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	runErr := cmd.Run()
	if ctx.Err() != nil {
		return res, fmt.Errorf("git push to %s: %w", o.Remote, ctx.Err())
	}
	res.Stderr = errb.String()
	res.HookLines = HookLines(errb.Bytes())
	res.HostLines = HostLines(errb.Bytes())

	porcelain := parsePorcelain(out.Bytes())
	allOK, unreported := true, false
	var stale, refused []string
	var refusedStatus string
	for _, ref := range refs {
		r, found := porcelain[ref]
		if !found {
			r = RefResult{Ref: ref}
			unreported = true
		}
		res.Refs = append(res.Refs, r)
		if !r.OK() {
			allOK = false
		}
		switch {
		case !found || r.OK():
		case isStaleStatus(r.Status):
			stale = append(stale, ref+" ("+r.Status+")")
		case strings.Contains(r.Status, "hook declined"):
			refused = append(refused, ref)
			refusedStatus = strings.Trim(strings.TrimPrefix(r.Status, "[remote rejected]"), " ()")
		}
	}
	if runErr == nil && allOK {
		return res, nil
	}
	if len(refused) > 0 && OnlyMoved(res.HookLines) {
		// The hook saw a ref already moved by a concurrent push (its
		// ref-moved refusal): a lost race like git's own stale report.
		return res, fmt.Errorf("push to %s: the hook found %s moved: fetch and try again: %w", o.Remote, strings.Join(refused, ", "), ErrPushStale)
	}
	if len(refused) > 0 && o.Sign != nil && onlyCertReplay(res.HookLines) {
		// Two identical signed pushes in the same second (two runners
		// racing on one plan) make byte-identical certificates: the hook
		// takes the second for a replay. The first one's CAS decides; this
		// one re-reads like any stale push.
		return res, fmt.Errorf("push to %s: an identical signed push went first: fetch and try again: %w", o.Remote, ErrPushStale)
	}
	if len(refused) > 0 {
		host := res.HostLines
		if hint := gitoliteHint(gitDir, o.Remote, o.Env); hint != "" && len(res.HookLines) == 0 {
			host = append(append([]string{}, host...), hint)
		}
		return res, &PushRefusedError{Refs: refs, Status: refusedStatus, Lines: res.HookLines, Host: host}
	}
	if len(stale) > 0 {
		return res, fmt.Errorf("push to %s: %s: fetch, check the new value and try again: %w",
			o.Remote, strings.Join(stale, ", "), ErrPushStale)
	}
	var detail []string
	for _, r := range res.Refs {
		if !r.OK() {
			s := r.Status
			if s == "" {
				s = "not reported"
			}
			detail = append(detail, r.Ref+": "+s)
		}
	}
	msg := strings.TrimSpace(errb.String())
	if runErr != nil && msg == "" {
		msg = runErr.Error()
	}
	if line := authFailureLine(msg); line != "" && len(refused) == 0 {
		return res, fmt.Errorf("git push to %s: %s: %s: %w: %w", o.Remote, line, authAdvice(o.Sign.args() != nil), ErrPushAuth, ErrPushFailed)
	}
	if unreported {
		return res, fmt.Errorf("git push to %s: %s: %s: %w: %w", o.Remote, strings.Join(detail, "; "), msg, ErrPushTransport, ErrPushFailed)
	}
	return res, fmt.Errorf("git push to %s: %s: %s: %w", o.Remote, strings.Join(detail, "; "), msg, ErrPushFailed)
}

// OnlyMoved reports whether the hook refused only because refs had moved:
// every hook line is a [ref-moved] refusal, a lost race.
func OnlyMoved(lines []string) bool {
	for _, l := range lines {
		if !strings.Contains(l, "["+CodeRefMoved+"]") {
			return false
		}
	}
	return len(lines) > 0
}

// onlyCertReplay reports whether every hook line refuses for a certificate
// used before (receive/pusher.go).
func onlyCertReplay(lines []string) bool {
	for _, l := range lines {
		if !strings.Contains(l, "["+CodePushCertNonce+"] this push certificate was used before") {
			return false
		}
	}
	return len(lines) > 0
}

// isStaleStatus recognises git's reports of a compare-and-swap that lost.
func isStaleStatus(s string) bool {
	for _, m := range []string{"stale info", "fetch first", "non-fast-forward", "cannot lock ref",
		"failed to update ref", "failed to lock", "incorrect old value", "reference already exists"} {
		if strings.Contains(s, m) {
			return true
		}
	}
	return false
}

// parsePorcelain reads `git push --porcelain` lines
// "<flag>\t<from>:<to>\t<summary>" keyed by <to>.
func parsePorcelain(out []byte) map[string]RefResult {
	m := map[string]RefResult{}
	for _, line := range strings.Split(string(out), "\n") {
		if len(line) < 2 || line[1] != '\t' {
			continue
		}
		fields := strings.SplitN(line[2:], "\t", 2)
		if len(fields) != 2 {
			continue
		}
		if _, to, ok := strings.Cut(fields[0], ":"); ok {
			m[to] = RefResult{Ref: to, Flag: line[0], Status: fields[1]}
		}
	}
	return m
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

// ErrNotGitDir reports a path that is not a git directory.
var ErrNotGitDir = errors.New("not a git directory")

// ResolveGitDir turns a repository path (a git directory, or a work tree
// holding .git) into an absolute git directory, or says what is wrong.
func ResolveGitDir(dir string) (string, error) {
	if dir == "" {
		return "", fmt.Errorf("no git directory given: %w", ErrNotGitDir)
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", fmt.Errorf("git directory %s: %w", dir, err)
	}
	if fi, err := os.Stat(filepath.Join(abs, ".git")); err == nil && fi.IsDir() {
		abs = filepath.Join(abs, ".git")
	}
	if _, err := os.Stat(filepath.Join(abs, "objects")); err != nil {
		return "", fmt.Errorf("%s is not a git directory (no objects/): pass the repository's git dir: %w: %w", dir, ErrNotGitDir, err)
	}
	return abs, nil
}
