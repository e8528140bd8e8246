package queue

import (
	"errors"
	"strings"
	"testing"

	"github.com/gitplus/gitplus/hubrefs"
)

func TestValidatePause(t *testing.T) {
	for _, c := range []struct {
		typ, body, want string
	}{
		{hubrefs.TypeQueuePaused, `{"type":"queue.paused","repo":"r","reason":"incident 12"}`, ""},
		{hubrefs.TypeQueuePaused, `{"type":"queue.paused","repo":"r"}`, "says why"},
		{hubrefs.TypeQueuePaused, `{"type":"queue.paused","repo":"r","reason":"  "}`, "says why"},
		{hubrefs.TypeQueuePaused, `{"type":"queue.paused","repo":"r","reason":"a\nb"}`, "one line"},
		{hubrefs.TypeQueuePaused, `{"type":"queue.paused","repo":"r","reason":"` + strings.Repeat("x", MaxPauseReason+1) + `"}`, "at most"},
		{hubrefs.TypeQueuePaused, `{"type":"queue.paused","repo":"r","reason":"x","by":"eve"}`, "by"},
		{hubrefs.TypeQueueResumed, `{"type":"queue.resumed","repo":"r"}`, ""},
		{hubrefs.TypeQueueResumed, `{"type":"queue.resumed","repo":"r","reason":"x"}`, "reason"},
	} {
		_, err := Validate(hubrefs.Event{Type: c.typ, Repo: "r", Payload: []byte(c.body)})
		if c.want == "" {
			if err != nil {
				t.Errorf("%s: %v", c.body, err)
			}
			continue
		}
		if !errors.Is(err, ErrMalformed) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%.80s: %v, want ErrMalformed naming %q", c.body, err, c.want)
		}
	}
}

// TestPause: a paused queue folds who paused it, when and why; while it
// stands a pass builds, lands and settles nothing and the entries keep
// their places; after queue.resumed the same pass lands as before.
func TestPause(t *testing.T) {
	c := newCast(t)
	green := func(heads ...string) []chk { return []chk{{step(tip0, heads...), "success"}} }
	w := newWorld(t, c, []string{"a", "b"}, map[string]prSpec{"a": {head: "ha", checks: green("ha")}, "b": {head: "hb", checks: green("ha", "hb")}})
	before, err := PlanPass(w.input(t, tip0))
	if err != nil || before.Land == nil {
		t.Fatalf("the running queue does not land: %v %+v", err, before)
	}
	w.q.add(c.outsider, hubrefs.TypeQueuePaused, "reason", "no") // ignored: no hub.queue
	w.q.add(c.runner, hubrefs.TypeQueuePaused, "reason", "incident 12")
	at := w.q.evs[len(w.q.evs)-1]
	w.q.add(c.runner, hubrefs.TypeQueuePaused, "reason", "again") // ignored: already paused
	in := w.input(t, tip0)
	q := in.Queue
	if !q.Paused.On() || q.Paused.By != "runner" || q.Paused.Reason != "incident 12" || q.Paused.At != at.Time || q.Paused.Event != at.ID {
		t.Fatalf("pause %+v", q.Paused)
	}
	if len(q.Ignored) != 2 || !strings.Contains(q.Ignored[1].Reason, "already paused by runner") {
		t.Errorf("ignored %+v", q.Ignored)
	}
	p, err := PlanPass(in)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(p.Idle, "paused by runner") || !strings.Contains(p.Idle, "incident 12") || p.Appends() != 0 || p.Land != nil || len(p.Chain) != 0 || len(p.Publish) != 0 || len(p.Delete) != 0 {
		t.Errorf("paused pass: %+v", p)
	}
	if len(q.Entries) != 2 || q.Entries[0].PR != prID("a") || q.Entries[1].PR != prID("b") {
		t.Errorf("entries moved: %+v", q.Entries)
	}
	w.q.add(c.runner, hubrefs.TypeQueueResumed)
	w.q.add(c.runner, hubrefs.TypeQueueResumed) // ignored: not paused
	in = w.input(t, tip0)
	if in.Queue.Paused.On() || !strings.Contains(in.Queue.Ignored[len(in.Queue.Ignored)-1].Reason, "not paused") {
		t.Fatalf("resumed: %+v %+v", in.Queue.Paused, in.Queue.Ignored)
	}
	after, err := PlanPass(in)
	if err != nil || after.Land == nil || after.Land.New != before.Land.New {
		t.Fatalf("resumed pass %+v, want the landing of %+v", after.Land, before.Land)
	}
	w.q.add(c.runner, hubrefs.TypeQueueClosed)
	w.q.add(c.runner, hubrefs.TypeQueuePaused, "reason", "late") // ignored: closed
	if st, _ := Fold(w.q.evs, c.t); st.Paused.On() {
		t.Error("a closed queue was paused")
	}
}
