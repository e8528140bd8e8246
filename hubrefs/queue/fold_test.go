package queue

import (
	"errors"
	"testing"

	"github.com/gitplus/gitplus/hubrefs"
)

func TestFold(t *testing.T) {
	c := newCast(t)
	a, b := prID("a"), prID("b")
	l := &log{}
	l.add(c.runner, hubrefs.TypeQueueOpened, "id", queueID, "target", main)
	l.add(c.runner, hubrefs.TypeQueueEntered, "pr", a, "head", hex("ha"), "base", main)
	l.add(c.outsider, hubrefs.TypeQueueEntered, "pr", prID("x"), "head", hex("hx"), "base", main) // ignored: no hub.queue
	l.add(c.runner, hubrefs.TypeQueueEntered, "pr", b, "head", hex("hb"), "base", main)
	l.add(c.runner, hubrefs.TypeQueueEntered, "pr", a, "head", hex("ha"), "base", main) // ignored: already queued
	l.add(c.runner, hubrefs.TypeQueueLeft, "pr", a, "head", hex("ha"), "reason", ReasonFailed, "detail", "ci")
	l.add(c.runner, hubrefs.TypeQueueEntered, "pr", a, "head", hex("ha2"), "base", main)              // re-enter: new position
	l.add(c.runner, hubrefs.TypeQueueLeft, "pr", prID("z"), "head", hex("hz"), "reason", ReasonStale) // ignored: not queued
	s1 := step(tip0, "hb")
	l.add(c.runner, hubrefs.TypeQueueCandidate, "pr", b, "head", hex("hb"), "step", s1.String(), "parents", []string{tip0.String(), hex("hb")}, "branch", Branch(main, b))
	l.add(c.runner, hubrefs.TypeQueueClosed)
	l.add(c.runner, hubrefs.TypeQueueEntered, "pr", prID("y"), "head", hex("hy"), "base", main) // ignored: closed
	s, err := Fold(l.evs, c.t)
	if err != nil {
		t.Fatal(err)
	}
	if s.ID != queueID || s.Target != main || !s.Closed || s.Count != 11 || s.Tip != l.evs[10].ID {
		t.Errorf("state %+v", s)
	}
	if len(s.Entries) != 2 || s.Entries[0].PR != b || s.Entries[1].PR != a || s.Entries[1].Head != hex("ha2") || s.Entries[1].EnteredAt != l.evs[6].ID {
		t.Errorf("entries %+v", s.Entries)
	}
	if len(s.Left) != 1 || s.Left[0].Reason != ReasonFailed || s.Left[0].Detail != "ci" {
		t.Errorf("left %+v", s.Left)
	}
	if len(s.Ignored) != 4 {
		t.Errorf("ignored %+v", s.Ignored)
	}
	if rec, ok := s.LatestCandidate(b); !ok || rec.Step != s1.String() || !rec.Invalidated.IsZero() {
		t.Errorf("candidate %+v", rec)
	}
	if _, ok := s.LatestCandidate(a); ok {
		t.Error("candidate for a")
	}
}

func TestFoldErrors(t *testing.T) {
	c := newCast(t)
	root := func() *log {
		l := &log{}
		return l.add(c.runner, hubrefs.TypeQueueOpened, "id", queueID, "target", main)
	}
	tests := []struct {
		name string
		l    *log
		want error
	}{
		{"no root", (&log{}).add(c.runner, hubrefs.TypeQueueClosed), ErrNoRoot},
		{"root by outsider", (&log{}).add(c.outsider, hubrefs.TypeQueueOpened, "id", queueID, "target", main), ErrNoRoot},
		{"second root", root().add(c.runner, hubrefs.TypeQueueOpened, "id", queueID, "target", main), ErrNoRoot},
		{"bad target", (&log{}).add(c.runner, hubrefs.TypeQueueOpened, "id", queueID, "target", "main"), ErrMalformed},
		{"bad head", root().add(c.runner, hubrefs.TypeQueueEntered, "pr", prID("a"), "head", "xyz", "base", main), ErrMalformed},
		{"bad reason", root().add(c.runner, hubrefs.TypeQueueLeft, "pr", prID("a"), "head", hex("a"), "reason", "bored"), ErrMalformed},
		{"bad parents", root().add(c.runner, hubrefs.TypeQueueCandidate, "pr", prID("a"), "head", hex("a"), "step", hex("s"), "parents", []string{hex("a")}), ErrMalformed},
		{"not a queue event", root().add(c.runner, hubrefs.TypePRClosed), ErrMalformed},
	}
	for _, tc := range tests {
		if _, err := Fold(tc.l.evs, c.t); !errors.Is(err, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, err, tc.want)
		}
	}
}

func TestSelectQueueAndCeiling(t *testing.T) {
	q := func(id, target string, closed bool) *State { return &State{ID: id, Target: target, Closed: closed} }
	states := []*State{q("0190-b", main, false), q("0190-a", main, true), q("0190-c", main, false), q("0190-0", "refs/heads/dev", false)}
	if got := SelectQueue(states, main); got == nil || got.ID != "0190-b" {
		t.Errorf("got %+v", got)
	}
	if SelectQueue(states, "refs/heads/none") != nil {
		t.Error("queue for an unknown target")
	}
	for _, tc := range []struct {
		n, c int
		want bool
	}{{7999, 0, false}, {8000, 0, true}, {79, 100, false}, {80, 100, true}, {100, 100, true}} {
		if CeilingWarning(tc.n, tc.c) != tc.want {
			t.Errorf("CeilingWarning(%d, %d)", tc.n, tc.c)
		}
	}
}
