package repo

// Views: pull requests and queues as the readers print them (--json), built
// from the folds.

import (
	"fmt"
	"sort"
	"strings"

	"github.com/gitplus/gitplus/hubrefs"
	"github.com/gitplus/gitplus/hubrefs/pr"
	"github.com/gitplus/gitplus/hubrefs/queue"
	"github.com/gitplus/gitplus/hubrefs/trust"
	"github.com/gitplus/gitplus/receive"
	"github.com/go-git/go-git/v5/plumbing"
)

// PRCheck is one check result of a pull request.
type PRCheck struct {
	Name       string `json:"name"`
	Revision   string `json:"revision"`
	Conclusion string `json:"conclusion"`
	AtHead     bool   `json:"atHead"`
}

// PRThread is one review thread.
type PRThread struct {
	ID       string `json:"id"`
	Resolved bool   `json:"resolved"`
	// pr show only:
	Opener     string `json:"opener,omitempty"`
	Body       string `json:"body,omitempty"`
	ResolvedBy string `json:"resolvedBy,omitempty"`
	Resolution string `json:"resolution,omitempty"`
}

// PRReview is one review (pr show).
type PRReview struct {
	Reviewer string `json:"reviewer"`
	Verdict  string `json:"verdict"`
	Head     string `json:"head"`
	Current  bool   `json:"current"` // names the current head and base
	Body     string `json:"body,omitempty"`
	Time     int64  `json:"time"`
	Event    string `json:"event"`
	// Dismissed: a changes request a holder of hub.bypass dismissed
	// (docs/trust.md, "Vetoes").
	Dismissed bool `json:"dismissed,omitempty"`
}

// PRRun is one check run, started or completed (pr show).
type PRRun struct {
	Name       string `json:"name"`
	Revision   string `json:"revision"`
	Conclusion string `json:"conclusion,omitempty"` // "" for check.started
	By         string `json:"by"`
	Counts     bool   `json:"counts"` // its signer holds hub.check:<name> now
	URL        string `json:"url,omitempty"`
	Output     string `json:"output,omitempty"`  // the tail of the command's output (check run, check worker)
	Sandbox    string `json:"sandbox,omitempty"` // how the command ran, as its worker says (docs/ci.md)
	Time       int64  `json:"time"`
}

// PRQueue is where the pull request stands in a queue (pr show).
type PRQueue struct {
	Queue     string    `json:"queue"`
	Target    string    `json:"target"`
	State     string    `json:"state"` // queued, or left
	Position  int       `json:"position,omitempty"`
	Candidate string    `json:"candidate,omitempty"`
	Checks    []PRCheck `json:"checks,omitempty"`
	Waiting   string    `json:"waiting,omitempty"`
	Reason    string    `json:"reason,omitempty"` // why it left: landed, failed, conflict, stale, withdrawn
	Detail    string    `json:"detail,omitempty"`
}

// PRView is a pull request as `git+ pr list|show --json` prints it.
type PRView struct {
	ID                string     `json:"id"`
	State             string     `json:"state"`
	Title             string     `json:"title"`
	Body              string     `json:"body,omitempty"`
	Base              string     `json:"base"`
	Head              string     `json:"head"`
	Opener            string     `json:"opener"`
	OpenerKey         string     `json:"openerFingerprint"`
	Heads             []string   `json:"heads"`
	Approvals         []string   `json:"approvals"`
	Threads           []PRThread `json:"threads"`
	UnresolvedThreads int        `json:"unresolvedThreads"`
	Checks            []PRCheck  `json:"checks"`
	Merged            []PRMerged `json:"merged,omitempty"`
	Events            int        `json:"events"`
	Tip               string     `json:"tip"`
	Source            string     `json:"source,omitempty"`
	// Draft: cannot enter a queue nor land (docs/events.md, "Drafts").
	Draft bool `json:"draft,omitempty"`
	// ChangesRequested: the reviewers whose latest verdict is an
	// undismissed changes request; a branch with blockOnChangesRequested
	// refuses to land it (docs/trust.md, "Vetoes").
	ChangesRequested []string `json:"changesRequested,omitempty"`
	// Bypasses: the pr.bypassed that count (their author holds
	// hub.bypass now), oldest first (docs/trust.md, "An audited bypass").
	Bypasses []PRBypass `json:"bypasses,omitempty"`
	// pr show only:
	Reviews []PRReview `json:"reviews,omitempty"`
	Runs    []PRRun    `json:"runs,omitempty"`
	Queue   *PRQueue   `json:"queue,omitempty"`
	// Owners: the path owners entries the pull request triggers, previewed
	// from its diff against the merge base (owners.go); OwnersNote says
	// why there is no preview when there cannot be one.
	Owners     []OwnerPreview `json:"owners,omitempty"`
	OwnersNote string         `json:"ownersNote,omitempty"`
}

