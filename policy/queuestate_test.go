package policy

import (
	"fmt"
	"math/rand"
	"reflect"
	"sort"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/gitplus/gitplus/hubrefs"
	"github.com/gitplus/gitplus/hubrefs/pr"
	"github.com/gitplus/gitplus/hubrefs/queue"
	"github.com/gitplus/gitplus/hubrefs/trust"
)

const stateQueueID = "01900000-0000-7000-8000-0000000000b1"

// queueWorld is a world with one queue and helpers to append random queue
// events to it.
type queueWorld struct {
	*world
	ref string
	rng *rand.Rand
	prs []string
}

func newQueueWorld(t *testing.T, seed int64) *queueWorld {
	w := &queueWorld{world: newWorld(t, rulesNoQueue), ref: hubrefs.QueueRefPrefix + stateQueueID, rng: rand.New(rand.NewSource(seed))}
	for i := 0; i < 6; i++ {
		w.prs = append(w.prs, fmt.Sprintf("01900000-0000-7000-8000-%012x", 0xc00+i))
	}
	w.event(w.ref, "queuer", hubrefs.QueueOpened{Base: w.base(hubrefs.TypeQueueOpened), ID: stateQueueID, Target: main})
	return w
}

func hexOf(s string) string { return plumbing.ComputeHash(plumbing.BlobObject, []byte(s)).String() }

// payload is a random queue event: entries entering (normal, high, a
// priority change, twice), leaving (queued or not), candidates (some
// ending a batch group), resets, rarely a close.
func (w *queueWorld) payload() any {
	rng := w.rng
	p := w.prs[rng.Intn(len(w.prs))]
	switch k := rng.Intn(100); {
	case k < 35:
		return hubrefs.QueueEntered{Base: w.base(hubrefs.TypeQueueEntered), PR: p, Head: hexOf(p), BaseRef: main,
			Priority: []string{"", queue.PriorityNormal, queue.PriorityHigh}[rng.Intn(3)]}
	case k < 55:
		return hubrefs.QueueLeft{Base: w.base(hubrefs.TypeQueueLeft), PR: p, Head: hexOf(p), Reason: queue.ReasonWithdrawn, Detail: fmt.Sprint("by ", k)}
	case k < 80:
		step := hexOf(fmt.Sprint("step", rng.Intn(5)))
		parent := hexOf(fmt.Sprint("tip", rng.Intn(3)))
		if rng.Intn(2) == 0 {
			parent = hexOf(fmt.Sprint("step", rng.Intn(5)))
		}
		c := hubrefs.QueueCandidate{Base: w.base(hubrefs.TypeQueueCandidate), PR: p, Head: hexOf(p), Step: step,
			Parents: []string{parent, hexOf(p)}, Branch: "refs/heads/queue/main/" + p}
		if rng.Intn(3) == 0 {
			c.GroupEnd, c.GroupSize = step, 1+rng.Intn(3)
			c.Trial = rng.Intn(2) == 0
			if c.Trial && rng.Intn(2) == 0 {
				c.Run = hexOf(fmt.Sprint("run", rng.Intn(3)))
			}
		}
		return c
	case k < 90:
		return hubrefs.QueueReset{Base: w.base(hubrefs.TypeQueueReset), Tip: hexOf(fmt.Sprint("tip", rng.Intn(3))), Detail: "moved"}
	case k < 94:
		return hubrefs.QueuePaused{Base: w.base(hubrefs.TypeQueuePaused), Reason: fmt.Sprint("incident ", k)}
	case k < 97:
		return hubrefs.Base{Type: hubrefs.TypeQueueResumed, Repo: repoID}
	}
	return hubrefs.Base{Type: hubrefs.TypeQueueClosed, Repo: repoID}
}

