package policy

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/gitplus/gitplus/hubrefs"
)

// TestRecordTimes: with the server's clock passed in, the hook refuses a
// new event dated more than the bound after it, and an update whose newest
// event is dated more than the bound before the event it follows (or the
// server's clock, when that event is dated later still); a replica catching
// up on old records, which follow their own tips, takes them; without a
// clock (git+ verify) times are not judged. Through the queue's fast path
// too (a warm fold cache).
func TestRecordTimes(t *testing.T) {
	const now = int64(1_800_000_000)
	const day = int64(86400)
	const bound = 5 * time.Minute
	qID := "01900000-0000-7000-8000-0000000000bb"
	qRef := hubrefs.QueueRefPrefix + qID
	// at dates the next event w writes.
	at := func(w *world, unix int64) { w.clock = unix - 1 }
	// comment is an event anyone may append: a check.started of ci.
	comment := func(w *world, _ string) hubrefs.Check {
		return hubrefs.Check{Base: w.base(hubrefs.TypeCheckStarted), Name: "ci", Head: w.c0.String()}
	}
	appendAt := func(w *world, ref string, unix int64, who string, payload any) Update {
		old := w.refs[ref]
		at(w, unix)
		return up(ref, old, w.eventOn([]plumbing.Hash{old}, who, payload))
	}
	cases := []struct {
		name  string
		clock bool
		setup func(w *world) Update
		want  string
		in    string
	}{
		{name: "on time", clock: true, setup: func(w *world) Update {
			p := w.open(w.c0)
			return appendAt(w, p.ref, now, "ci", comment(w, "x"))
		}},
		{name: "ahead within the bound", clock: true, setup: func(w *world) Update {
			p := w.open(w.c0)
			return appendAt(w, p.ref, now+299, "ci", comment(w, "x"))
		}},
		{name: "ahead by three days", clock: true, want: CodeClockSkew, in: "after this server's clock", setup: func(w *world) Update {
			p := w.open(w.c0)
			return appendAt(w, p.ref, now+3*day, "ci", comment(w, "x"))
		}},
		{name: "a new ref dated ahead", clock: true, want: CodeClockSkew, in: "72h0m0s after", setup: func(w *world) Update {
			at(w, now+3*day)
			p := w.open(w.c0)
			id := w.refs[p.ref]
			delete(w.refs, p.ref)
			return up(p.ref, plumbing.ZeroHash, id)
		}},
		{name: "a chain whose first event is ahead", clock: true, want: CodeClockSkew, setup: func(w *world) Update {
			p := w.open(w.c0)
			old := w.refs[p.ref]
			at(w, now+day)
			a := w.eventOn([]plumbing.Hash{old}, "ci", comment(w, "a"))
			at(w, now)
			return up(p.ref, old, w.eventOn([]plumbing.Hash{a}, "ci", comment(w, "b")))
		}},
		{name: "behind the event it follows by three days", clock: true, want: CodeClockSkew, in: "before the event it follows", setup: func(w *world) Update {
			at(w, now-60)
			p := w.open(w.c0)
			return appendAt(w, p.ref, now-3*day, "ci", hubrefs.Check{Base: w.base(hubrefs.TypeCheckStarted), Name: "ci", Head: w.c0.String()})
		}},
		{name: "behind the event it follows within the bound", clock: true, setup: func(w *world) Update {
			at(w, now-10)
			p := w.open(w.c0)
			return appendAt(w, p.ref, now-10-299, "ci", comment(w, "x"))
		}},
		{name: "a replica catching up on records days old", clock: true, setup: func(w *world) Update {
			at(w, now-5*day)
			p := w.open(w.c0)
			old := w.refs[p.ref]
			tip := old
			for i := int64(1); i <= 4; i++ {
				at(w, now-5*day+i*3600)
				tip = w.eventOn([]plumbing.Hash{tip}, "ci", comment(w, "old"))
			}
			return up(p.ref, old, tip)
		}},
		{name: "a new ref dated days ago (a replica's first copy)", clock: true, setup: func(w *world) Update {
			at(w, now-5*day)
			p := w.open(w.c0)
			id := w.refs[p.ref]
			delete(w.refs, p.ref)
			return up(p.ref, plumbing.ZeroHash, id)
		}},
		{name: "after a tip dated ahead, written before the bound", clock: true, setup: func(w *world) Update {
			at(w, now+3*day)
			p := w.open(w.c0)
			return appendAt(w, p.ref, now, "ci", comment(w, "x"))
		}},
		{name: "behind the server's clock after a tip dated ahead", clock: true, want: CodeClockSkew, in: "24h0m0s before this server's clock", setup: func(w *world) Update {
			at(w, now+3*day)
			p := w.open(w.c0)
			return appendAt(w, p.ref, now-day, "ci", comment(w, "x"))
		}},
		{name: "no clock: verify judges no times", setup: func(w *world) Update {
			at(w, now-60)
			p := w.open(w.c0)
			return appendAt(w, p.ref, now+3*day, "ci", comment(w, "x"))
		}},
		{name: "a queue event ahead", clock: true, want: CodeClockSkew, in: "after this server's clock", setup: func(w *world) Update {
			at(w, now-60)
			w.event(qRef, "queuer", hubrefs.QueueOpened{Base: w.base(hubrefs.TypeQueueOpened), ID: qID, Target: main})
			return appendAt(w, qRef, now+3*day, "queuer", hubrefs.QueuePaused{Base: w.base(hubrefs.TypeQueuePaused), Reason: "r"})
		}},
		{name: "a queue event behind", clock: true, want: CodeClockSkew, in: "before the event it follows", setup: func(w *world) Update {
			at(w, now-60)
			w.event(qRef, "queuer", hubrefs.QueueOpened{Base: w.base(hubrefs.TypeQueueOpened), ID: qID, Target: main})
			return appendAt(w, qRef, now-3*day, "queuer", hubrefs.QueuePaused{Base: w.base(hubrefs.TypeQueuePaused), Reason: "r"})
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			w := newWorld(t, `{"protected":{"refs/heads/main":{}}}`)
			u := c.setup(w)
			var clk *Clock
			if c.clock {
				clk = &Clock{Now: now, Skew: bound}
			}
			in := func(cache Cache) Input {
				return Input{Objects: GoGitObjects(w.store), Refs: w.refs, Updates: []Update{u}, Cache: cache, Clock: clk}
			}
			v := Judge(in(nil))[0]
			if v.Code != c.want {
				t.Fatalf("code %q (%s), want %q", v.Code, v.Reason, c.want)
			}
			if c.want != "" && !strings.Contains(v.Reason, c.in) {
				t.Fatalf("reason %q does not say %q", v.Reason, c.in)
			}
			// A warm fold cache (the queue's fast path reads the old
			// log's summary from it) gives the same verdict.
			cache := &mapCache{m: map[plumbing.Hash][]byte{}}
			if !u.Old.IsZero() {
				refs := map[string]plumbing.Hash{}
				for k, v := range w.refs {
					if k != u.Ref {
						refs[k] = v
					}
				}
				if v := Judge(Input{Objects: GoGitObjects(w.store), Refs: refs, Updates: []Update{up(u.Ref, plumbing.ZeroHash, u.Old)}, Cache: cache})[0]; !v.Accepted() {
					t.Fatalf("warming the cache with %s at %s: %s", u.Ref, u.Old, v.Line())
				}
			}
			for _, pass := range []string{"cold", "warm"} {
				if got := Judge(in(cache))[0]; !reflect.DeepEqual(got, v) {
					t.Fatalf("with a %s fold cache: %+v, without: %+v", pass, got, v)
				}
			}
		})
	}
}