// PRBypass is one counting pr.bypassed.
type PRBypass struct {
	By     string `json:"by"`
	Head   string `json:"head"`
	Base   string `json:"base"`
	Reason string `json:"reason"`
	Event  string `json:"event"`
}

// PRMerged is one pr.merged record.
type PRMerged struct {
	Revision string `json:"revision"`
	Branch   string `json:"branch"`
	Commit   string `json:"commit"`
}

// NewPRView is the view of a pull request folded from events events.
func NewPRView(st *pr.State, events int) PRView {
	out := PRView{
		ID: st.ID, State: st.State, Title: st.Title, Body: st.Body, Base: st.Base, Head: st.Head,
		Opener: st.Opener.Name, Heads: append([]string{}, st.Heads...),
		Approvals: append([]string{}, st.Approvals...), Threads: []PRThread{},
		UnresolvedThreads: st.UnresolvedThreads, Checks: []PRCheck{}, Events: events, Tip: st.Tip.String(),
		Source: st.Source, Draft: st.Draft, ChangesRequested: append([]string(nil), st.Vetoes...),
	}
	if st.Opener.Key != nil {
		out.OpenerKey = Fingerprint(st.Opener.Key)
	}
	for th, resolved := range st.Threads {
		out.Threads = append(out.Threads, PRThread{ID: th, Resolved: resolved})
	}
	sort.Slice(out.Threads, func(i, j int) bool { return out.Threads[i].ID < out.Threads[j].ID })
	for k, v := range st.Checks {
		out.Checks = append(out.Checks, PRCheck{Name: k.Name, Revision: k.Revision, Conclusion: v, AtHead: k.Revision == st.Head})
	}
	sort.Slice(out.Checks, func(i, j int) bool {
		a, b := out.Checks[i], out.Checks[j]
		if a.AtHead != b.AtHead {
			return a.AtHead
		}
		if a.Name != b.Name {
			return a.Name < b.Name
		}
		return a.Revision < b.Revision
	})
	for _, m := range st.Merged {
		out.Merged = append(out.Merged, PRMerged{Revision: m.Revision, Branch: m.Branch, Commit: m.Commit})
	}
	for _, b := range st.Bypassed {
		out.Bypasses = append(out.Bypasses, PRBypass{By: b.By, Head: b.Head, Base: b.Base, Reason: b.Reason, Event: b.Event.String()})
	}
	return out
}

// QueueSummary is one queue as `git+ queue list --json` prints it.
type QueueSummary struct {
	ID      string `json:"id"`
	Target  string `json:"target"`
	Closed  bool   `json:"closed"`
	Counts  bool   `json:"counts"` // the queue that counts for its target
	Entries int    `json:"entries"`
	Events  int    `json:"events"`
}