// fault is an event on tip that no fold accepts: a malformed payload,
// another repository, a second root, or two parents.
func (w *queueWorld) fault(tip plumbing.Hash) plumbing.Hash {
	p := w.prs[0]
	switch w.rng.Intn(4) {
	case 0:
		return w.eventOn([]plumbing.Hash{tip}, "queuer", hubrefs.QueueEntered{Base: w.base(hubrefs.TypeQueueEntered), PR: p, Head: "not-a-commit", BaseRef: main})
	case 1:
		return w.eventOn([]plumbing.Hash{tip}, "queuer", hubrefs.QueueReset{Base: hubrefs.Base{Type: hubrefs.TypeQueueReset, Repo: otherID}, Tip: hexOf("x")})
	case 2:
		return w.eventOn([]plumbing.Hash{tip}, "queuer", hubrefs.QueueOpened{Base: w.base(hubrefs.TypeQueueOpened), ID: stateQueueID, Target: main})
	}
	other := w.eventOn(nil, "queuer", hubrefs.QueueReset{Base: w.base(hubrefs.TypeQueueReset), Tip: hexOf("y")})
	return w.eventOn([]plumbing.Hash{tip, other}, "queuer", hubrefs.QueueReset{Base: w.base(hubrefs.TypeQueueReset), Tip: hexOf("z")})
}

// coldQueue is the queue at tip folded from its whole log, no cache: what
// Reader.Queue must return.
func (w *queueWorld) coldQueue(ts *trust.State, tip plumbing.Hash) (*queue.State, error) {
	evs, err := hubrefs.ReadLog(w.store, tip, storedCeilings)
	if err != nil {
		return nil, err
	}
	return queue.Fold(evs, ts)
}

// trustNow is the trust tip and state of w now, folded without a cache.
func (w *queueWorld) trustNow(t *testing.T) (plumbing.Hash, *trust.State) {
	tip := w.refs[hubrefs.TrustRef]
	ts, err := (&Reader{Objects: GoGitObjects(w.store)}).Trust(tip)
	if err != nil {
		t.Fatal(err)
	}
	return tip, ts
}

