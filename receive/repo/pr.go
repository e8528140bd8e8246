package repo

// The pull request writers (docs/events.md, docs/cli.md "Pull requests"):
// open, update, retarget, review, thread, check, close, reopen, and merge,
// the direct landing.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"sort"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/google/uuid"

	"github.com/gitplus/gitplus/hubrefs"
	"github.com/gitplus/gitplus/hubrefs/pr"
	"github.com/gitplus/gitplus/hubrefs/trust"
	"github.com/gitplus/gitplus/receive"
	"github.com/gitplus/gitplus/receive/clock"
)

// Sentinel errors of the pull request writers.
var (
	// ErrHeadNotOnRemote is a pull request head the remote does not have.
	ErrHeadNotOnRemote = errors.New("the head is not on the remote")
	// ErrNoBase is a pull request base branch the remote does not have,
	// which no rule protects and --create-base did not ask for.
	ErrNoBase = errors.New("the base branch does not exist")
	// ErrUsage marks a mistake in what the caller asked for, found only
	// once the repository is open (the CLI exits 2 on it).
	ErrUsage = errors.New("usage")
	// ErrDraft is a draft pull request asked to enter a queue
	// (docs/events.md, "Drafts").
	ErrDraft = errors.New("draft pull request")
)

type usageError struct{ error }

func (usageError) Is(target error) bool { return target == ErrUsage }

func usage(format string, args ...any) error { return usageError{fmt.Errorf(format, args...)} }

// PR is a pull request folded for writing by a member.
type PR struct {
	*Signing
	ID    string
	State *pr.State // nil before pr.opened
}

// PR folds pull request id (a full id or an unambiguous prefix) for
// writing.
func (s *Signing) PR(id string) (*PR, error) {
	st, _, err := s.Repo.PRState(id, s.Trust)
	if err != nil {
		return nil, err
	}
	return &PR{Signing: s, ID: st.ID, State: st}, nil
}

// Write judges payload with pr.Authorize (the boundary's own rule) and
// appends it to the pull request's ref; nothing is written when it would
// be refused.
func (p *PR) Write(payload any) (string, error) {
	var tip plumbing.Hash
	if p.State != nil {
		tip = p.State.Tip
	}
	ev, err := NewEvent(payload, tip, p.Key, clock.Now())
	if err != nil {
		return "", err
	}
	if err := pr.Authorize(ev, p.State, p.Trust); err != nil {
		var ee *pr.EventError
		if errors.As(err, &ee) {
			err = ee.Err
		}
		return "", fmt.Errorf("%s on pull request %s refused, nothing written (signer %s, %s): %w", ev.Type, p.ID, p.Member.Name, Fingerprint(p.Member.Key), err)
	}
	evID, err := p.Append(hubrefs.PRRefPrefix+p.ID, payload)
	if err != nil {
		return "", err
	}
	return evID.String(), nil
}

// OpenPR is what pr.opened proposes.
type OpenPR struct {
	Base   string // the branch to land on (main or refs/heads/main)
	Head   string // a revision; "" is the current branch
	Title  string
	Body   string
	Source string // the branch the head comes from; "" is the branch Head names
	// Push pushes the head to its source branch on the remote first;
	// otherwise the remote must have the head already.
	Push bool
	// Draft opens it as a draft (docs/events.md, "Drafts").
	Draft bool
	// CreateBase opens the pull request onto a base branch the remote does
	// not have yet; without it only a protected branch's first commit may
	// (docs/cli.md "Pull requests").
	CreateBase bool
}

// OpenPR opens a pull request and returns it (State nil) with the head
// resolved to a commit id, the base as a full ref and the source branch.
func (s *Signing) OpenPR(o OpenPR) (p *PR, head, base string, err error) {
	if base, err = BranchRef(o.Base); err != nil {
		return nil, "", "", fmt.Errorf("--base: %w", err)
	}
	if err := NeedCap(s.Member, trust.CapPR); err != nil {
		return nil, "", "", err
	}
	head, source, err := s.openHead(o)
	if err != nil {
		return nil, "", "", err
	}
	u, err := uuid.NewV7()
	if err != nil {
		return nil, "", "", err
	}
	p = &PR{Signing: s, ID: u.String()}
	payload := hubrefs.PROpened{Base: s.base(hubrefs.TypePROpened), ID: p.ID, BaseRef: base, Head: head, Title: o.Title, Body: o.Body, Source: source, Draft: o.Draft}
	if _, err := p.Write(payload); err != nil {
		return nil, "", "", err
	}
	return p, head, base, nil
}

