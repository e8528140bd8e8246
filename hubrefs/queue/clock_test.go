package queue

import (
	"encoding/json"
	"math"
	"math/rand"
	"testing"
	"time"
)

// TestClockAtSameAnswer: for any Now in the range clockAt leaves, silent's
// comparison gives the answer it gives at the Now it was worked out for,
// overflow included (random times, limits and extremes).
func TestClockAtSameAnswer(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	silentAt := func(now, rec int64, limit time.Duration) bool {
		return !(time.Duration(now-rec)*time.Second < limit)
	}
	pick := func() int64 {
		switch rng.Intn(6) {
		case 0:
			return math.MaxInt64 - rng.Int63n(1<<40)
		case 1:
			return math.MinInt64 + rng.Int63n(1<<40)
		case 2:
			return rng.Int63() - rng.Int63()
		default:
			return 1_800_000_000 + rng.Int63n(1<<20) - 1<<19
		}
	}
	for i := 0; i < 20000; i++ {
		now, rec := pick(), pick()
		if rng.Intn(2) == 0 {
			rec = now - rng.Int63n(4000) + 2000
		}
		limit := time.Duration(1 + rng.Int63n(int64(2*time.Hour)))
		if rng.Intn(10) == 0 {
			limit = time.Duration(rng.Int63())
		}
		var c ClockRange
		c.start(now)
		clockAt(&c, now, rec, limit)
		if c.From > now || c.Until <= now {
			t.Fatalf("now %d, candidate %d, limit %v: range [%d, %d) leaves out now", now, rec, limit, c.From, c.Until)
		}
		want := silentAt(now, rec, limit)
		for k := 0; k < 40; k++ {
			var at int64
			switch k {
			case 0:
				at = c.From
			case 1:
				at = c.Until - 1
			default:
				at = c.From + rng.Int63n(c.Until-c.From)
			}
			if got := silentAt(at, rec, limit); got != want {
				t.Fatalf("now %d, candidate %d, limit %v: range [%d, %d), but at %d silence is %v, at now %v", now, rec, limit, c.From, c.Until, at, got, want)
			}
		}
	}
}

// TestClockRangeSamePlan: with checkTimeout, PlanPass gives the same plan
// for every Now in the range it reports (Clock), and the range is the
// whole stretch between the moments a pending step's timeout turns; a
// plan asked without Clock is the same plan.
func TestClockRangeSamePlan(t *testing.T) {
	c := newCast(t)
	w := newWorld(t, c, []string{"a", "b", "c"}, map[string]prSpec{"a": {head: "ha"}, "b": {head: "hb"}, "c": {head: "hc"}})
	p1, _ := PlanPass(w.input(t, tip0))
	w.apply(p1)
	in := w.input(t, tip0)
	in.Branch.CheckTimeout = 10*time.Minute + 500*time.Millisecond // turns at candidate time + 601 s
	rec, _ := in.Queue.LatestCandidate(prID("a"))
	lo, hi := int64(-3), rec.Time+700
	plans := map[int64]string{}
	ranges := map[int64]ClockRange{}
	for now := lo; now < hi; now++ {
		in.Now, in.Clock = now, &ClockRange{}
		p, err := PlanPass(in)
		if err != nil {
			t.Fatal(err)
		}
		j, _ := json.Marshal(p)
		plans[now], ranges[now] = string(j), *in.Clock
		in.Clock = nil
		q, _ := PlanPass(in)
		if k, _ := json.Marshal(q); string(k) != string(j) {
			t.Fatalf("now %d: the plan with Clock differs from the plan without", now)
		}
	}
	turn := rec.Time + 601
	for now := lo; now < hi; now++ {
		r := ranges[now]
		for at := max(r.From, lo); at < min(r.Until, hi); at++ {
			if plans[at] != plans[now] {
				t.Fatalf("now %d: range [%d, %d) but the plan at %d differs", now, r.From, r.Until, at)
			}
		}
		switch {
		case now <= 0 && r.Until != 1:
			t.Fatalf("now %d (checkTimeout off): range until %d, want 1", now, r.Until)
		case now > 0 && now < turn && (r.From > 1 || r.Until != turn):
			t.Fatalf("now %d: range [%d, %d), want [≤1, %d)", now, r.From, r.Until, turn)
		case now >= turn && r.From < turn:
			t.Fatalf("now %d: range [%d, %d) reaches before the timeout at %d", now, r.From, r.Until, turn)
		}
	}
	if plans[turn-1] == plans[turn] {
		t.Fatal("the timeout changed nothing: the test does not test")
	}
}