// TestQueueStateIncremental: reading a queue through the fold cache's
// queue states (from the state at its tip, from a state below it plus the
// events above, or folded whole) gives the state, or the error, of folding
// its whole log without a cache, over random queue logs: entries, leaves,
// priority changes, candidates, resets, closes, events by members without
// hub.queue, events no fold accepts (on side tips), the trust log moving
// (mallory gaining and losing hub.queue, the queuer removed and added
// back), and the cache losing, truncating or mixing up entries.
func TestQueueStateIncremental(t *testing.T) {
	defer func(v int) { maxQueueWalk = v }(maxQueueWalk)
	maxQueueWalk = 8 // some walks find a state, some run out
	w := newQueueWorld(t, 5)
	c := &dropCache{m: map[plumbing.Hash][]byte{}}
	objs := &counting{Objects: GoGitObjects(w.store), n: map[plumbing.Hash]int{}}
	rd := &Reader{Objects: objs, Cache: c}
	var seen struct{ hits, walks, whole, errs, trustMoves, ignored int }
	check := func(step int, tip plumbing.Hash) {
		t.Helper()
		tt, ts := w.trustNow(t)
		want, wantErr := w.coldQueue(ts, tip)
		objs.n = map[plumbing.Hash]int{}
		got, gotErr := rd.Queue(tt, ts, tip)
		if fmt.Sprint(gotErr) != fmt.Sprint(wantErr) {
			t.Fatalf("step %d: Queue error %v, whole fold %v", step, gotErr, wantErr)
		}
		switch {
		case wantErr != nil:
			seen.errs++
		case !got.Equal(want):
			t.Fatalf("step %d: Queue state differs from the whole fold\ngot  %+v\nwant %+v", step, got, want)
		case len(objs.n) == 0:
			seen.hits++
		case len(objs.n) < want.Count:
			seen.walks++
		default:
			seen.whole++
		}
		if wantErr == nil && len(want.Ignored) > 0 {
			seen.ignored++
		}
		// Queue hands out a state of its own: changing it changes no
		// later read.
		if got != nil {
			got.Entries = append(got.Entries, queue.Entry{PR: "x"})
		}
	}
	mallory := false
	for step := 0; step < 160; step++ {
		switch k := w.rng.Intn(100); {
		case k < 6:
			// the trust log moves
			seen.trustMoves++
			if mallory {
				w.event(hubrefs.TrustRef, "admin", hubrefs.MemberRemoved{Base: w.base(hubrefs.TypeMemberRemoved), Name: "mallory"})
			} else {
				w.event(hubrefs.TrustRef, "admin", w.memberAdded("mallory", "hub.queue"))
			}
			mallory = !mallory
		case k < 8:
			w.event(hubrefs.TrustRef, "admin", hubrefs.MemberRemoved{Base: w.base(hubrefs.TypeMemberRemoved), Name: "queuer"})
			check(step, w.refs[w.ref])
			w.event(hubrefs.TrustRef, "admin", w.memberAdded("queuer", members["queuer"]...))
		case k < 14:
			check(step, w.fault(w.refs[w.ref]))
		case k < 20:
			// the cache loses, truncates or mixes up an entry
			keys := make([]plumbing.Hash, 0, len(c.m))
			for k := range c.m {
				keys = append(keys, k)
			}
			sort.Slice(keys, func(i, j int) bool { return keys[i].String() < keys[j].String() })
			if len(keys) < 2 {
				break
			}
			a, b := keys[w.rng.Intn(len(keys))], keys[w.rng.Intn(len(keys))]
			c.mu.Lock()
			switch w.rng.Intn(3) {
			case 0:
				delete(c.m, a)
			case 1:
				c.m[a] = c.m[a][:w.rng.Intn(len(c.m[a]))]
			default:
				c.m[a] = c.m[b]
			}
			c.mu.Unlock()
		}
		for n := 1 + w.rng.Intn(3); n > 0; n-- {
			who := "queuer"
			switch w.rng.Intn(8) {
			case 0:
				who = "alice" // no hub.queue: ignored
			case 1:
				who = "mallory" // hub.queue while a member
			}
			w.event(w.ref, who, w.payload())
		}
		if w.rng.Intn(3) > 0 {
			check(step, w.refs[w.ref])
			if w.rng.Intn(4) == 0 {
				check(step, w.refs[w.ref]) // read again: the state stored
			}
		}
	}
	t.Logf("%+v", seen)
	if seen.hits == 0 || seen.walks == 0 || seen.whole == 0 || seen.errs < 5 || seen.trustMoves == 0 || seen.ignored == 0 {
		t.Fatalf("the random run misses a case: %+v", seen)
	}
}

// TestQueueStateCodec: states folded from random logs encode and decode
// to Equal states; an entry read for another key, or truncated, or with
// bytes added, is a miss.
func TestQueueStateCodec(t *testing.T) {
	w := newQueueWorld(t, 9)
	tt, ts := w.trustNow(t)
	n := 0
	for step := 0; step < 60; step++ {
		w.event(w.ref, "queuer", w.payload())
		tip := w.refs[w.ref]
		st, err := w.coldQueue(ts, tip)
		if err != nil {
			t.Fatal(err)
		}
		b := encodeQueueState(tt, tip, st)
		back, ok := decodeQueueState(tt, tip, b, false)
		if !ok || !back.Equal(st) {
			t.Fatalf("step %d: decoded %v, equal %v", step, ok, ok && back.Equal(st))
		}
		// In place (a FreshCache's buffer): the same state.
		own := append([]byte(nil), b...)
		if in, ok := decodeQueueState(tt, tip, own, true); !ok || !in.Equal(st) {
			t.Fatalf("step %d: decoded in place %v, equal %v", step, ok, ok && in.Equal(st))
		}
		if _, ok := decodeQueueState(tip, tt, b, false); ok {
			t.Fatal("an entry decoded for another key")
		}
		if _, ok := decodeQueueState(tt, tip, append(append([]byte(nil), b...), 0), false); ok {
			t.Fatal("an entry with a byte added decoded")
		}
		for i := 0; i < len(b); i += 1 + len(b)/50 {
			if _, ok := decodeQueueState(tt, tip, b[:i], false); ok {
				t.Fatalf("an entry truncated to %d of %d bytes decoded", i, len(b))
			}
		}
		if len(st.Entries) > 0 && len(st.Left) > 0 && len(st.Candidates()) > 0 && len(st.Steps()) > 0 && len(st.Resets) > 0 {
			n++
		}
	}
	if n == 0 {
		t.Fatal("no state had entries, leaves, candidates and resets at once")
	}
}