// openHead settles pr open's head: resolves o.Head (default: the current
// branch), pushes it with o.Push, and checks that the remote has it. It
// returns the commit id and the source branch (refs/heads/..., or "").
func (s *Signing) openHead(o OpenPR) (head, source string, err error) {
	r := s.Repo
	rev := o.Head
	if rev == "" {
		if rev = r.CurrentBranch(); rev == "" {
			return "", "", usage("git+ pr open: --head REV is required (HEAD is detached or the repository is bare)")
		}
	}
	if head, err = r.ResolveCommit(rev); err != nil {
		return "", "", fmt.Errorf("--head: %w", err)
	}
	source = r.headSource(rev)
	if o.Source != "" {
		if source, err = BranchRef(o.Source); err != nil {
			return "", "", fmt.Errorf("--source: %w", err)
		}
	}
	if r.Remote == "." {
		if o.Push {
			return "", "", usage("git+ pr open --push: %s is the repository itself; there is nothing to push to (pass --remote)", r.GitDir)
		}
		return head, source, nil
	}
	refs, err := r.remoteRefs()
	if err != nil {
		return "", "", err
	}
	if err := s.baseExists(o, refs); err != nil {
		return "", "", err
	}
	if base, _ := BranchRef(o.Base); source != "" && source == base && !r.HeadOnRemote(head, refs) {
		// The head is on the local base branch (the first commit of a
		// protected branch, say): pushing it there is the landing this
		// pull request is for, so it goes up on a branch of its own
		// (docs/cli.md "Pull requests").
		b := strings.TrimPrefix(base, "refs/heads/")
		missing := ""
		if refs[base] == "" {
			missing = fmt.Sprintf(" (%s does not exist on %s yet: `git+ pr merge` creates it once the pull request is approved)", b, r.Remote)
		}
		return "", "", fmt.Errorf("%w: %s (--head %s) is on your %s, the base itself, which only a landing moves: a pull request's head goes up on its own branch; `git+ pr open --base %s --source BRANCH --push` pushes it to BRANCH and opens the pull request%s; nothing written or pushed",
			ErrHeadNotOnRemote, head, rev, b, b, missing)
	}
	if o.Push {
		if source == "" {
			return "", "", usage("git+ pr open --push: --head %s names no branch; give --source BRANCH to push it to", rev)
		}
		if old := refs[source]; old != head {
			// Signed with the writer's key: the pusher must be known
			// (docs/serving.md "git+ verbs identify themselves").
			if _, err := receive.Push(context.Background(), receive.PushOptions{
				GitDir: r.GitDir, Remote: r.Remote, Sign: s.Key.PushSigning(),
				Updates: []receive.PushUpdate{{Ref: source, Old: plumbing.NewHash(old), New: plumbing.NewHash(head)}},
			}); err != nil {
				return "", "", fmt.Errorf("pushing %s to %s on %s: %w", Short(head), source, r.Remote, err)
			}
			if r.OnPush != nil {
				r.OnPush(source, old, head)
			}
		}
		if base, _ := BranchRef(o.Base); "refs/heads/"+strings.TrimPrefix(rev, "refs/heads/") != base {
			r.setUpstream(rev, source) // the local base keeps tracking the remote base
		}
		return head, source, nil
	}
	if !r.HeadOnRemote(head, refs) {
		push := "git push " + r.Remote + " " + strings.TrimPrefix(source, "refs/heads/")
		if source == "" {
			push = "git push " + r.Remote + " " + head + ":refs/heads/BRANCH"
		}
		return "", "", fmt.Errorf("%w: %s (--head %s) is not on remote %s, so nobody could review or land it: push it first (`%s`) or pass --push; nothing written",
			ErrHeadNotOnRemote, head, rev, r.Remote, push)
	}
	return head, source, nil
}

