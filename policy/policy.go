// Package policy is the boundary's judgement (docs/boundary.md): a pure function
// of an object store, the refs as they were before a push and the proposed
// updates, which accepts or refuses each update with a stable, coded reason
// (the Code* constants; README.md "Refusal codes"). It reads no clock,
// environment, file or process.
//
// Decisions where the design is silent:
//   - Every update is judged on its own against the refs before the push; a
//     hub event pushed together with a landing does not count for it.
//   - An update whose old value is not the ref's current value is ref-moved
//     (git would fail it anyway). old == new is accepted without judgement.
//   - Stored hub logs are read with lenient ceilings: they passed the
//     ceilings of their own push, and a later, lower ceiling must not freeze
//     the repository. New events are held to the rules' ceilings; the
//     events-per-ref ceiling counts the stored events too.
//   - A broken trust log refuses every update (trust-invalid or
//     missing-object). A pull request log that cannot be read or folded
//     refuses (pr-invalid or missing-object) every landing the readable
//     pull requests do not justify, since its head might be the one in
//     question; a landing a readable pull request justifies is accepted,
//     so one damaged log does not stop every landing. Unprotected branches
//     and hub refs are unaffected.
//   - Trust events are judged against the state folded from their own
//     parents; pull request and queue events against the trust at the push.
//     Queue events are checked for signer, hub.queue, payload shape, root and
//     ref name only. The queue orders runners and authorizes nothing, with
//     one exception: under batch checks (checkEvery > 1) the group marks of
//     its queue.candidate events say which green steps vouch for which
//     (docs/boundary.md); they are read only when a chain step lacks its
//     own green checks.
//   - A tip with fewer than two parents that is not an open head is
//     not-a-pr-head; any other merge is judged as a candidate chain. Rules 1,
//     2, 4 and 5 are checked on every step before any merge is computed.
//     Several open pull requests with the same head: the first (by id) that
//     passes counts, and each may appear once in a chain.
//   - "Commits the push introduces" (provenance) are those reachable from
//     new that are not ancestors of old, each tested exactly (merge base),
//     never by committer dates. Creating a protected branch introduces every
//     commit reachable from new.
//   - Cache entries are whole decoded logs keyed by tip id (see cache.go),
//     the trust state folded at a trust tip (truststate.go) and, per trust
//     tip, a summary of every pull request (index.go); pull request folds
//     depend on trust, so they are redone when it moves. Rule 3 of a
//     candidate is learned when the queue publishes it and read at its
//     landing (facts.go).
package policy

import (
	"errors"
	"fmt"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/storer"

	"github.com/gitplus/gitplus/hubrefs"
	"github.com/gitplus/gitplus/hubrefs/pr"
	"github.com/gitplus/gitplus/hubrefs/trust"
	"github.com/gitplus/gitplus/mergetree"
)

