package policy

import (
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/gitplus/gitplus/hubrefs"
)

// TestSquashMergeAlone: the squash step pr merge pushes (one step on a
// tip the head is not rebased on, the required checks green on the head
// only) lands as a direct landing of the head would, also while the queue
// is paused, and verify --branch justifies it from its pr.merged; the same
// step with its own checks is the queue's candidate, which the pause
// stops; with the head's checks missing the audit refuses it too.
func TestSquashMergeAlone(t *testing.T) {
	w := newWorld(t, rulesSquash)
	tip := w.commit(w.c0, "m", "m\n")
	w.refs[main] = tip
	p := w.ready(w.commit(w.c0, "a", "a\n"))
	s := w.squashOf(tip, p, "", plumbing.ZeroHash)
	if v := w.judge1(up(main, tip, s)); !v.Accepted() {
		t.Fatalf("pr merge's squash step, green at the head: %+v", v)
	}

	ref := hubrefs.QueueRefPrefix + queueID
	w.event(ref, "queuer", hubrefs.QueueOpened{Base: w.base(hubrefs.TypeQueueOpened), ID: queueID, Target: main})
	w.event(ref, "queuer", hubrefs.QueuePaused{Base: w.base(hubrefs.TypeQueuePaused), Reason: "freeze"})
	if v := w.judge1(up(main, tip, s)); !v.Accepted() {
		t.Fatalf("pr merge's squash step while the queue is paused: %+v", v)
	}
	q := w.open(w.commit(w.c0, "b", "b\n")).approve("bob")
	sq := w.squashOf(tip, q, "", plumbing.ZeroHash)
	q.check("ci", sq, "success")
	if v := w.judge1(up(main, tip, sq)); v.Code != CodeQueuePaused {
		t.Fatalf("a checked squash candidate while the queue is paused: %+v", v)
	}

	w.refs[main] = s
	w.event(p.ref, "alice", hubrefs.PRMerged{Base: w.base(hubrefs.TypePRMerged), Revision: p.head.String(), Branch: main, Commit: s.String()})
	rep, err := Audit(AuditInput{Objects: GoGitObjects(w.store), Refs: w.refs, Branch: main, Since: tip})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Unjustified) != 0 || len(rep.Landings) != 1 || rep.Landings[0].Kind != LandingSquash || !strings.HasPrefix(rep.Landings[0].Record, "pr.merged") {
		t.Fatalf("audit of pr merge's squash step: %+v", rep)
	}

	// The same landing, the head never checked: written around the boundary.
	w2 := newWorld(t, rulesSquash)
	tip2 := w2.commit(w2.c0, "m", "m\n")
	p2 := w2.open(w2.commit(w2.c0, "a", "a\n")).approve("bob")
	s2 := w2.squashOf(tip2, p2, "", plumbing.ZeroHash)
	w2.refs[main] = s2
	w2.event(p2.ref, "alice", hubrefs.PRMerged{Base: w2.base(hubrefs.TypePRMerged), Revision: p2.head.String(), Branch: main, Commit: s2.String()})
	rep, err = Audit(AuditInput{Objects: GoGitObjects(w2.store), Refs: w2.refs, Branch: main, Since: tip2})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Unjustified) != 1 || rep.Unjustified[0].Commit != s2 || rep.Unjustified[0].Code != CodeChecksMissing {
		t.Fatalf("audit of an unchecked squash step: %+v", rep.Unjustified)
	}
}
