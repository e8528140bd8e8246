package policy

import (
	"bytes"
	"errors"
	"fmt"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/gitplus/gitplus/hubrefs"
	"github.com/gitplus/gitplus/hubrefs/pr"
	"github.com/gitplus/gitplus/hubrefs/queue"
	"github.com/gitplus/gitplus/hubrefs/trust"
)

// Hub namespaces.
const (
	nsTrust = "trust"
	nsPR    = "pr"
	nsQueue = "queue"
)

// hubNamespace splits a hub ref into its namespace and id ("" for trust).
func hubNamespace(ref string) (ns, id string, ok bool) {
	if ref == hubrefs.TrustRef {
		return nsTrust, "", true
	}
	for _, p := range []struct{ prefix, ns string }{{hubrefs.PRRefPrefix, nsPR}, {hubrefs.QueueRefPrefix, nsQueue}} {
		if rest, found := strings.CutPrefix(ref, p.prefix); found && rest != "" && !strings.Contains(rest, "/") {
			return p.ns, rest, true
		}
	}
	return "", "", false
}

// typeNamespace is the namespace an event type belongs to.
func typeNamespace(t string) string {
	switch {
	case t == hubrefs.TypeRepoCreated || strings.HasPrefix(t, "member.") || t == hubrefs.TypeRulesSet || t == hubrefs.TypeTeamSet:
		return nsTrust
	case strings.HasPrefix(t, "queue."):
		return nsQueue
	default:
		return nsPR
	}
}

var rootType = map[string]string{nsTrust: hubrefs.TypeRepoCreated, nsPR: hubrefs.TypePROpened, nsQueue: hubrefs.TypeQueueOpened}

// hub judges an update of a hub ref (docs/events.md, docs/trust.md, docs/queue.md).
func (j *judge) hub(u Update, cur plumbing.Hash) error {
	ns, id, ok := hubNamespace(u.Ref)
	if !ok {
		return refuse(CodeHubNamespace, "%s is not a hub ref git+ knows; hub refs are %s, %s<uuid> and %s<uuid>", u.Ref, hubrefs.TrustRef, hubrefs.PRRefPrefix, hubrefs.QueueRefPrefix)
	}
	if u.New.IsZero() {
		return refuse(CodeHubDelete, "%s cannot be deleted: hub refs only move forward", u.Ref)
	}
	if ns == nsTrust && u.Old.IsZero() {
		return refuse(CodeHubRoot, "%s already exists; only git+ init writes its root; append to it instead", u.Ref)
	}
	if cur != u.Old {
		return refuse(CodeRefMoved, "%s is at %s, not %s as the push expects; fetch refs/hub/* and append again", u.Ref, short(cur), short(u.Old))
	}
	if ns == nsQueue && !u.Old.IsZero() {
		if sum, ok := j.queueSummary(u.Old); ok && sum.id == id {
			if j.queueFast(u, id, sum) == nil {
				return nil
			}
			// A refusal is judged again the whole way below, for the
			// exact code and reason.
		}
	}
	var old []hubrefs.Event
	oldIDs := map[plumbing.Hash]bool{}
	if !u.Old.IsZero() {
		var err error
		if old, err = j.readLog(u.Old); err != nil {
			return j.storedErr(CodeHubInvalid, u.Ref, err)
		}
		for _, ev := range old {
			oldIDs[ev.ID] = true
		}
	}
	fresh, err := j.readNew(u, len(old), oldIDs)
	if err != nil {
		return err
	}

	// DAG shape: one root for the whole ref, of the namespace's type.
	var roots []hubrefs.Event
	for _, ev := range fresh {
		if len(ev.Parents) == 0 {
			roots = append(roots, ev)
		}
	}
	switch {
	case u.Old.IsZero() && len(roots) == 0:
		return refuse(CodeHubRoot, "%s: the new events have no root", u.Ref)
	case u.Old.IsZero() && len(roots) > 1, !u.Old.IsZero() && len(roots) > 0:
		return refuse(CodeForeignParent, "%s would hold events of another ref (root event %s); every parent of an event must be an event of the same ref", u.Ref, roots[len(roots)-1].ID)
	}
	if len(roots) == 1 && roots[0].Type != rootType[ns] {
		return refuse(CodeHubRoot, "the root of %s must be %s, not %s (event %s)", u.Ref, rootType[ns], roots[0].Type, roots[0].ID)
	}
	for _, ev := range fresh {
		if typeNamespace(ev.Type) != ns {
			return refuse(CodeHubMalformed, "event %s is %s, which does not belong in %s", ev.ID, ev.Type, u.Ref)
		}
		if ev.Repo != j.trust.RepoID {
			return refuse(CodeWrongRepo, "event %s names repository %q, but this repository is %s", ev.ID, ev.Repo, j.trust.RepoID)
		}
	}

	all, err := hubrefs.CausalOrder(append(append([]hubrefs.Event{}, old...), fresh...))
	if err != nil {
		return refuse(CodeHubMalformed, "%s: %v", u.Ref, err)
	}
	switch ns {
	case nsTrust:
		err = j.authorizeTrust(u.Ref, all, fresh)
	case nsPR:
		var st *pr.State
		if st, err = j.authorizePR(u.Ref, id, all, fresh); err == nil {
			j.reindexed = append(j.reindexed, summarize(u.Ref, u.New, st))
		}
	case nsQueue:
		err = j.authorizeQueue(u.Ref, id, all, fresh)
	}
	if err != nil {
		return err
	}
	if err := j.recordTimes(u, fresh); err != nil {
		return err
	}
	if ns == nsQueue {
		j.rememberQueue(u, id, queueSum{events: len(old)}, fresh, all)
	} else {
		j.remember(u.New, all)
	}
	if !u.Old.IsZero() {
		// The ref moves on: its old tip's entry (and, for the trust log,
		// the pull request index of the old trust state) is not read again.
		j.forget(u.Old)
		if ns == nsTrust {
			j.forget(indexKey(u.Old))
			j.forget(openIndexKey(u.Old))
			j.forget(indexHeadKey(u.Old))
			j.forget(trustStateKey(u.Old))
			j.trustMoved = true
		}
	}
	return nil
}