// QueueEntry is one entry of a queue, queued or left.
type QueueEntry struct {
	PR        string `json:"pr"`
	Head      string `json:"head"`
	Base      string `json:"base,omitempty"`
	State     string `json:"state"` // queued or left
	Position  int    `json:"position,omitempty"`
	Priority  string `json:"priority,omitempty"` // queued: high or normal
	Reason    string `json:"reason,omitempty"`
	Detail    string `json:"detail,omitempty"`
	Candidate string `json:"candidate,omitempty"`
	Branch    string `json:"branch,omitempty"`
	// Lane: the partition whose lane the entry's candidate was built in
	// (docs/queue.md, "Partitions and lanes"); absent without one.
	Lane string `json:"lane,omitempty"`
	// Waiting says why a queued entry has not landed yet: review missing,
	// a check pending or red on which candidate, or the entries ahead of
	// it (the page's reasons, hooks/webview).
	Waiting string `json:"waiting,omitempty"`
}

// QueueView is a queue as `git+ queue show --json` prints it.
type QueueView struct {
	QueueSummary
	Tip     string       `json:"tip"`
	Active  []QueueEntry `json:"active"`
	Left    []QueueEntry `json:"left"`
	Resets  []string     `json:"resets"`
	Ignored int          `json:"ignored"`
	// TargetRed: why the queue believes the target is broken and stopped
	// evicting (docs/queue.md, "A red target"); empty otherwise.
	TargetRed string `json:"targetRed,omitempty"`
	// Paused: who paused the queue, when (Unix seconds) and why; absent
	// while it runs (docs/queue.md, "Pausing a queue").
	Paused *queue.Pause `json:"paused,omitempty"`
	// WakeFailures: the server's wake rules whose latest run failed
	// (wakeview.go), when the server's records can be read.
	WakeFailures []WakeFailure `json:"wakeFailures,omitempty"`
}

// PRs lists the pull requests (only the open ones unless all), each folded
// from the fold cache's pull request view when its ref has not moved
// (docs/scale.md). A pull request that cannot be read (a malformed or
// damaged record) is left out and named in a warning, so that one such ref
// does not hide every other (docs/events.md, "Titles").
func (r *Repo) PRs(t *trust.State, all bool) ([]PRView, []string, error) {
	refs, err := receive.ReadRefsUnder(r.GitDir, []string{hubrefs.PRRefPrefix}, nil)
	if err != nil {
		return nil, nil, fmt.Errorf("listing refs in %s: %w", r.GitDir, err)
	}
	views, warnings := r.prsAt(t, all, refs)
	return views, warnings, nil
}

// prsAt is PRs over the pull request refs refs.
func (r *Repo) prsAt(t *trust.State, all bool, refs map[string]plumbing.Hash) ([]PRView, []string) {
	out := []PRView{}
	var warnings []string
	for _, f := range r.Reader(EventCeilings(t)).PRs(t.Tip, t, refs) {
		if f.Err != nil {
			warnings = append(warnings, fmt.Sprintf("%s in %s cannot be read and is left out: %v (a record stored before a rule that now refuses it, or a damaged one: repair it from a good replica, or remove it on the server with git update-ref -d %s)", f.Ref, r.GitDir, f.Err, f.Ref))
			continue
		}
		if f.State.State != pr.Open && !all {
			continue
		}
		out = append(out, NewPRView(f.State, f.Events))
	}
	return out, warnings
}

func summary(q *QueueLog, logs map[string]*QueueLog) QueueSummary {
	counts := false
	if s := SelectLog(logs, q.State.Target); s != nil && s.State.ID == q.State.ID {
		counts = true
	}
	return QueueSummary{ID: q.State.ID, Target: q.State.Target, Closed: q.State.Closed, Counts: counts, Entries: len(q.State.Entries), Events: q.State.Count}
}