// TestQueueStateFieldsKnown fails when a field is added to queue.State or
// to a type it holds: the codec (encodeQueueState, decodeQueueState) must
// then store it, and this list grow with it.
func TestQueueStateFieldsKnown(t *testing.T) {
	want := map[string]string{
		"State":    "ID Target Closed Entries Left Began Resets Ignored Paused Count Tip latest bases marks active rooted",
		"Pause":    "By At Reason Event",
		"Entry":    "PR Head Base EnteredAt Seq Priority",
		"Left":     "PR Head Reason Detail Step Run Event",
		"Reset":    "Tip Detail Event",
		"Ignored":  "Event Type Reason",
		"Recorded": "PR Head Step Parents Branch GroupEnd GroupSize Trial TrialSeq Run Partition Cited Event Seq Time Invalidated",
	}
	for _, v := range []any{queue.State{}, queue.Pause{}, queue.Entry{}, queue.Left{}, queue.Reset{}, queue.Ignored{}, queue.Recorded{}} {
		typ := reflect.TypeOf(v)
		var names []string
		for i := 0; i < typ.NumField(); i++ {
			names = append(names, typ.Field(i).Name)
		}
		if got := fmt.Sprint(names); got != "["+want[typ.Name()]+"]" {
			t.Errorf("queue.%s has fields %s, the codec knows [%s]: store the new field in policy/queuestate.go, bump its version, and update this list", typ.Name(), got, want[typ.Name()])
		}
	}
}

// TestQueueReadDoesNotGrowWithN: with the state of a queue's tip in the
// cache, reading the queue after one more event reads that event's object
// only, however many entries the queue holds; a read at a tip already
// read reads none; a writer's trial (Clone, Apply) reads none.
func TestQueueReadDoesNotGrowWithN(t *testing.T) {
	w := newQueueWorld(t, 1)
	tt, ts := w.trustNow(t)
	c := &dropCache{m: map[plumbing.Hash][]byte{}}
	for _, n := range []int{20, 200} {
		for len(w.prs) < n {
			w.prs = append(w.prs, fmt.Sprintf("01900000-0000-7000-8000-%012x", 0xd000+len(w.prs)))
		}
		for _, p := range w.prs {
			w.event(w.ref, "queuer", hubrefs.QueueEntered{Base: w.base(hubrefs.TypeQueueEntered), PR: p, Head: hexOf(p), BaseRef: main})
		}
		objs := &counting{Objects: GoGitObjects(w.store), n: map[plumbing.Hash]int{}}
		rd := &Reader{Objects: objs, Cache: c}
		st, err := rd.Queue(tt, ts, w.refs[w.ref]) // warm the cache
		if err != nil {
			t.Fatal(err)
		}
		if len(st.Entries) < n {
			t.Fatalf("%d entries, want %d", len(st.Entries), n)
		}
		for i := 0; i < 3; i++ {
			p := w.prs[i]
			ev := w.event(w.ref, "queuer", hubrefs.QueueLeft{Base: w.base(hubrefs.TypeQueueLeft), PR: p, Head: hexOf(p), Reason: queue.ReasonWithdrawn})
			objs.n = map[plumbing.Hash]int{}
			st, err := rd.Queue(tt, ts, ev)
			if err != nil {
				t.Fatal(err)
			}
			if len(objs.n) != 1 || objs.n[ev] == 0 {
				t.Fatalf("%d entries: reading the queue after one event read objects %v, want only %s", n, objs.n, ev)
			}
			if _, ok := st.Active(p); ok {
				t.Fatalf("%s still queued", p)
			}
			objs.n = map[plumbing.Hash]int{}
			again, err := rd.Queue(tt, ts, ev)
			if err != nil || len(objs.n) != 0 || !again.Equal(st) {
				t.Fatalf("%d entries: reading the same tip again read %v (err %v)", n, objs.n, err)
			}
			// the trial of the next write: no object read
			trial := again.Clone()
			next := hubrefs.Event{ID: plumbing.Hash{1}, Parents: []plumbing.Hash{ev}, Type: hubrefs.TypeQueueLeft, Repo: repoID,
				Payload: []byte(`{"type":"queue.left","repo":"` + repoID + `","pr":"` + w.prs[5] + `","head":"` + hexOf(w.prs[5]) + `","reason":"withdrawn"}`),
				Signer:  w.keys["queuer"].PublicKey()}
			if err := trial.Apply(next, ts); err != nil || len(objs.n) != 0 || len(trial.Left) != len(again.Left)+1 {
				t.Fatalf("trial: %v, read %v, left %d after %d", err, objs.n, len(trial.Left), len(again.Left))
			}
			// the state read from is dropped: one state per queue stays
			if _, ok := c.Get(queueStateKey(tt, ev)); !ok {
				t.Fatal("no state stored at the tip read")
			}
		}
	}
}