// readNew reads, decodes and verifies the events reachable from u.New and
// not from u.Old, refusing a rewind, a parent that is not an event, a
// missing object and anything over the ceilings.
//
// nOld is the number of events at u.Old; oldIDs, when not nil, their ids
// (without them the walk stops at u.Old, and a push that does not descend
// from it is refused as one that would hold another ref's events).
func (j *judge) readNew(u Update, nOld int, oldIDs map[plumbing.Hash]bool) ([]hubrefs.Event, error) {
	if oldIDs[u.New] {
		return nil, refuse(CodeHubRewind, "%s would move back from %s to %s; hub refs only move forward", u.Ref, short(u.Old), short(u.New))
	}
	limit := j.ceil.EventsPerRef
	if limit <= 0 {
		limit = hubrefs.DefaultCeilings.EventsPerRef
	}
	var out []hubrefs.Event
	seen := map[plumbing.Hash]bool{u.New: true}
	child := map[plumbing.Hash]plumbing.Hash{}
	queue := []plumbing.Hash{u.New}
	metOld := false
	for len(queue) > 0 {
		id := queue[0]
		queue = queue[1:]
		if nOld+len(out) >= limit {
			return nil, refuse(CodeHubCeiling, "%s would hold more than %d events (the eventsPerRef ceiling)", u.Ref, limit)
		}
		what := "event " + id.String()
		if c, ok := child[id]; ok {
			what = fmt.Sprintf("%s, parent of event %s,", id, c)
		}
		t, raw, err := j.readBounded(id)
		if err != nil {
			if isMissing(err) {
				return nil, &refusal{Code: CodeMissingObject, Reason: fmt.Sprintf("%s: %s cannot be read; push it too", u.Ref, what), err: err}
			}
			return nil, &refusal{Code: CodeMissingObject, Reason: fmt.Sprintf("%s: reading %s: %v", u.Ref, what, err), err: err}
		}
		if t == plumbing.CommitObject && raw == nil {
			return nil, refuse(CodeHubCeiling, "%s: %s is larger than any event may be (eventBytes ceiling)", u.Ref, what)
		}
		if t != plumbing.CommitObject || !bytes.HasPrefix(raw, []byte("tree "+hubrefs.EmptyTree.String()+"\n")) {
			if c, ok := child[id]; ok {
				return nil, refuse(CodeForeignParent, "%s: event %s has parent %s, which is not an event (a source commit or another object); events never reach source commits — name commits in payloads instead", u.Ref, c, id)
			}
			return nil, refuse(CodeHubMalformed, "%s: %s is not an event (an empty-tree commit)", u.Ref, id)
		}
		ev, err := hubrefs.Decode(raw, j.ceil)
		if err != nil {
			return nil, decodeRefusal(u.Ref, id, err)
		}
		if ev.ID != id {
			return nil, refuse(CodeHubMalformed, "%s: object %s does not hash to its id", u.Ref, id)
		}
		if err := linearStep(u, ev); err != nil {
			return nil, err
		}
		out = append(out, ev)
		for _, p := range ev.Parents {
			if p == u.Old {
				metOld = true
				continue
			}
			if oldIDs[p] || seen[p] {
				continue
			}
			seen[p] = true
			child[p] = id
			queue = append(queue, p)
		}
	}
	if !u.Old.IsZero() && !metOld {
		for _, ev := range out {
			if len(ev.Parents) == 0 {
				return nil, refuse(CodeForeignParent, "%s would hold events of another ref (root event %s); every parent of an event must be an event of the same ref", u.Ref, ev.ID)
			}
		}
		return nil, refuse(CodeHubRewind, "%s: %s does not descend from %s; hub refs only move forward, one event on the tip after another: fetch %s, re-read it and append on its tip", u.Ref, short(u.New), short(u.Old), u.Ref)
	}
	return out, nil
}

