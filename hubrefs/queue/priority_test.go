package queue

import (
	"strings"
	"testing"

	"github.com/gitplus/gitplus/hubrefs"
	"github.com/gitplus/gitplus/hubrefs/pr"
)

// TestPriorityOrder: high entries are chained ahead of normal ones, each
// class in the causal order of its queue.entered; a queue.entered of a
// queued pull request at its head with another priority moves it to that
// class, anything else of the kind is ignored.
func TestPriorityOrder(t *testing.T) {
	c := newCast(t)
	// An op is "a" (enter normal), "a!" (enter high), "a=" (enter with
	// priority normal explicitly), "a~" (enter at another head), "-a" (leave).
	tests := []struct {
		name    string
		ops     []string
		order   string // queue order of the active entries, high ones marked !
		ignored int
	}{
		{name: "no priority: causal order", ops: []string{"a", "b", "c"}, order: "a,b,c"},
		{name: "high entered last goes first", ops: []string{"a", "b", "c!"}, order: "c!,a,b"},
		{name: "high class in causal order", ops: []string{"a!", "b", "c!", "d"}, order: "a!,c!,b,d"},
		{name: "promotion keeps causal order within the class", ops: []string{"a!", "b", "c", "d!", "c!"}, order: "a!,c!,d!,b"},
		{name: "demotion", ops: []string{"a!", "b", "c!", "a="}, order: "c!,a,b"},
		{name: "same priority again is ignored", ops: []string{"a", "b!", "b!", "a="}, order: "b!,a", ignored: 2},
		{name: "another head while queued is ignored", ops: []string{"a", "b", "b~!"}, order: "a,b", ignored: 1},
		{name: "re-entry after leaving starts at the end of its class", ops: []string{"a!", "b!", "c", "-a", "a!"}, order: "b!,a!,c"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			l := &log{}
			l.add(c.runner, hubrefs.TypeQueueOpened, "id", queueID, "target", main)
			for _, op := range tc.ops {
				if strings.HasPrefix(op, "-") {
					n := op[1:]
					l.add(c.runner, hubrefs.TypeQueueLeft, "pr", prID(n), "head", hex("h"+n), "reason", ReasonWithdrawn)
					continue
				}
				n := op[:1]
				fields := []any{"pr", prID(n), "head", hex("h" + n), "base", main}
				if strings.Contains(op, "!") {
					fields = append(fields, "priority", PriorityHigh)
				}
				if strings.Contains(op, "=") {
					fields = append(fields, "priority", PriorityNormal)
				}
				if strings.Contains(op, "~") {
					fields[3] = hex("other" + n)
				}
				l.add(c.runner, hubrefs.TypeQueueEntered, fields...)
			}
			s, err := Fold(l.evs, c.t)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, e := range s.Entries {
				x := nameOf(e.PR)
				switch e.Priority {
				case PriorityHigh:
					x += "!"
				case PriorityNormal:
				default:
					t.Errorf("entry %s has priority %q", x, e.Priority)
				}
				got = append(got, x)
			}
			if strings.Join(got, ",") != tc.order {
				t.Errorf("order %s, want %s", strings.Join(got, ","), tc.order)
			}
			if len(s.Ignored) != tc.ignored {
				t.Errorf("ignored %+v, want %d", s.Ignored, tc.ignored)
			}
		})
	}
}

// TestPriorityChangeReplans: raising an entry's priority after its chain was
// published rebuilds the chain in the new order on the same tip, publishing
// new candidates, with no eviction, settlement or reset; green verdicts on the
// old candidates do not land anything out of order.
func TestPriorityChangeReplans(t *testing.T) {
	c := newCast(t)
	specs := map[string]prSpec{"a": {head: "ha"}, "b": {head: "hb"}, "c": {head: "hc"}}
	w := newWorld(t, c, []string{"a", "b", "c"}, specs)
	p, err := PlanPass(w.input(t, tip0))
	if err != nil {
		t.Fatal(err)
	}
	if chainStr(p) != "a=pending,b=pending,c=pending" || len(p.Publish) != 3 {
		t.Fatalf("first plan: chain %s, publish %+v", chainStr(p), p.Publish)
	}
	w.apply(p)
	// CI passes a's candidate (a on the tip) before the change.
	w.prs[prID("a")] = c.pr(t, "a", prSpec{head: "ha", checks: []chk{{step(tip0, "ha"), pr.Success}}})
	// c becomes high: a queue.entered at its head with priority high.
	w.q.add(c.runner, hubrefs.TypeQueueEntered, "pr", prID("c"), "head", hex("hc"), "base", main, "priority", PriorityHigh)
	p, err = PlanPass(w.input(t, tip0))
	if err != nil {
		t.Fatal(err)
	}
	if chainStr(p) != "c=pending,a=pending,b=pending" {
		t.Fatalf("after the change: chain %s", chainStr(p))
	}
	if len(p.Evict) != 0 || len(p.Settle) != 0 || p.Land != nil || len(p.Delete) != 0 {
		t.Fatalf("a change of priority evicted, settled, landed or deleted: %+v", p)
	}
	var pub []string
	for _, x := range p.Publish {
		pub = append(pub, nameOf(x.PR))
	}
	if strings.Join(pub, ",") != "c,a,b" || p.Publish[0].Parents[0] != tip0.String() || p.Publish[0].Step != step(tip0, "hc").String() {
		t.Fatalf("publish %+v", p.Publish)
	}
	w.apply(p)
	// Once published, the same state plans nothing new.
	p, err = PlanPass(w.input(t, tip0))
	if err != nil {
		t.Fatal(err)
	}
	if p.Appends() != 0 {
		t.Fatalf("plan after publishing the new order appends %d: %+v", p.Appends(), p)
	}
	// c green on the tip lands alone, ahead of a and b.
	w.prs[prID("c")] = c.pr(t, "c", prSpec{head: "hc", checks: []chk{{step(tip0, "hc"), pr.Success}}})
	p, err = PlanPass(w.input(t, tip0))
	if err != nil {
		t.Fatal(err)
	}
	if p.Land == nil || len(p.Land.Landed) != 1 || nameOf(p.Land.Landed[0].PR) != "c" {
		t.Fatalf("landing %+v, want c alone", p.Land)
	}
}