// baseExists refuses a base branch the remote (whose refs are given) does
// not have, naming the branches it has: a typo (`--base mian`) would open
// a pull request nothing can land. A branch the rules protect may be
// missing (its first commit lands through a pull request, and `git+ pr
// merge` creates it), and so may any branch with o.CreateBase.
func (s *Signing) baseExists(o OpenPR, refs map[string]string) error {
	base, err := BranchRef(o.Base)
	if err != nil || refs[base] != "" || o.CreateBase {
		return err
	}
	if _, protected := s.Trust.Rules.For(base); protected {
		return nil
	}
	var have []string
	for ref := range refs {
		if b, ok := strings.CutPrefix(ref, "refs/heads/"); ok {
			have = append(have, b)
		}
	}
	sort.Strings(have)
	list := "it has no branches yet"
	if len(have) > 0 {
		list = "its branches: " + strings.Join(have, ", ")
	}
	b := strings.TrimPrefix(base, "refs/heads/")
	return fmt.Errorf("%w: %s is not a branch of %s (%s); check --base, or pass --create-base to open the pull request onto %s anyway (`git+ pr merge` creates it); nothing written or pushed",
		ErrNoBase, b, s.Repo.Remote, list, b)
}

// Update proposes a new head (rev, resolved here); every approval stales.
func (p *PR) Update(rev string) (string, error) {
	head, err := p.Repo.ResolveCommit(rev)
	if err != nil {
		return "", fmt.Errorf("--head: %w", err)
	}
	return p.Write(hubrefs.PRUpdated{Base: p.base(hubrefs.TypePRUpdated), Head: head})
}

// Retarget changes the base branch; every approval stales.
func (p *PR) Retarget(base string) (string, error) {
	ref, err := BranchRef(base)
	if err != nil {
		return "", fmt.Errorf("--base: %w", err)
	}
	return p.Write(hubrefs.PRRetargeted{Base: p.base(hubrefs.TypePRRetargeted), BaseRef: ref})
}

// Review reviews the current head and base: verdict is pr.Approve,
// pr.Changes or pr.Comment.
func (p *PR) Review(verdict, body string) (string, error) {
	if err := NeedCap(p.Member, trust.CapReview); err != nil {
		return "", err
	}
	return p.Write(hubrefs.Review{Base: p.base(hubrefs.TypeReviewSubmit), Head: p.State.Head, BaseRef: p.State.Base, Verdict: verdict, Body: body})
}

// OpenThread opens a review thread and returns its id and the event's.
func (p *PR) OpenThread(body string) (thread, event string, err error) {
	u, err := uuid.NewV7()
	if err != nil {
		return "", "", err
	}
	event, err = p.Write(hubrefs.Thread{Base: p.base(hubrefs.TypeThreadOpened), Thread: u.String(), Body: body})
	return u.String(), event, err
}

// ResolveThread resolves an open thread.
func (p *PR) ResolveThread(thread, body string) (string, error) {
	if resolved, ok := p.State.Threads[thread]; !ok {
		return "", fmt.Errorf("pull request %s has no thread %q (see `git+ pr show %s`); nothing written", p.ID, thread, p.ID)
	} else if resolved {
		return "", fmt.Errorf("thread %s of pull request %s is already resolved; nothing written", thread, p.ID)
	}
	return p.Write(hubrefs.Thread{Base: p.base(hubrefs.TypeThreadResolved), Thread: thread, Body: body})
}

// Check records a check run: its start (Started) or its conclusion.
type Check struct {
	Name       string
	Rev        string // the revision checked; "" is the current head; a full id need not be here
	Conclusion string // pr.Success, pr.Failure or pr.Cancelled; "" with Started
	URL        string
	Started    bool
}