// linearStep refuses a new event that joins: every hub log is one chain
// (docs/trust.md), so a new event has at most one parent. The new events
// then form a chain from u.New; readNew refuses it unless its oldest event's
// parent is u.Old (a fork written on an older event does not descend from
// the tip: CodeHubRewind).
func linearStep(u Update, ev hubrefs.Event) error {
	if len(ev.Parents) > 1 {
		return refuse(CodeHubNotLinear, "%s: event %s joins %d parents; hub logs are linear: fetch %s, re-read it and append one event on its tip", u.Ref, ev.ID, len(ev.Parents), u.Ref)
	}
	return nil
}

// decodeRefusal maps hubrefs.Decode's sentinels to codes.
func decodeRefusal(ref string, id plumbing.Hash, err error) error {
	code := CodeHubMalformed
	switch {
	case errors.Is(err, hubrefs.ErrUnsigned):
		return &refusal{Code: CodeUnsigned, Reason: fmt.Sprintf("%s: event %s is not signed; sign events with a member's SSH key", ref, id), err: err}
	case errors.Is(err, hubrefs.ErrBadSignature):
		code = CodeBadSignature
	case errors.Is(err, hubrefs.ErrCeiling):
		code = CodeHubCeiling
	case errors.Is(err, hubrefs.ErrUnknownType):
		code = CodeHubUnknownType
	case isMissing(err):
		code = CodeMissingObject
	}
	return &refusal{Code: code, Reason: fmt.Sprintf("%s: event %s: %v", ref, id, err), err: err}
}

func isFresh(fresh []hubrefs.Event) map[plumbing.Hash]bool {
	m := map[plumbing.Hash]bool{}
	for _, e := range fresh {
		m[e.ID] = true
	}
	return m
}

// authorizeTrust judges each new trust event against the trust state the
// event before it leaves (docs/trust.md): the log is linear (docs/trust.md),
// so that is the current state for the first new event, and each new event
// is applied in turn, exactly as trust.Fold applies it on every replica.
func (j *judge) authorizeTrust(ref string, all, fresh []hubrefs.Event) error {
	isNew := isFresh(fresh)
	st := j.trust.Clone()
	for _, ev := range all {
		if !isNew[ev.ID] {
			continue
		}
		if _, ok := st.MemberByKey(ev.Signer); !ok {
			return refuse(CodeNotMember, "%s: event %s (%s) is signed by a key that is not a member's; ask an admin to git+ member add it", ref, ev.ID, ev.Type)
		}
		if err := st.Apply(ev); err != nil {
			if errors.Is(err, hubrefs.ErrNotLinear) {
				return refuse(CodeHubNotLinear, "%s: %v", ref, err)
			}
			return authRefusal(ref, ev, err, trust.ErrUnauthorized, trust.ErrRepoMismatch, trust.ErrOrder, trust.ErrUnsigned,
				[]error{trust.ErrMalformed, trust.ErrUnknownType, trust.ErrBadKey, trust.ErrUnknownCap, trust.ErrBadRef, trust.ErrUnknownField, trust.ErrInvalidRules})
		}
	}
	return nil
}

