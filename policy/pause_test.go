package policy

import (
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/gitplus/gitplus/hubrefs"
	"github.com/gitplus/gitplus/hubrefs/queue"
)

// TestQueuePaused: while the queue that counts for main is paused the hook
// refuses a candidate chain it would otherwise accept, naming who paused
// it and why; a direct landing of a pull request head is judged as ever;
// after queue.resumed the chain lands.
func TestQueuePaused(t *testing.T) {
	w := newWorld(t, rulesQueue)
	steps, ps := batchChain(w, 2)
	for i, s := range steps {
		ps[i].check("ci", s, "success")
	}
	publish(w, "queuer", steps, ps, 0, 0)
	chain := up(main, w.c0, steps[1])
	if v := w.judge1(chain); !v.Accepted() {
		t.Fatalf("running queue: %+v", v)
	}
	ref := hubrefs.QueueRefPrefix + queueID
	w.event(ref, "queuer", hubrefs.QueuePaused{Base: w.base(hubrefs.TypeQueuePaused), Reason: "incident 12"})
	v := w.judge1(chain)
	if v.Code != CodeQueuePaused || !strings.Contains(v.Reason, "paused by queuer") || !strings.Contains(v.Reason, "incident 12") {
		t.Fatalf("paused queue: %+v", v)
	}
	direct := w.ready(w.commit(w.c0, "d", "d\n")).head
	if v := w.judge1(up(main, w.c0, direct)); !v.Accepted() {
		t.Fatalf("a direct landing while paused: %+v", v)
	}
	w.event(ref, "admin", hubrefs.Base{Type: hubrefs.TypeQueueResumed, Repo: repoID})
	if v := w.judge1(chain); !v.Accepted() {
		t.Fatalf("resumed by an admin: %+v", v)
	}
}

// TestQueuePausedReadsQueueStates: the hook takes the queue's state from
// the fold cache when it holds one for (trust tip, queue tip), as queue
// run stores it, instead of folding the log; with none it folds and
// stores one.
func TestQueuePausedReadsQueueStates(t *testing.T) {
	w := newWorld(t, rulesQueue)
	steps, ps := batchChain(w, 1)
	ps[0].check("ci", steps[0], "success")
	publish(w, "queuer", steps, ps, 0)
	chain := up(main, w.c0, steps[0])
	cache := &mapCache{m: map[plumbing.Hash][]byte{}}
	judge := func() Verdict {
		return Judge(Input{Objects: GoGitObjects(w.store), Refs: w.refs, Updates: []Update{chain}, Cache: cache})[0]
	}
	if v := judge(); !v.Accepted() {
		t.Fatalf("running queue: %+v", v)
	}
	ref := hubrefs.QueueRefPrefix + queueID
	trustTip, tip := w.refs[hubrefs.TrustRef], w.refs[ref]
	b, ok := cache.m[queueStateKey(trustTip, tip)]
	if !ok {
		t.Fatal("the hook folded the queue and stored no state")
	}
	// A stored state is taken whole: one that says paused refuses.
	st, _ := decodeQueueState(trustTip, tip, b, false)
	st.Paused = queue.Pause{By: "x", Reason: "from the cache", Event: tip}
	cache.m[queueStateKey(trustTip, tip)] = encodeQueueState(trustTip, tip, st)
	if v := judge(); v.Code != CodeQueuePaused || !strings.Contains(v.Reason, "from the cache") {
		t.Fatalf("a stored paused state: %+v", v)
	}
}