func FuzzDecodeQueueState(f *testing.F) {
	tt, tip := plumbing.Hash{1}, plumbing.Hash{2}
	st, err := queue.Restore(queue.State{ID: stateQueueID, Target: main, Count: 3, Tip: tip,
		Entries: []queue.Entry{{PR: "a", Head: "h", Base: main, Seq: 2, Priority: queue.PriorityNormal}},
		Left:    []queue.Left{{PR: "b", Reason: "landed"}}, Resets: []queue.Reset{{Tip: "t"}}, Ignored: []queue.Ignored{{Type: "x", Reason: "y"}}},
		[]queue.Recorded{{PR: "a", Head: "h", Step: "s", Parents: []string{"p", "h"}, Seq: 3}}, map[string]string{"s": "p"}, map[string]int{"s": 2})
	if err != nil {
		f.Fatal(err)
	}
	f.Add(encodeQueueState(tt, tip, st))
	f.Add([]byte("gpqv\x01"))
	f.Fuzz(func(t *testing.T, b []byte) {
		st, ok := decodeQueueState(tt, tip, b, false)
		if !ok {
			return
		}
		// what decodes re-encodes to the same bytes, and stays readable
		if again := encodeQueueState(tt, tip, st); string(again) != string(b) {
			back, ok := decodeQueueState(tt, tip, again, false)
			if !ok || !back.Equal(st) {
				t.Fatalf("a decoded state does not survive encoding again")
			}
		}
		_ = st.Clone()
	})
}

func FuzzDecodePRView(f *testing.F) {
	tt, tip := plumbing.Hash{1}, plumbing.Hash{2}
	st := &pr.State{ID: "a", State: pr.Open, Base: main, Head: "h", Heads: []string{"h"}, Approvals: []string{"bob"},
		Checks: map[pr.CheckKey]string{{Name: "ci", Revision: "h"}: "success"}, Threads: map[string]bool{"t": true}, Tip: tip}
	f.Add(encodePRView(tt, []PRFold{{Ref: hubrefs.PRRefPrefix + "a", Tip: tip, State: st, Events: 3}}))
	f.Add(encodePRView(tt, nil))
	f.Fuzz(func(t *testing.T, b []byte) {
		v, ok := decodePRView(tt, b, false)
		if !ok {
			return
		}
		var folds []PRFold
		for ref, r := range v {
			folds = append(folds, PRFold{Ref: ref, Tip: r.tip, State: r.st, Events: r.events})
		}
		sort.Slice(folds, func(i, j int) bool { return folds[i].Ref < folds[j].Ref })
		back, ok := decodePRView(tt, encodePRView(tt, folds), true)
		if !ok || len(back) != len(v) {
			t.Fatalf("a decoded view does not survive encoding again")
		}
	})
}