// authRefusal maps a fold package's Authorize error to a code.
func authRefusal(ref string, ev hubrefs.Event, err, unauth, repo, order, unsigned error, malformed []error) error {
	code := CodeHubInvalid
	switch {
	case errors.Is(err, unauth):
		code = CodeMissingCapability
	case errors.Is(err, repo):
		code = CodeWrongRepo
	case errors.Is(err, order):
		code = CodeHubRoot
	case errors.Is(err, unsigned):
		code = CodeUnsigned
	default:
		for _, m := range malformed {
			if errors.Is(err, m) {
				code = CodeHubMalformed
			}
		}
	}
	return &refusal{Code: code, Reason: fmt.Sprintf("%s: event %s (%s) refused: %v", ref, ev.ID, ev.Type, err), err: err}
}

// authorizePR judges each new pull request event against the state before it
// and the trust current at the push (docs/events.md), and returns the pull
// request's state after them. The log is linear (docs/trust.md): all is the
// old events, then the new ones, each following the one before.
func (j *judge) authorizePR(ref, id string, all, fresh []hubrefs.Event) (*pr.State, error) {
	nOld := len(all) - len(fresh)
	var st *pr.State
	if nOld > 0 {
		s, err := pr.Fold(all[:nOld], j.trust)
		if err != nil {
			return nil, refuse(CodeHubInvalid, "%s: the events before %s do not fold: %v", ref, all[nOld].ID, err)
		}
		st = s
	}
	for _, ev := range all[nOld:] {
		if _, ok := j.trust.MemberByKey(ev.Signer); !ok {
			return nil, refuse(CodeNotMember, "%s: event %s (%s) is signed by a key that is not a member's; ask an admin to git+ member add it", ref, ev.ID, ev.Type)
		}
		if err := pr.Authorize(ev, st, j.trust); err != nil {
			return nil, authRefusal(ref, ev, err, pr.ErrUnauthorized, pr.ErrRepoMismatch, pr.ErrOrder, pr.ErrUnsigned,
				[]error{pr.ErrMalformed, pr.ErrUnknownType})
		}
		if ev.Type == hubrefs.TypePRMerged {
			if err := j.checkMerged(ref, ev, st); err != nil {
				return nil, err
			}
		}
		var err error
		if st == nil {
			st, err = pr.Fold([]hubrefs.Event{ev}, j.trust)
		} else {
			err = st.Apply(ev, j.trust)
		}
		if err != nil {
			if errors.Is(err, hubrefs.ErrNotLinear) {
				return nil, refuse(CodeHubNotLinear, "%s: %v", ref, err)
			}
			return nil, refuse(CodeHubInvalid, "%s: the pull request would not fold: %v", ref, err)
		}
	}
	if st.ID != id {
		return nil, refuse(CodeRefName, "%s holds pull request %s; a pull request lives at %s%s", ref, st.ID, hubrefs.PRRefPrefix, st.ID)
	}
	return st, nil
}

// authorizeQueue judges new queue events: signed by a current member holding
// hub.queue, a payload that passes queue.Validate (the one validation the
// fold uses too, docs/events.md), a root naming the ref (docs/queue.md), and
// a log the queue fold reads: whatever the boundary accepts, a runner can
// read.
func (j *judge) authorizeQueue(ref, id string, all, fresh []hubrefs.Event) error {
	if err := j.authorizeQueueEvents(ref, fresh); err != nil {
		return err
	}
	if all[0].Type != hubrefs.TypeQueueOpened {
		return refuse(CodeHubRoot, "%s: its root is not queue.opened", ref)
	}
	st, err := queue.Fold(all, j.trust)
	if err != nil {
		return refuse(CodeHubInvalid, "%s: the queue would not fold: %v", ref, err)
	}
	if st.ID != id {
		return refuse(CodeRefName, "%s holds queue %s; a queue lives at %s%s", ref, st.ID, hubrefs.QueueRefPrefix, st.ID)
	}
	return nil
}