// Refusal codes: stable, short, kebab-case (listed in README.md).
const (
	CodeNoTrust       = "no-trust"       // refs/hub/trust is absent: run git+ init
	CodeTrustInvalid  = "trust-invalid"  // the stored trust log cannot be folded
	CodeMissingObject = "missing-object" // an object the judgement needs cannot be read
	CodeBadUpdate     = "bad-update"     // the update itself is malformed (ref name, not a commit)
	CodeRefMoved      = "ref-moved"      // the ref moved since the pusher read it: fetch and push again

	// Hub refs (refs/hub/*).
	CodeHubDelete         = "hub-delete"
	CodeHubRewind         = "hub-rewind"
	CodeHubMalformed      = "hub-malformed"
	CodeHubUnknownType    = "hub-unknown-type"
	CodeHubCeiling        = "hub-ceiling"
	CodeHubNamespace      = "hub-namespace"
	CodeHubRoot           = "hub-root"
	CodeHubInvalid        = "hub-invalid"
	CodeUnsigned          = "unsigned"
	CodeBadSignature      = "bad-signature"
	CodeNotMember         = "not-member"
	CodeMissingCapability = "missing-capability"
	CodeWrongRepo         = "wrong-repo"
	CodeForeignParent     = "foreign-parent"
	CodeRefName           = "ref-name"

	// Protected branches.
	CodeProtectedDelete   = "protected-delete"
	CodeNonFastForward    = "non-fast-forward"
	CodeNotAPRHead        = "not-a-pr-head"
	CodePRClosed          = "pr-closed"
	CodeNotApproved       = "not-approved"
	CodeUnresolvedThreads = "unresolved-threads"
	CodeChecksMissing     = "checks-missing"
	CodeChecksFailed      = "checks-failed"
	CodeCandidatesOff     = "candidates-off"
	CodeChainTooDeep      = "chain-too-deep"
	CodeCandidateParents  = "candidate-parents"
	CodeCandidateTree     = "candidate-tree"
	CodeCandidateConflict = "candidate-conflict"
	CodeDuplicatePR       = "duplicate-pr"
	CodeProvenance        = "provenance"
	CodePRInvalid         = "pr-invalid"
	CodeGroupTooLong      = "group-too-long"    // a batch group mark claims more steps than checkEvery
	CodePRDraft           = "pr-draft"          // the pull request is a draft (docs/events.md, "Drafts")
	CodeChangesRequested  = "changes-requested" // blockOnChangesRequested and a reviewer's latest verdict is changes (docs/trust.md, "Vetoes")
)

// Objects is what policy reads: go-git's encoded object storer (for the
// hubrefs readers) and mergetree's raw Store. ReadObject reports a missing
// object with an error wrapping mergetree.ErrMissingObject.
type Objects interface {
	storer.EncodedObjectStorer
	mergetree.Store
}

type goGitObjects struct {
	storer.EncodedObjectStorer
	*mergetree.GoGitStore
}

func (g goGitObjects) ReadObject(h plumbing.Hash) (plumbing.ObjectType, []byte, error) {
	return g.GoGitStore.ReadObject(h)
}

// GoGitObjects adapts a go-git object storer (memory, filesystem, or the
// receive package's layered quarantine store) to Objects.
func GoGitObjects(s storer.EncodedObjectStorer) Objects {
	return goGitObjects{EncodedObjectStorer: s, GoGitStore: mergetree.NewGoGitStore(s)}
}

// Update is one proposed ref update. A zero Old creates the ref; a zero New
// deletes it.
type Update struct {
	Ref      string
	Old, New plumbing.Hash
}

// Verdict is the judgement of one update. Code "" means accepted; otherwise
// Code is one of the Code* constants and Reason a sentence naming what is
// wrong and what to do.
type Verdict struct {
	Update Update
	Code   string
	Reason string
}

// Accepted reports whether the update was accepted.
func (v Verdict) Accepted() bool { return v.Code == "" }

// Line is the hook's line for a refused update (docs/boundary.md):
// "git+: refused <ref>: [<code>] <reason>"; "" when accepted.
func (v Verdict) Line() string {
	if v.Accepted() {
		return ""
	}
	return "git+: refused " + v.Update.Ref + ": [" + v.Code + "] " + v.Reason
}

// Input is everything a judgement reads.
type Input struct {
	Objects Objects
	// Refs are the refs as they were before the push: at least
	// refs/hub/trust, every updated ref, and — unless PRRefs is set — every
	// pull request ref (refs/hub/pr/*).
	Refs    map[string]plumbing.Hash
	Updates []Update
	Cache   Cache // optional fold cache; nil folds from scratch
	// PRRefs, when set, reads pull request refs on demand instead of Refs.
	// A landing is then judged first from the pull request index, reading
	// only the refs of the pull requests it names for the pushed revision
	// (index.go); every pull request ref is read only before a refusal
	// that depends on which pull requests exist.
	PRRefs RefSource
	// Pusher is who sent the push; Served says it arrived through git+
	// serve (the default of requireKnownPusher). See pusher.go.
	Pusher Pusher
	Served bool
	// HostIdentity says the repository's operator named where another
	// host's identity comes from (gitplus.pusher): requireKnownPusher
	// then defaults to on. HostNote, when set, says why no host identity
	// came with this push, for the refusal (e.g. "gitplus.pusher is
	// env:GL_USER and GL_USER is not set").
	HostIdentity bool
	HostNote     string
	// Offline says there is no push (git+ verify --ref): who pushes is not
	// judged, only content.
	Offline bool
	// Clock is the server's clock and the bound on new events' times
	// (clock.go); nil judges no times (git+ verify, tests).
	Clock *Clock
}