// Queues lists every queue, by id, with warnings for queues that could not
// be read (QueueLogs).
func (r *Repo) Queues(t *trust.State) ([]QueueSummary, []string, error) {
	logs, warnings, err := r.QueueLogs(t)
	if err != nil {
		return nil, nil, err
	}
	ids := make([]string, 0, len(logs))
	for id := range logs {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	list := []QueueSummary{}
	for _, id := range ids {
		list = append(list, summary(logs[id], logs))
	}
	return list, warnings, nil
}

// ShowQueue is the view of queue id, or with id "" of the queue counting
// for target: the active entries (with position and latest candidate),
// every entry that left in causal order, and whether the target is red.
// Waiting is left to the caller (the page's reasons, hooks/webview).
func (r *Repo) ShowQueue(t *trust.State, id, target string) (*QueueView, error) {
	logs, _, err := r.QueueLogs(t)
	if err != nil {
		return nil, err
	}
	var q *QueueLog
	if id != "" {
		if q, err = r.QueueLog(id, t); err != nil {
			return nil, err
		}
	} else {
		if target, err = BranchRef(target); err != nil {
			return nil, fmt.Errorf("--target: %w", err)
		}
		if q = SelectLog(logs, target); q == nil {
			return nil, fmt.Errorf("no open queue for %s in %s (open one with `git+ queue open --target %s`)", target, r.Where(), target)
		}
	}
	j := &QueueView{QueueSummary: summary(q, logs), Tip: q.State.Tip.String(), Active: []QueueEntry{}, Left: []QueueEntry{}, Resets: []string{}, Ignored: len(q.State.Ignored)}
	for i, e := range q.State.Entries {
		ej := QueueEntry{PR: e.PR, Head: e.Head, Base: e.Base, State: "queued", Position: i + 1, Priority: e.Priority}
		if c, ok := q.State.LatestCandidate(e.PR); ok && c.Invalidated.IsZero() && c.Head == e.Head {
			ej.Candidate, ej.Branch, ej.Lane = c.Step, c.Branch, c.Partition
		}
		j.Active = append(j.Active, ej)
	}
	for _, l := range q.State.Left {
		j.Left = append(j.Left, QueueEntry{PR: l.PR, Head: l.Head, State: "left", Reason: l.Reason, Detail: l.Detail})
	}
	for _, rs := range q.State.Resets {
		j.Resets = append(j.Resets, rs.Tip)
	}
	tip, err := r.RemoteRef(q.State.Target)
	if err != nil {
		return nil, fmt.Errorf("reading the queue's target %s: %w", q.State.Target, err)
	}
	if !tip.IsZero() {
		j.TargetRed = queue.RedTarget(q.State, tip.String(), nil)
	}
	if p := q.State.Paused; p.On() {
		j.Paused = &p
	}
	return j, nil
}

// MemberView is a member as `git+ member list --json` prints it.
type MemberView struct {
	Name        string   `json:"name"`
	Key         string   `json:"key"`
	Fingerprint string   `json:"fingerprint"`
	Caps        []string `json:"caps"` // sorted
}

// Members lists t's members by name.
func Members(t *trust.State) []MemberView {
	out := []MemberView{}
	for _, n := range t.MemberNames() {
		m := t.Members[n]
		caps := append([]string{}, m.Caps...)
		sort.Strings(caps)
		out = append(out, MemberView{Name: m.Name, Key: m.KeyLine, Fingerprint: Fingerprint(m.Key), Caps: caps})
	}
	return out
}

// Line is the member's line in `git+ member list`.
func (m MemberView) Line() string {
	return fmt.Sprintf("%-16s %s  %s", m.Name, m.Fingerprint, strings.Join(m.Caps, ","))
}

// AllowedSigners is t's members as git's gpg.ssh.allowedSignersFile, one
// line each. A member's principal is the e-mail of its event identity
// (NAME@hub.invalid): git finds the principal by key (ssh-keygen -Y
// find-principals), so it only has to be unique and free of spaces.
func AllowedSigners(t *trust.State) []string {
	var out []string
	for _, n := range t.MemberNames() {
		m := t.Members[n]
		out = append(out, fmt.Sprintf("%s namespaces=\"git\" %s", m.Name+"@hub.invalid", m.KeyLine))
	}
	return out
}
