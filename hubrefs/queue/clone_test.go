package queue

import (
	"fmt"
	"math/rand"
	"reflect"
	"testing"
	"unsafe"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/gitplus/gitplus/hubrefs"
)

// randomQueueLog builds a queue log of n events from rng: entries entering
// (normal and high), priority changes, entering twice, leaving (queued or
// not), candidates (some ending a batch group), resets, a close, events by
// a signer without hub.queue, and, when faults, one event Fold fails on (a
// bad payload, another repository, a second root, a non-linear parent).
func randomQueueLog(c *cast, rng *rand.Rand, n int, faults bool) []hubrefs.Event {
	l := &log{}
	if rng.Intn(8) == 0 {
		l.add(c.outsider, hubrefs.TypeQueueEntered, "pr", prID("x"), "head", hex("x"), "base", main)
	}
	l.add(c.runner, hubrefs.TypeQueueOpened, "id", queueID, "target", main)
	names := "abcdefghij"
	pick := func() string { return prID(string(names[rng.Intn(len(names))])) }
	for len(l.evs) < n {
		p := pick()
		signer := c.runner
		if rng.Intn(10) == 0 {
			signer = c.outsider
		}
		switch k := rng.Intn(100); {
		case k < 30:
			prio := []string{"", PriorityNormal, PriorityHigh}[rng.Intn(3)]
			l.add(signer, hubrefs.TypeQueueEntered, "pr", p, "head", hex(p), "base", main, "priority", prio)
		case k < 45:
			l.add(signer, hubrefs.TypeQueueLeft, "pr", p, "head", hex(p), "reason", []string{ReasonWithdrawn, ReasonFailed, ReasonLanded}[rng.Intn(3)], "detail", fmt.Sprint("d", k))
		case k < 75:
			parent := hex(fmt.Sprint("tip", rng.Intn(3)))
			if rng.Intn(2) == 0 {
				parent = hex(fmt.Sprint("step", rng.Intn(6)))
			}
			st := hex(fmt.Sprint("step", rng.Intn(6)))
			fields := []any{"pr", p, "head", hex(p), "step", st, "parents", []string{parent, hex(p)}, "branch", "refs/heads/queue/main/" + p}
			if rng.Intn(3) == 0 {
				fields = append(fields, "groupEnd", st, "groupSize", 1+rng.Intn(4))
				if rng.Intn(2) == 0 {
					fields = append(fields, "trial", true)
					if rng.Intn(2) == 0 {
						fields = append(fields, "run", hex(fmt.Sprint("run", rng.Intn(4))))
					}
				}
			}
			l.add(signer, hubrefs.TypeQueueCandidate, fields...)
		case k < 88:
			l.add(signer, hubrefs.TypeQueueReset, "tip", hex(fmt.Sprint("tip", rng.Intn(3))), "detail", "moved")
		case k < 90:
			l.add(signer, hubrefs.TypeQueueClosed)
		case k < 93 && faults:
			switch rng.Intn(4) {
			case 0:
				l.add(signer, hubrefs.TypeQueueEntered, "pr", p, "head", "not-a-commit", "base", main)
			case 1:
				l.add(signer, hubrefs.TypeQueueOpened, "id", queueID, "target", main)
			case 2:
				e := ev(&l.evs[len(l.evs)-1], signer, hubrefs.TypeQueueReset, "tip", hex("t"))
				e.Repo = "0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4aff"
				l.evs = append(l.evs, e)
			default:
				e := ev(nil, signer, hubrefs.TypeQueueReset, "tip", hex("t"))
				e.Parents = []plumbing.Hash{plumbing.ComputeHash(plumbing.BlobObject, []byte("elsewhere"))}
				l.evs = append(l.evs, e)
			}
		default:
			l.add(signer, hubrefs.TypeQueueEntered, "pr", p, "head", hex(p+"2"), "base", main)
		}
	}
	return l.evs
}