// RefSource reads refs on demand (receive reads them from the repository).
type RefSource interface {
	// Ref returns the value of the named ref; zero when it does not exist.
	Ref(name string) (plumbing.Hash, error)
	// Under returns every ref whose name starts with prefix.
	Under(prefix string) (map[string]plumbing.Hash, error)
}

// Cache holds decoded hub logs keyed by a hub ref's tip id, and what is
// derived from them (the trust state, the pull request index, merge facts).
// It is trusted like the git directory that holds it: a well-formed entry
// for its key is believed whole (docs/foldcache.md). An entry that does not
// decode or does not describe its key is ignored and rebuilt.
type Cache interface {
	Get(key plumbing.Hash) ([]byte, bool)
	Put(key plumbing.Hash, value []byte)
}

// FreshCache is a Cache whose Get returns, every time, a new buffer that no
// one else holds and nothing writes afterwards (receive.DirCache reads each
// file into one). The decoders of the largest entries, the pull request
// view and queue states, then take the strings they return as views of that
// buffer instead of copying it (docs/scale.md, "What still grows with N").
// FreshGets only marks the type.
type FreshCache interface {
	Cache
	FreshGets()
}

// freshGets reports whether c's buffers may be kept as they are.
func freshGets(c Cache) bool {
	_, ok := c.(FreshCache)
	return ok
}

// Judge judges every update against in.Refs and returns one verdict per
// update, in the same order. The trust log and every pull request are folded
// once per call, not per update.
func Judge(in Input) []Verdict {
	out := make([]Verdict, len(in.Updates))
	j := newJudge(in)
	for i, u := range in.Updates {
		out[i] = Verdict{Update: u}
		if err := j.update(u); err != nil {
			var r *refusal
			if !errors.As(err, &r) {
				r = &refusal{Code: CodeBadUpdate, Reason: err.Error()}
			}
			out[i].Code, out[i].Reason = r.Code, r.Reason
		}
	}
	accepted := true
	for _, v := range out {
		accepted = accepted && v.Accepted()
	}
	if accepted {
		j.flushIndex()
	}
	return out
}

// judge holds what one Judge call has read and folded.
type judge struct {
	in      Input
	commits *commits
	logs    map[plumbing.Hash][]hubrefs.Event

	trustErr error        // the trust log cannot be read or folded
	trust    *trust.State // current trust
	rules    trust.Rules
	ceil     hubrefs.Ceilings

	prsDone   bool
	allPRs    bool                     // read every pull request ref, even with in.PRRefs
	fromIndex bool                     // prs and heads come from the index alone; refs checked on use
	checked   map[string]bool          // fromIndex: pull request refs read, whether at their indexed tip
	prTips    map[string]plumbing.Hash // !fromIndex: every pull request ref
	prs       map[string]prSummary     // by ref name: every readable pull request
	prErrs    []error                  // pull requests that cannot be read or folded
	heads     map[string][]string      // "<base> <head>" → refs of open pull requests
	full      map[string]*pr.State     // by ref name: the pull requests folded so far

	// merges keeps parsed commits and trees across the merges of one
	// judgement: objects are immutable by id, so a chain's steps share
	// their merge-base walks instead of re-reading the steps below them.
	merges *mergetree.Cache

	learned    int                       // merge facts computed for candidate branches (facts.go)
	facts      map[plumbing.Hash]*commit // merge facts looked up (nil: none)
	reindexed  []prSummary               // pull requests this push moves, for the index (flushIndex)
	trustMoved bool                      // this push moves refs/hub/trust

	changedOf map[plumbing.Hash][]string // changed paths the merge facts carry (changedfacts.go)
}

