package hubrefs

import (
	"encoding/json"

	"github.com/go-git/go-git/v5/plumbing"
)

// Event types (docs/trust.md, docs/events.md, docs/queue.md).
const (
	TypeRepoCreated   = "repo.created"
	TypeMemberAdded   = "member.added"
	TypeMemberChanged = "member.changed"
	TypeMemberRemoved = "member.removed"
	TypeRulesSet      = "rules.set"
	TypeTeamSet       = "team.set"

	TypePROpened       = "pr.opened"
	TypePRUpdated      = "pr.updated"
	TypePRRetargeted   = "pr.retargeted"
	TypePRClosed       = "pr.closed"
	TypePRReopened     = "pr.reopened"
	TypePRMerged       = "pr.merged"
	TypeReviewSubmit   = "review.submitted"
	TypeReviewDismiss  = "review.dismissed"
	TypePRDraft        = "pr.draft"
	TypePRReady        = "pr.ready"
	TypePRBypassed     = "pr.bypassed"
	TypeThreadOpened   = "thread.opened"
	TypeThreadResolved = "thread.resolved"
	TypeCheckStarted   = "check.started"
	TypeCheckCompleted = "check.completed"

	TypeQueueOpened    = "queue.opened"
	TypeQueueEntered   = "queue.entered"
	TypeQueueCandidate = "queue.candidate"
	TypeQueueLeft      = "queue.left"
	TypeQueueReset     = "queue.reset"
	TypeQueueClosed    = "queue.closed"
	// TypeQueuePaused and TypeQueueResumed: a pause of the queue's
	// landings (docs/queue.md, "Pausing a queue").
	TypeQueuePaused  = "queue.paused"
	TypeQueueResumed = "queue.resumed"
)

// Ref prefixes under refs/hub.
const (
	TrustRef       = "refs/hub/trust"
	PRRefPrefix    = "refs/hub/pr/"
	QueueRefPrefix = "refs/hub/queue/"
)

// Event is one decoded, verified record of a hub ref.
type Event struct {
	ID      plumbing.Hash   // the event commit's id
	Parents []plumbing.Hash // parent events (none for a root)
	Type    string          // first message line, equal to Payload's "type"
	Repo    string          // the payload's "repo" (RepoID)
	Payload json.RawMessage // the whole JSON payload as written
	Time    int64           // committer time (orders ties only; never trusted)
	Signer  PublicKey       // the key whose SSH signature verified; nil if unsigned/unverified

	typed *typedPayload // Payload decoded when the event was read (PayloadInto), or nil
}

// Base is embedded in every payload.
type Base struct {
	Type string `json:"type"`
	Repo string `json:"repo"`
}

// Admin names the repository's first administrator in repo.created.
type Admin struct {
	Name string `json:"name"`
	Key  string `json:"key"` // authorized_keys line
}

// RepoCreated is the root of refs/hub/trust.
type RepoCreated struct {
	Base
	Name  string `json:"name"`
	Admin Admin  `json:"admin"`
}

// MemberAdded is member.added and member.changed.
type MemberAdded struct {
	Base
	Name string   `json:"name"`
	Key  string   `json:"key"`
	Caps []string `json:"caps"`
}

// MemberRemoved is member.removed.
type MemberRemoved struct {
	Base
	Name string `json:"name"`
}

// TeamSet is team.set: the whole membership of one team (docs/trust.md,
// "Teams").
type TeamSet struct {
	Base
	Team    string   `json:"team"`
	Members []string `json:"members"`
}

// RulesSet is rules.set; Rules is decoded by the trust fold.
type RulesSet struct {
	Base
	Rules json.RawMessage `json:"rules"`
}

// PROpened is the root of refs/hub/pr/<id>.
type PROpened struct {
	Base
	ID      string `json:"id"`
	BaseRef string `json:"base"`
	Head    string `json:"head"`
	Title   string `json:"title"`
	Body    string `json:"body,omitempty"`
	// Source is the branch the head was proposed from (refs/heads/...),
	// when the opener named one; informational (docs/cli.md).
	Source string `json:"source,omitempty"`
	// Draft opens the pull request as a draft (docs/events.md, "Drafts"):
	// it cannot enter a queue nor land until pr.ready. Written only when
	// true.
	Draft bool `json:"draft,omitempty"`
}

// PRUpdated is pr.updated.
type PRUpdated struct {
	Base
	Head string `json:"head"`
}

// PRRetargeted is pr.retargeted.
type PRRetargeted struct {
	Base
	BaseRef string `json:"base"`
}

// PRMerged is pr.merged.
type PRMerged struct {
	Base
	Revision string `json:"revision"`
	Branch   string `json:"branch"`
	Commit   string `json:"commit"`
	// Trust is the tip of refs/hub/trust the record was written under,
	// which the hook requires to be the trust log's tip at the push: the
	// causal bound the audit judges the landing's rules by
	// (docs/events.md, "pr.merged"; docs/trust.md, "The rules in force").
	// Absent only in records written before it existed.
	Trust string `json:"trust,omitempty"`
}

// Review is review.submitted.
type Review struct {
	Base
	Head    string `json:"head"`
	BaseRef string `json:"base"`
	Verdict string `json:"verdict"` // approve, changes, comment
	Body    string `json:"body,omitempty"`
}