// TestApplySameAsFold: folding a prefix of a log and applying the rest of
// it one event at a time (to a clone) gives the state Fold gives for the
// whole log, or fails with Fold's error; and the state cloned from is left
// as it was.
func TestApplySameAsFold(t *testing.T) {
	c := newCast(t)
	rng := rand.New(rand.NewSource(7))
	var fields struct{ entries, left, resets, ignored, cands, marks, closed, fails int }
	for round := 0; round < 300; round++ {
		evs := randomQueueLog(c, rng, 2+rng.Intn(60), round%3 == 0)
		cut := 1 + rng.Intn(len(evs))
		base, err := Fold(evs[:cut], c.t)
		if err != nil {
			continue // Apply starts from a folded state only
		}
		keep := base.Clone()
		want, wantErr := Fold(evs, c.t)
		got := base.Clone()
		var gotErr error
		for _, ev := range evs[cut:] {
			if gotErr = got.Apply(ev, c.t); gotErr != nil {
				break
			}
		}
		if fmt.Sprint(gotErr) != fmt.Sprint(wantErr) {
			t.Fatalf("round %d (cut %d of %d): Apply error %v, Fold error %v", round, cut, len(evs), gotErr, wantErr)
		}
		if !base.Equal(keep) {
			t.Fatalf("round %d: applying to a clone changed the state cloned", round)
		}
		if wantErr != nil {
			fields.fails++
			continue
		}
		if !got.Equal(want) || !reflect.DeepEqual(got.Candidates(), want.Candidates()) {
			t.Fatalf("round %d (cut %d of %d): states differ\napply %+v\nfold  %+v", round, cut, len(evs), got, want)
		}
		for _, x := range []struct {
			n int
			p *int
		}{{len(want.Entries), &fields.entries}, {len(want.Left), &fields.left}, {len(want.Resets), &fields.resets},
			{len(want.Ignored), &fields.ignored}, {len(want.latest), &fields.cands}, {len(want.marks), &fields.marks}} {
			if x.n > 0 {
				*x.p++
			}
		}
		if want.Closed {
			fields.closed++
		}
	}
	if fields.entries == 0 || fields.left == 0 || fields.resets == 0 || fields.ignored == 0 || fields.cands == 0 || fields.marks == 0 || fields.closed == 0 || fields.fails == 0 {
		t.Fatalf("the random logs miss a case: %+v", fields)
	}
}

// TestApplyNeedsFoldedState: Apply refuses a state not made by Fold or
// Clone, and a nil trust state.
func TestApplyNeedsFoldedState(t *testing.T) {
	c := newCast(t)
	l := (&log{}).add(c.runner, hubrefs.TypeQueueOpened, "id", queueID, "target", main)
	if err := (&State{}).Apply(l.evs[0], c.t); err == nil {
		t.Fatal("Apply to a zero State succeeded")
	}
	st, err := Fold(l.evs, c.t)
	if err != nil {
		t.Fatal(err)
	}
	l.add(c.runner, hubrefs.TypeQueueClosed)
	if err := st.Clone().Apply(l.evs[1], nil); err == nil {
		t.Fatal("Apply with no trust state succeeded")
	}
	if err := st.Apply(l.evs[1], c.t); err != nil || !st.Closed {
		t.Fatalf("Apply: %v, closed %v", err, st.Closed)
	}
}

// settable returns v, made settable even when it is an unexported field.
func settable(v reflect.Value) reflect.Value {
	if v.CanSet() {
		return v
	}
	return reflect.NewAt(v.Type(), unsafe.Pointer(v.UnsafeAddr())).Elem()
}

// fillValue sets every field reachable from v (addressable) to a non-zero
// value: a slice and a map get one element, a pointer a new value.
func fillValue(t *testing.T, v reflect.Value, n *int) {
	*n++
	v = settable(v)
	switch v.Kind() {
	case reflect.Struct:
		for i := 0; i < v.NumField(); i++ {
			fillValue(t, v.Field(i), n)
		}
	case reflect.Array:
		for i := 0; i < v.Len(); i++ {
			fillValue(t, v.Index(i), n)
		}
	case reflect.Slice:
		v.Set(reflect.MakeSlice(v.Type(), 1, 1))
		fillValue(t, v.Index(0), n)
	case reflect.Map:
		v.Set(reflect.MakeMap(v.Type()))
		k := reflect.New(v.Type().Key()).Elem()
		fillValue(t, k, n)
		e := reflect.New(v.Type().Elem()).Elem()
		fillValue(t, e, n)
		v.SetMapIndex(k, e)
	case reflect.Pointer:
		p := reflect.New(v.Type().Elem())
		fillValue(t, p.Elem(), n)
		v.Set(p)
	case reflect.String:
		v.SetString(fmt.Sprint("s", *n))
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int64:
		v.SetInt(int64(*n))
	case reflect.Uint8:
		v.SetUint(uint64(*n % 250))
	default:
		t.Fatalf("fillValue: a field of kind %s: teach this test, Clone and Equal about it", v.Kind())
	}
}