func newJudge(in Input) *judge {
	merges := mergetree.NewCache()
	j := &judge{in: in, commits: newCommits(in.Objects, merges), logs: map[plumbing.Hash][]hubrefs.Event{}, merges: merges}
	tip, ok := in.Refs[hubrefs.TrustRef]
	if !ok || tip.IsZero() {
		j.trustErr = refuse(CodeNoTrust, "this repository has no %s; run git+ init", hubrefs.TrustRef)
		return j
	}
	st, err := j.foldTrust(tip)
	if err != nil {
		j.trustErr = err
		return j
	}
	j.trust, j.rules = st, st.Rules
	j.ceil = hubrefs.Ceilings{EventsPerRef: st.Rules.Ceilings.EventsPerRef, EventBytes: st.Rules.Ceilings.EventBytes, Parents: st.Rules.Ceilings.ParentsPerEvent}
	return j
}

// storedErr explains why a stored hub log cannot be used.
func (j *judge) storedErr(code, ref string, err error) error {
	if isMissing(err) {
		return &refusal{Code: CodeMissingObject, Reason: fmt.Sprintf("%s cannot be read: %v", ref, err), err: err}
	}
	return &refusal{Code: code, Reason: fmt.Sprintf("%s cannot be read (%v); repair it from a good replica", ref, err), err: err}
}

// update judges one update.
func (j *judge) update(u Update) error {
	if j.trustErr != nil {
		return j.trustErr
	}
	if u.Ref == "" || !strings.HasPrefix(u.Ref, "refs/") {
		return refuse(CodeBadUpdate, "%q is not a full ref name", u.Ref)
	}
	if u.Old == u.New {
		return nil // nothing changes
	}
	cur := j.in.Refs[u.Ref]
	if strings.HasPrefix(u.Ref, "refs/hub/") {
		return j.hub(u, cur)
	}
	if cur != u.Old {
		return refuse(CodeRefMoved, "%s is at %s, not %s as the push expects; fetch and push again", u.Ref, short(cur), short(u.Old))
	}
	if err := j.pusher(u); err != nil {
		return err
	}
	err := j.branch(u)
	if !j.prDependent(err) {
		return err
	}
	if j.fromIndex {
		// Judged from the index and the refs it named: the refusal is
		// final only once every pull request ref has been read.
		j.prsDone, j.allPRs = false, true
		if err = j.branch(u); !j.prDependent(err) {
			return err
		}
	}
	if len(j.prErrs) > 0 {
		// A pull request that cannot be read might be the one that
		// justifies u: say so rather than refuse for want of it.
		return j.prErrs[0]
	}
	return err
}

// prDependent reports whether err is a refusal that a pull request the
// judgement did not see could have turned into an acceptance.
func (j *judge) prDependent(err error) bool {
	var r *refusal
	return err != nil && errors.As(err, &r) && dependsOnPRs[r.Code]
}

// dependsOnPRs are the refusals a pull request the index does not know (or
// holds at an older tip) could turn into an acceptance.
var dependsOnPRs = map[string]bool{
	CodeNotAPRHead: true, CodePRClosed: true, CodeNotApproved: true, CodeUnresolvedThreads: true,
	CodeChecksMissing: true, CodeChecksFailed: true, CodeCandidatesOff: true, CodeDuplicatePR: true,
	CodePRDraft: true, CodeChangesRequested: true,
}

func short(h plumbing.Hash) string {
	if h.IsZero() {
		return "nothing (absent)"
	}
	return h.String()[:12]
}