// Check records c; the member needs hub.check:<name>.
func (p *PR) Check(c Check) (string, error) {
	if err := NeedCap(p.Member, trust.CheckCap(c.Name)); err != nil {
		return "", err
	}
	rev := p.State.Head
	if c.Rev != "" {
		var err error
		if pr.ValidOID(c.Rev) == nil {
			rev = c.Rev // a candidate need not be in this repository
		} else if rev, err = p.Repo.ResolveCommit(c.Rev); err != nil {
			return "", fmt.Errorf("--rev: %w", err)
		}
	}
	typ := hubrefs.TypeCheckCompleted
	if c.Started {
		typ = hubrefs.TypeCheckStarted
	}
	return p.Write(hubrefs.Check{Base: p.base(typ), Name: c.Name, Head: rev, Conclusion: c.Conclusion, URL: c.URL})
}

// Close closes the pull request (its opener or an admin).
func (p *PR) Close() (string, error) { return p.Write(p.base(hubrefs.TypePRClosed)) }

// Reopen reopens a closed pull request (its opener or an admin).
func (p *PR) Reopen() (string, error) { return p.Write(p.base(hubrefs.TypePRReopened)) }

// MarkDraft makes the open pull request a draft (its opener or an admin):
// it cannot enter a queue nor land until Ready (docs/events.md, "Drafts").
func (p *PR) MarkDraft() (string, error) {
	if p.State.Draft {
		return "", fmt.Errorf("pull request %s is a draft already; nothing written", p.ID)
	}
	return p.Write(p.base(hubrefs.TypePRDraft))
}

// Ready marks a draft ready for review and landing (its opener or an admin).
func (p *PR) Ready() (string, error) {
	if !p.State.Draft {
		return "", fmt.Errorf("pull request %s is not a draft; nothing written", p.ID)
	}
	return p.Write(p.base(hubrefs.TypePRReady))
}

// Bypass records pr.bypassed naming the pull request's current head and
// base: the hook then accepts the direct landing of that head (`pr merge`)
// whatever the review and check rules say, unless the branch sets
// "allowBypass": false; never a non-fast-forward, never another head. The
// signer needs hub.bypass (docs/trust.md, "An audited bypass").
func (p *PR) Bypass(reason string) (string, error) {
	if err := needBypass(p.Member, p.State.Base); err != nil {
		return "", err
	}
	if strings.TrimSpace(reason) == "" {
		return "", usage("git+ pr bypass: --reason TEXT is required: a bypass is audited, say why")
	}
	return p.Write(hubrefs.PRBypassed{Base: p.base(hubrefs.TypePRBypassed), Head: p.State.Head, BaseRef: p.State.Base, Reason: reason})
}

// Dismiss dismisses review (its event id, or an unambiguous prefix of at
// least 4 hex digits among the pull request's reviews), a changes request,
// saying why; the signer needs hub.bypass (docs/trust.md, "Vetoes").
func (p *PR) Dismiss(review, reason string) (string, error) {
	if err := needBypass(p.Member, p.State.Base); err != nil {
		return "", err
	}
	if strings.TrimSpace(reason) == "" {
		return "", usage("git+ pr dismiss: --reason TEXT is required: say why the changes request no longer holds")
	}
	review = strings.ToLower(review)
	if len(review) < 4 {
		return "", usage("git+ pr dismiss: --review wants the review's event id (at least 4 hex digits; see `git+ pr show %s`)", p.ID)
	}
	var match []pr.Review
	for _, r := range p.State.Reviews {
		if strings.HasPrefix(r.Event.String(), review) {
			match = append(match, r)
		}
	}
	switch len(match) {
	case 0:
		return "", fmt.Errorf("pull request %s has no review %s (see `git+ pr show %s`); nothing written", p.ID, review, p.ID)
	case 1:
	default:
		return "", fmt.Errorf("review %s of pull request %s is ambiguous (%d reviews match); give more of its id", review, p.ID, len(match))
	}
	return p.Write(hubrefs.ReviewDismissed{Base: p.base(hubrefs.TypeReviewDismiss), Review: match[0].Event.String(), Reason: reason})
}

// Merged is the outcome of Merge.
type Merged struct {
	ID     string
	Branch string
	Head   plumbing.Hash
	Pushed bool
	// Already: the pull request was merged and recorded before; nothing
	// was done.
	Already bool
	Result  string // "merged", "already merged", or that only pr.merged was recorded
	// Squash: on a branch taking squash steps, the step that landed the
	// head (prsquash.go); zero otherwise.
	Squash plumbing.Hash
	// SourceDeleted: the source branch deleted after the landing
	// (deleteSourceBranch, sourcebranch.go); SourceNote: why it was kept.
	SourceDeleted, SourceNote string
}