// authorizeQueueEvents is what authorizeQueue asks of each new event.
func (j *judge) authorizeQueueEvents(ref string, fresh []hubrefs.Event) error {
	for _, ev := range fresh {
		m, ok := j.trust.MemberByKey(ev.Signer)
		if !ok {
			return refuse(CodeNotMember, "%s: event %s (%s) is signed by a key that is not a member's; ask an admin to git+ member add it", ref, ev.ID, ev.Type)
		}
		if !m.Has(trust.CapQueue) {
			return refuse(CodeMissingCapability, "%s: member %q signed event %s (%s) without holding %s", ref, m.Name, ev.ID, ev.Type, trust.CapQueue)
		}
		if _, err := queue.Validate(ev); err != nil {
			return refuse(CodeHubMalformed, "%s: event %s (%s): %v", ref, ev.ID, ev.Type, err)
		}
		if ev.Type == hubrefs.TypeQueueOpened && len(ev.Parents) > 0 {
			return refuse(CodeHubRoot, "%s: event %s: queue.opened is only the root of a queue ref", ref, ev.ID)
		}
	}
	return nil
}

// queueFast judges a push to a queue ref from the summary of the log at
// u.Old (logdelta.go), reading only the new events: it accepts exactly
// what the whole fold would, because every rule the fold applies to the
// new events depends on them, the trust state and the old log's summary
// alone (the old log folds, has its root and id, and its tip is u.Old).
// Any refusal is returned for hub to judge again the whole way.
func (j *judge) queueFast(u Update, id string, sum queueSum) error {
	fresh, err := j.readNew(u, sum.events, nil)
	if err != nil {
		return err
	}
	// readNew walked from u.New down to u.Old, one parent per event
	// (linearStep), newest first.
	for l, r := 0, len(fresh)-1; l < r; l, r = l+1, r-1 {
		fresh[l], fresh[r] = fresh[r], fresh[l]
	}
	prev := u.Old
	for _, ev := range fresh {
		if len(ev.Parents) != 1 || ev.Parents[0] != prev {
			return refuse(CodeHubNotLinear, "%s: event %s does not follow %s", u.Ref, ev.ID, prev)
		}
		prev = ev.ID
		if typeNamespace(ev.Type) != nsQueue {
			return refuse(CodeHubMalformed, "event %s is %s, which does not belong in %s", ev.ID, ev.Type, u.Ref)
		}
		if ev.Repo != j.trust.RepoID {
			return refuse(CodeWrongRepo, "event %s names repository %q, but this repository is %s", ev.ID, ev.Repo, j.trust.RepoID)
		}
	}
	if err := j.authorizeQueueEvents(u.Ref, fresh); err != nil {
		return err
	}
	if err := j.recordTimes(u, fresh); err != nil {
		return err
	}
	j.rememberQueue(u, id, sum, fresh, nil)
	return nil
}

// readBounded reads a would-be event, refusing to load an object larger
// than any event may be (payload ceiling plus room for headers and the
// signature) or of another type: only its type is then returned.
func (j *judge) readBounded(id plumbing.Hash) (plumbing.ObjectType, []byte, error) {
	obj, err := j.in.Objects.EncodedObject(plumbing.AnyObject, id)
	if err != nil {
		if errors.Is(err, plumbing.ErrObjectNotFound) {
			return plumbing.InvalidObject, nil, fmt.Errorf("%w: %s", hubrefs.ErrMissing, id)
		}
		return plumbing.InvalidObject, nil, err
	}
	limit := int64(j.ceil.EventBytes)
	if limit <= 0 {
		limit = int64(hubrefs.DefaultCeilings.EventBytes)
	}
	if obj.Type() != plumbing.CommitObject || obj.Size() > limit+64<<10 {
		return obj.Type(), nil, nil
	}
	return j.in.Objects.ReadObject(id)
}
