package policy

import (
	"strings"
	"testing"

	"github.com/gitplus/gitplus/hubrefs"
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