// LandingRefusedError is a landing the receiving hook refused: Lines are
// the hook's refusal lines.
type LandingRefusedError struct {
	Lines []string
	msg   string
	err   *receive.PushRefusedError
}

func (e *LandingRefusedError) Error() string { return e.msg }
func (e *LandingRefusedError) Unwrap() error { return e.err }

// pushLanding pushes commit onto base, expected at old, for pull request
// id (landing says what lands, for the refusal): the hook's refusal is a
// *LandingRefusedError, a lost race says to run pr merge again.
func (s *Signing) pushLanding(id, base string, old, commit plumbing.Hash, landing string) error {
	r := s.Repo
	_, err := receive.Push(context.Background(), receive.PushOptions{
		GitDir:  r.GitDir,
		Remote:  r.Remote,
		Updates: []receive.PushUpdate{{Ref: base, Old: old, New: commit}},
		Sign:    s.Key.PushSigning(),
	})
	var refused *receive.PushRefusedError
	switch {
	case errors.As(err, &refused):
		return &LandingRefusedError{Lines: refused.Lines, err: refused,
			msg: fmt.Sprintf("pull request %s: landing %s on %s at %s was refused (%s)", id, landing, base, r.Where(), refused.Status)}
	case errors.Is(err, receive.ErrPushStale):
		return fmt.Errorf("pull request %s: %s moved while landing; run `git+ pr merge %s` again: %w", id, base, id, err)
	case err != nil:
		return fmt.Errorf("pull request %s: landing %s on %s: %w", id, commit, base, err)
	}
	return nil
}

// merge (Merge, sourcebranch.go) is the direct landing (the queue of depth zero, docs/boundary.md
// rule 1, docs/cli.md): it pushes the pull request's current head onto its
// base with the base's current value as the expected old value, so the
// receiving hook judges the landing, then appends pr.merged.
//
// Decisions:
//   - Nothing is judged here that the boundary judges: a refusal is a
//     *LandingRefusedError carrying the hook's lines. Only what the hook
//     cannot see is checked first (the pull request exists, is open, and
//     the signer may write pr.merged).
//   - The expected old value is read from the receiving side (RemoteRef).
//   - A base that already holds the head (someone landed it) is not pushed
//     again; pr.merged is still appended when missing, so a crash between
//     the push and the append is repaired by merging again.
//   - pr.merged records revision = head, branch = base, commit = head.
func (s *Signing) merge(id string) (*Merged, error) {
	r, t, m := s.Repo, s.Trust, s.Member
	if !m.Has(trust.CapSourcePush) && !m.Has(trust.CapQueue) {
		return nil, fmt.Errorf("member %s (key %s) may not record pr.merged: it needs %s or %s; ask an admin to run `git+ member change %s --add-cap %s`",
			m.Name, Fingerprint(m.Key), trust.CapSourcePush, trust.CapQueue, m.Name, trust.CapSourcePush)
	}
	st, _, err := r.PRState(id, t)
	if err != nil {
		return nil, err
	}
	id = st.ID
	res := &Merged{ID: id, Branch: st.Base, Head: plumbing.NewHash(st.Head), Result: "merged"}
	switch st.State {
	case pr.Open:
	case pr.Merged:
		if mergedRecorded(st, st.Head, st.Base) {
			res.Pushed, res.Already, res.Result = true, true, "already merged"
			return res, nil
		}
	default:
		return nil, fmt.Errorf("pull request %s is %s: reopen it (`git+ pr reopen %s`) before merging", id, st.State, id)
	}
	head, base := res.Head, res.Branch
	old, err := r.RemoteRef(base)
	if err != nil {
		return nil, err
	}
	if b, ok := t.Rules.For(base); ok && b.Squash() && old != head {
		return s.mergeSquash(st, res, old) // prsquash.go
	}
	if old != head {
		if _, err := Git(r.GitDir, "cat-file", "-e", st.Head+"^{commit}"); err != nil {
			return nil, fmt.Errorf("pull request %s: its head %s is not in %s: fetch it (e.g. `git fetch %s`) and try again", id, st.Head, r.GitDir, r.Remote)
		}
		if err := s.pushLanding(id, base, old, head, head.String()); err != nil {
			return nil, err
		}
		res.Pushed = true
	}
	if !mergedRecorded(st, st.Head, base) {
		payload := hubrefs.PRMerged{Base: s.base(hubrefs.TypePRMerged), Revision: st.Head, Branch: base, Commit: st.Head}
		if _, err := s.appendMerged(id, payload); err != nil { // merged.go
			return nil, fmt.Errorf("pull request %s landed on %s but recording pr.merged failed (run `git+ pr merge %s` again to record it): %w", id, base, id, err)
		}
	}
	if !res.Pushed {
		res.Result = "base already held the head; recorded pr.merged"
	}
	return res, nil
}