// ReviewDismissed is review.dismissed: it lifts the veto of one
// review.submitted with verdict changes (docs/events.md, "Vetoes").
type ReviewDismissed struct {
	Base
	Review string `json:"review"` // the review.submitted event's id
	Reason string `json:"reason"`
}

// PRBypassed is pr.bypassed: a holder of hub.bypass lets head land
// directly on base whatever the review and check rules say (docs/trust.md,
// "An audited bypass").
type PRBypassed struct {
	Base
	Head    string `json:"head"`
	BaseRef string `json:"base"`
	Reason  string `json:"reason"`
}

// Thread is thread.opened and thread.resolved.
type Thread struct {
	Base
	Thread string `json:"thread"`
	Body   string `json:"body,omitempty"`
}

// Check is check.started and check.completed.
type Check struct {
	Base
	Name       string `json:"name"`
	Head       string `json:"head"`
	Conclusion string `json:"conclusion,omitempty"` // success, failure, cancelled
	URL        string `json:"url,omitempty"`
	// Attempts (check.completed of `git+ check run --retries`): how many
	// times the command ran before this conclusion; zero means once.
	Attempts int `json:"attempts,omitempty"`
	// Output (check.completed of `git+ check worker`): the tail of the
	// command's output, at most MaxCheckOutput bytes.
	Output string `json:"output,omitempty"`
	// Sandbox (check.completed): how the command ran, as the worker
	// attests it — "landlock-<ABI>" (followed by "+reads" when its reads
	// were confined to a partition's inputs), "env-only" or "off"
	// (docs/ci.md).
	Sandbox string `json:"sandbox,omitempty"`
	// Worker (check.started): which run took the lease, so two workers
	// signing with one key in the same second write different events and
	// the compare-and-swap tells them apart.
	Worker string `json:"worker,omitempty"`
}

// MaxCheckOutput bounds a check's recorded output tail.
const MaxCheckOutput = 2048

// QueueOpened is the root of refs/hub/queue/<id>.
type QueueOpened struct {
	Base
	ID     string `json:"id"`
	Target string `json:"target"`
}

// QueueEntered is queue.entered.
type QueueEntered struct {
	Base
	PR       string `json:"pr"`
	Head     string `json:"head"`
	BaseRef  string `json:"base"`
	Priority string `json:"priority,omitempty"` // high | normal (default)
}

// QueueCandidate is queue.candidate.
type QueueCandidate struct {
	Base
	PR      string   `json:"pr"`
	Head    string   `json:"head"`
	Step    string   `json:"step"`
	Parents []string `json:"parents"`
	Branch  string   `json:"branch"`
	// Batch checks (docs/queue.md, "Batch checks"), written only when the
	// target's checkEvery is above 1: the step is in a group of GroupSize
	// steps whose last step is GroupEnd. On the group's last step GroupEnd
	// equals Step: CI runs that one, and its green checks vouch for the
	// GroupSize-1 steps below it. On any other step CI runs nothing. Both
	// absent: the step is checked on its own.
	GroupEnd  string `json:"groupEnd,omitempty"`
	GroupSize int    `json:"groupSize,omitempty"`
	// Trial (batch checks only, with a group): the step is not in the
	// chain but in a trial, a group of the pull requests of a red group
	// built on the target on their own while the chain goes on without them
	// (docs/queue.md, "Searching a red group aside"). Its checks tell the
	// planner which of them are innocent; a trial is landable like any
	// candidate chain on the target's tip.
	Trial bool `json:"trial,omitempty"`
	// Run (a trial only): the check.completed event that made the group
	// red. The planner reads a run a trial cites as no verdict, as it does
	// one an eviction cites: should the same candidate commit come back
	// into the chain, it is checked again rather than judged by that run.
	Run string `json:"run,omitempty"`
	// Partition: the lane the step was built in, on a branch whose rules
	// name partitions (docs/queue.md, "Partitions and lanes"); absent for a
	// step of a global pull request or a branch without partitions. A
	// record of the runner's, shown and counted (queue show, stats, the
	// check's GITPLUS_CHECK_PARTITION); the boundary never reads it.
	Partition string `json:"partition,omitempty"`
}

// QueueLeft is queue.left.
type QueueLeft struct {
	Base
	PR     string `json:"pr"`
	Head   string `json:"head"`
	Reason string `json:"reason"` // landed, failed, conflict, stale, withdrawn
	Detail string `json:"detail,omitempty"`
	// Step and Run (failed only): the red candidate and the check.completed
	// event that made it red, so a re-entered pull request is not evicted
	// again by the same run (docs/queue.md, "Fresh verdicts").
	Step string `json:"step,omitempty"`
	Run  string `json:"run,omitempty"`
}

// QueuePaused is queue.paused: while it stands (until a queue.resumed)
// the queue builds and lands nothing and the boundary refuses candidate
// landings on its target. Reason says why, for people.
type QueuePaused struct {
	Base
	Reason string `json:"reason"`
}

// QueueReset is queue.reset.
type QueueReset struct {
	Base
	Tip    string `json:"tip"`
	Detail string `json:"detail,omitempty"`
}