// leaves calls f with every leaf reachable from v, in a fixed order, made
// settable; map values are copied out and written back after f.
func leaves(v reflect.Value, f func(reflect.Value)) {
	switch v.Kind() {
	case reflect.Struct:
		for i := 0; i < v.NumField(); i++ {
			leaves(settable(v.Field(i)), f)
		}
	case reflect.Array, reflect.Slice:
		for i := 0; i < v.Len(); i++ {
			leaves(settable(v.Index(i)), f)
		}
	case reflect.Map:
		for _, k := range v.MapKeys() {
			e := reflect.New(v.Type().Elem()).Elem()
			e.Set(v.MapIndex(k))
			leaves(e, f)
			v.SetMapIndex(k, e)
		}
	case reflect.Pointer:
		if !v.IsNil() {
			leaves(v.Elem(), f)
		}
	default:
		f(v)
	}
}

func changeLeaf(v reflect.Value) {
	switch v.Kind() {
	case reflect.String:
		v.SetString(v.String() + "x")
	case reflect.Bool:
		v.SetBool(!v.Bool())
	case reflect.Int, reflect.Int64:
		v.SetInt(v.Int() + 1)
	case reflect.Uint8:
		v.SetUint(v.Uint() ^ 0xff)
	}
}

// TestCloneCopiesEveryField: a State with every field set (unexported ones
// included) clones to an Equal state; changing any one leaf of the clone
// makes it unequal and leaves the original as it was. A field added to
// State (or to the types it holds) that Clone does not copy deeply, or
// Equal does not compare, fails here.
func TestCloneCopiesEveryField(t *testing.T) {
	var orig, ref State
	n := 0
	fillValue(t, reflect.ValueOf(&orig).Elem(), &n)
	n = 0
	fillValue(t, reflect.ValueOf(&ref).Elem(), &n)
	if !orig.Equal(&ref) || !reflect.DeepEqual(orig, ref) {
		t.Fatal("two identical fills are not Equal")
	}
	cl := orig.Clone()
	if !cl.Equal(&orig) || !reflect.DeepEqual(*cl, orig) {
		t.Fatalf("clone differs:\n%+v\n%+v", *cl, orig)
	}
	total := 0
	leaves(reflect.ValueOf(cl).Elem(), func(reflect.Value) { total++ })
	if total < 40 {
		t.Fatalf("only %d leaves: the fill missed fields", total)
	}
	for i := 0; i < total; i++ {
		c := orig.Clone()
		k := 0
		leaves(reflect.ValueOf(c).Elem(), func(v reflect.Value) {
			if k == i {
				changeLeaf(v)
			}
			k++
		})
		if c.Equal(&orig) {
			t.Fatalf("leaf %d changed in the clone, yet Equal says the states are equal (Equal misses it, or Clone shares it)", i)
		}
		if !orig.Equal(&ref) || !reflect.DeepEqual(orig, ref) {
			t.Fatalf("changing leaf %d of a clone changed the original: Clone shares it", i)
		}
	}
}

// TestRestoreRoundTrip: a folded state restored from its exported fields,
// Candidates, Steps and GroupEnds is Equal to it and applies events alike.
func TestRestoreRoundTrip(t *testing.T) {
	c := newCast(t)
	rng := rand.New(rand.NewSource(11))
	tried := 0
	for round := 0; round < 100; round++ {
		evs := randomQueueLog(c, rng, 2+rng.Intn(40), false)
		cut := 1 + rng.Intn(len(evs))
		st, err := Fold(evs[:cut], c.t)
		if err != nil {
			continue
		}
		tried++
		fields := *st
		fields.latest, fields.bases, fields.marks, fields.active, fields.rooted = nil, nil, nil, nil, false
		back, err := Restore(fields, st.Candidates(), st.Steps(), st.GroupEnds())
		if err != nil {
			t.Fatal(err)
		}
		if !back.Equal(st) {
			t.Fatalf("round %d: restored state differs", round)
		}
		for _, ev := range evs[cut:] {
			e1, e2 := st.Apply(ev, c.t), back.Apply(ev, c.t)
			if fmt.Sprint(e1) != fmt.Sprint(e2) {
				t.Fatalf("round %d: %v, restored %v", round, e1, e2)
			}
		}
		if !back.Equal(st) {
			t.Fatalf("round %d: restored state applies differently", round)
		}
	}
	if tried < 50 {
		t.Fatalf("only %d rounds folded", tried)
	}
	if _, err := Restore(State{}, nil, nil, nil); err == nil {
		t.Fatal("Restore of a state with no id succeeded")
	}
	if _, err := Restore(State{ID: queueID, Entries: []Entry{{PR: "a"}, {PR: "a"}}}, nil, nil, nil); err == nil {
		t.Fatal("Restore with a pull request queued twice succeeded")
	}
}