// mergedRecorded reports whether st already holds pr.merged for rev on
// branch.
func mergedRecorded(st *pr.State, rev, branch string) bool {
	for _, r := range st.Merged {
		if r.Revision == rev && r.Branch == branch {
			return true
		}
	}
	return false
}

// ---- the head and the remote (docs/cli.md, "Pull requests") ----------------

// headSource works out the branch rev names, for pr open: a local branch
// (feat, refs/heads/feat) or a remote-tracking one (origin/feat) gives
// refs/heads/feat; a commit id gives "".
func (r *Repo) headSource(rev string) string {
	if strings.HasPrefix(rev, "refs/heads/") {
		return rev
	}
	if _, err := Git(r.GitDir, "rev-parse", "--verify", "--quiet", "refs/heads/"+rev); err == nil {
		return "refs/heads/" + rev
	}
	if r.Remote != "." {
		if b, ok := strings.CutPrefix(rev, r.Remote+"/"); ok {
			if _, err := Git(r.GitDir, "rev-parse", "--verify", "--quiet", "refs/remotes/"+rev); err == nil {
				return "refs/heads/" + b
			}
		}
	}
	return ""
}

// setUpstream makes the local branch rev names (if it names one) track
// source on r.Remote, as `git push -u` does after pr open --push: `git
// push` and `git pull` in it then need no arguments, and git status counts
// against it. The remote-tracking branch of a named remote is moved to the
// pushed head too. Best effort: the pull request is open either way.
func (r *Repo) setUpstream(rev, source string) {
	local := strings.TrimPrefix(rev, "refs/heads/")
	if local == "" || r.Bare {
		return
	}
	head, err := Git(r.GitDir, "rev-parse", "--verify", "--quiet", "refs/heads/"+local)
	if err != nil {
		return
	}
	_, _ = Git(r.GitDir, "config", "branch."+local+".remote", r.Remote)
	_, _ = Git(r.GitDir, "config", "branch."+local+".merge", source)
	if _, err := Git(r.GitDir, "config", "--get", "remote."+r.Remote+".url"); err == nil {
		_, _ = Git(r.GitDir, "update-ref", "refs/remotes/"+r.Remote+"/"+strings.TrimPrefix(source, "refs/heads/"), head)
	}
}

// CurrentBranch is the branch HEAD names in a work tree ("" when detached
// or bare).
func (r *Repo) CurrentBranch() string {
	if r.Bare {
		return ""
	}
	b, err := Git(r.GitDir, "symbolic-ref", "--quiet", "--short", "HEAD")
	if err != nil {
		return ""
	}
	return b
}

// remoteRefs lists the remote's refs (ls-remote), name → id.
func (r *Repo) remoteRefs() (map[string]string, error) {
	out, err := Git(r.GitDir, "ls-remote", r.Remote)
	if err != nil {
		return nil, fmt.Errorf("listing the refs of remote %s: %w", r.Remote, err)
	}
	refs := map[string]string{}
	for _, line := range strings.Split(out, "\n") {
		if f := strings.Fields(line); len(f) == 2 && !strings.HasSuffix(f[1], "^{}") {
			refs[f[1]] = f[0]
		}
	}
	return refs, nil
}

// HeadOnRemote reports whether head is on the remote whose refs are given:
// some ref of the remote is head, or a remote branch this repository has
// the commit of contains it. One `git rev-list head --not <those commits>`
// decides the latter: it lists nothing when head is reachable from one of
// them (--ignore-missing skips the commits this repository lacks).
func (r *Repo) HeadOnRemote(head string, refs map[string]string) bool {
	var stdin strings.Builder
	stdin.WriteString(head + "\n")
	for name, v := range refs {
		if v == head {
			return true
		}
		if !strings.HasPrefix(name, "refs/hub/") {
			stdin.WriteString("^" + v + "\n")
		}
	}
	cmd := exec.Command("git", "--git-dir="+r.GitDir, "rev-list", "--ignore-missing", "--max-count=1", "--stdin")
	cmd.Stdin = strings.NewReader(stdin.String())
	out, err := cmd.Output()
	return err == nil && strings.TrimSpace(string(out)) == ""
}

func (r *Repo) hasCommit(oid string) bool {
	_, err := Git(r.GitDir, "cat-file", "-e", oid+"^{commit}")
	return err == nil
}

// EnsureHead makes sure head is in this repository: fetched from the
// remote (the source branch first, then the id itself) when missing.
func (r *Repo) EnsureHead(head, source string) error {
	if r.hasCommit(head) {
		return nil
	}
	if r.Remote == "." {
		return fmt.Errorf("%w: commit %s is not in %s", ErrHeadNotOnRemote, head, r.GitDir)
	}
	if source != "" {
		if _, err := Git(r.GitDir, "fetch", "-q", r.Remote, source); err == nil && r.hasCommit(head) {
			return nil
		}
	}
	if _, err := Git(r.GitDir, "fetch", "-q", r.Remote, head); err == nil && r.hasCommit(head) {
		return nil
	}
	return fmt.Errorf("%w: commit %s cannot be fetched from %s (its source branch %q moved or was deleted?): fetch it by hand", ErrHeadNotOnRemote, head, r.Remote, source)
}

// BaseTip is the base branch's commit on the remote (fetched), or here.
func (r *Repo) BaseTip(base string) (string, error) {
	if r.Remote == "." {
		out, err := Git(r.GitDir, "rev-parse", "--verify", "--quiet", base+"^{commit}")
		if err != nil {
			return "", fmt.Errorf("base branch %s does not exist in %s", base, r.GitDir)
		}
		return out, nil
	}
	if _, err := Git(r.GitDir, "fetch", "-q", r.Remote, base); err != nil {
		if refs, lerr := r.remoteRefs(); lerr == nil && refs[base] == "" {
			return "", fmt.Errorf("%w: base branch %s does not exist on %s yet, so there is nothing to diff against: the pull request's landing creates it (`git+ pr merge`), and until then its change is its head's whole history", ErrNoBase, base, r.Remote)
		}
		return "", fmt.Errorf("fetching base branch %s from %s: %w", base, r.Remote, err)
	}
	out, err := Git(r.GitDir, "rev-parse", "--verify", "--quiet", "FETCH_HEAD^{commit}")
	if err != nil {
		return "", fmt.Errorf("fetching base branch %s from %s: no commit fetched", base, r.Remote)
	}
	return out, nil
}

// CheckedOut is what Checkout did.
type CheckedOut struct {
	Branch string    // the local branch, without refs/heads/
	Ref    string    // refs/heads/<Branch>
	Old    string    // the branch's commit before ("" when created)
	PR     *pr.State // the pull request checked out (its Head)
}

// Checkout makes a local branch (branch; "" is pr/ and the id's first 8
// characters) at pull request id's head in the work tree workTree and
// switches to it, fetching a missing head (EnsureHead). An existing branch
// at another commit is moved only with force.
func (r *Repo) Checkout(t *trust.State, id, branch string, force bool, workTree string) (*CheckedOut, error) {
	if r.Bare {
		return nil, fmt.Errorf("%s is a bare repository: run `git+ pr checkout` in a clone", r.GitDir)
	}
	st, _, err := r.PRState(id, t)
	if err != nil {
		return nil, err
	}
	if err := r.EnsureHead(st.Head, st.Source); err != nil {
		return nil, err
	}
	if branch == "" {
		branch = "pr/" + st.ID[:8]
	}
	ref, err := BranchRef(branch)
	if err != nil {
		return nil, fmt.Errorf("--branch: %w", err)
	}
	name := strings.TrimPrefix(ref, "refs/heads/")
	cur, _ := Git(r.GitDir, "rev-parse", "--verify", "--quiet", ref)
	args := []string{"checkout", "-q", "-b", name, st.Head}
	switch {
	case cur == st.Head:
		args = []string{"checkout", "-q", name}
	case cur != "" && !force:
		return nil, fmt.Errorf("branch %s exists at %s, not at pull request %s's head %s: pass --force to move it, or --branch NAME", name, Short(cur), st.ID, Short(st.Head))
	case cur != "":
		args = []string{"checkout", "-q", "-B", name, st.Head}
	}
	// Run in the work tree: checkout needs it, and --git-dir alone would
	// take the current directory as the work tree.
	cmd := exec.Command("git", append([]string{"-C", workTree}, args...)...)
	if out, err := cmd.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("git %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return &CheckedOut{Branch: name, Ref: ref, Old: cur, PR: st}, nil
}

// DiffRange is what `git+ pr diff` compares: the head against its merge
// base with the base branch as the remote holds it now (`git diff
// BaseTip...Head`), so commits that landed on the base meanwhile do not show.
type DiffRange struct {
	ID        string `json:"id"`
	Base      string `json:"base"`
	BaseTip   string `json:"baseTip"`
	Head      string `json:"head"`
	MergeBase string `json:"mergeBase"`
	Diff      string `json:"diff"` // filled by Run with stdout nil
}

// Run runs `git diff [opts] BaseTip...Head --` in r: onto stdout and stderr,
// or, with stdout nil, into d.Diff (git's standard error then goes into the
// error).
func (d *DiffRange) Run(r *Repo, opts []string, stdout, stderr io.Writer) error {
	args := append([]string{"--git-dir=" + r.GitDir, "diff"}, opts...)
	cmd := exec.Command("git", append(args, d.BaseTip+"..."+d.Head, "--")...)
	var err error
	if stdout == nil {
		var out []byte
		out, err = cmd.Output()
		d.Diff = string(out)
	} else {
		cmd.Stdout, cmd.Stderr = stdout, stderr // an *os.File goes to git as is: it pages and colours for a terminal
		err = cmd.Run()
	}
	if err != nil {
		return fmt.Errorf("git diff %s...%s: %w", Short(d.BaseTip), Short(d.Head), err)
	}
	return nil
}

// Diff settles pull request id's DiffRange, fetching the head and the base
// branch.
func (r *Repo) Diff(t *trust.State, id string) (*DiffRange, error) {
	st, _, err := r.PRState(id, t)
	if err != nil {
		return nil, err
	}
	if err := r.EnsureHead(st.Head, st.Source); err != nil {
		return nil, err
	}
	baseTip, err := r.BaseTip(st.Base)
	if err != nil {
		return nil, err
	}
	mb, err := Git(r.GitDir, "merge-base", baseTip, st.Head)
	if err != nil {
		return nil, fmt.Errorf("pull request %s: its head %s and %s share no history: %w", st.ID, Short(st.Head), st.Base, err)
	}
	return &DiffRange{ID: st.ID, Base: st.Base, BaseTip: baseTip, Head: st.Head, MergeBase: mb}, nil
}

// needBypass is NeedCap for hub.bypass on branch: plain hub.bypass, or
// hub.bypass:<pattern> matching it (docs/trust.md, "An audited bypass").
func needBypass(m *trust.Member, branch string) error {
	if m.CanBypass(branch) {
		return nil
	}
	return fmt.Errorf("member %s (key %s) lacks capability %s on %s: ask an admin to run `git+ member change %s --add-cap %s` (or %s)", m.Name, Fingerprint(m.Key), trust.CapBypass, branch, m.Name, trust.BypassCap(branch), trust.CapBypass)
}
