package policy

import (
	"fmt"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/gitplus/gitplus/hubrefs"
)

const queueID = "01900000-0000-7000-8000-0000000000a1"

func rulesBatch(k, depth int) string {
	return fmt.Sprintf(`{"protected":{"refs/heads/main":{"requiredChecks":["ci"],"queueCandidates":true,"queueDepth":%d,"checkEvery":%d}}}`, depth, k)
}

// batchChain builds a chain of n approved pull requests on main with git
// merge and returns the steps and pull requests.
func batchChain(w *world, n int) ([]plumbing.Hash, []*prq) {
	var steps []plumbing.Hash
	var ps []*prq
	c := w.c0
	for i := 0; i < n; i++ {
		h := w.commit(w.c0, "f"+string(rune('a'+i)), "x\n")
		p := w.open(h).approve("bob")
		c = w.merge(c, h)
		steps, ps = append(steps, c), append(ps, p)
	}
	return steps, ps
}

// publish records queue.candidate events for the steps, signed by who, in
// a queue on main: groups lists each group's size from the bottom (0: a
// step published without a group).
func publish(w *world, who string, steps []plumbing.Hash, ps []*prq, groups ...int) {
	ref := hubrefs.QueueRefPrefix + queueID
	if _, ok := w.refs[ref]; !ok {
		w.event(ref, "queuer", hubrefs.QueueOpened{Base: w.base(hubrefs.TypeQueueOpened), ID: queueID, Target: main})
	}
	i := 0
	for _, g := range groups {
		n := max(g, 1)
		for s := i; s < i+n; s++ {
			parent := w.c0
			if s > 0 {
				parent = steps[s-1]
			}
			ev := hubrefs.QueueCandidate{Base: w.base(hubrefs.TypeQueueCandidate), PR: ps[s].id, Head: ps[s].head.String(),
				Step: steps[s].String(), Parents: []string{parent.String(), ps[s].head.String()}, Branch: "refs/heads/queue/main/" + ps[s].id}
			if g > 0 {
				ev.GroupEnd, ev.GroupSize = steps[i+n-1].String(), n
			}
			w.event(ref, who, ev)
		}
		i += n
	}
}

// TestBatchChecks: under checkEvery K a green group end vouches for its
// group (docs/boundary.md); the chain's last step and every marked group
// end need their own green checks; a mark longer than K is refused; K = 1
// ignores marks.
func TestBatchChecks(t *testing.T) {
	cases := []struct {
		name   string
		rules  string
		n      int
		setup  func(w *world, steps []plumbing.Hash, ps []*prq)
		green  []int // steps (0-based) with ci success
		red    []int // steps with ci failure
		want   string
		reason string
	}{
		{name: "one group of three, green at its end", rules: rulesBatch(3, 4), n: 3, green: []int{2},
			setup: func(w *world, s []plumbing.Hash, p []*prq) { publish(w, "queuer", s, p, 3) }},
		{name: "two groups of two, both ends green", rules: rulesBatch(2, 4), n: 4, green: []int{1, 3},
			setup: func(w *world, s []plumbing.Hash, p []*prq) { publish(w, "queuer", s, p, 2, 2) }},
		{name: "a group end lacks the check", rules: rulesBatch(2, 4), n: 4, green: []int{0, 3},
			setup:  func(w *world, s []plumbing.Hash, p []*prq) { publish(w, "queuer", s, p, 2, 2) },
			want:   CodeChecksMissing,
			reason: "step 2 ({2}) is the last of a group of 2 steps"},
		{name: "a group end red", rules: rulesBatch(2, 4), n: 4, green: []int{3}, red: []int{1},
			setup: func(w *world, s []plumbing.Hash, p []*prq) { publish(w, "queuer", s, p, 2, 2) },
			want:  CodeChecksFailed, reason: "last of a group of 2"},
		{name: "the chain's last step needs its own checks", rules: rulesBatch(3, 4), n: 3, green: []int{0, 1},
			setup: func(w *world, s []plumbing.Hash, p []*prq) { publish(w, "queuer", s, p, 3) },
			want:  CodeChecksMissing, reason: "on candidate {last}"},
		{name: "a mark claiming a group longer than checkEvery", rules: rulesBatch(3, 4), n: 4, green: []int{3},
			setup: func(w *world, s []plumbing.Hash, p []*prq) { publish(w, "queuer", s, p, 4) },
			want:  CodeGroupTooLong, reason: "group of 4 steps, but refs/heads/main checks every 3"},
		{name: "no queue: every step needs its checks", rules: rulesBatch(3, 4), n: 3, green: []int{2},
			setup: func(w *world, s []plumbing.Hash, p []*prq) {},
			want:  CodeChecksMissing, reason: "step 1 ({1}) is in no group whose last step is green"},
		{name: "a step below its group needs its own checks", rules: rulesBatch(2, 4), n: 3, green: []int{2},
			setup: func(w *world, s []plumbing.Hash, p []*prq) { publish(w, "queuer", s, p, 0, 2) },
			want:  CodeChecksMissing, reason: "step 1 ({1}) is in no group"},
		{name: "a step below its group with its own checks", rules: rulesBatch(2, 4), n: 3, green: []int{0, 2},
			setup: func(w *world, s []plumbing.Hash, p []*prq) { publish(w, "queuer", s, p, 0, 2) }},
		{name: "marks signed without hub.queue vouch for nothing", rules: rulesBatch(3, 4), n: 3, green: []int{2},
			setup: func(w *world, s []plumbing.Hash, p []*prq) { publish(w, "alice", s, p, 3) },
			want:  CodeChecksMissing, reason: "in no group"},
		{name: "a later strict record replaces a group mark", rules: rulesBatch(3, 4), n: 3, green: []int{2},
			setup: func(w *world, s []plumbing.Hash, p []*prq) {
				publish(w, "queuer", s, p, 3)
				publish(w, "queuer", s, p, 0, 0, 0)
			},
			want: CodeChecksMissing, reason: "in no group"},
		{name: "checkEvery 1 ignores marks", rules: rulesBatch(1, 4), n: 3, green: []int{2},
			setup: func(w *world, s []plumbing.Hash, p []*prq) { publish(w, "queuer", s, p, 3) },
			want:  CodeChecksMissing, reason: "on candidate {1}"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			w := newWorld(t, c.rules)
			steps, ps := batchChain(w, c.n)
			for _, i := range c.green {
				ps[i].check("ci", steps[i], "success")
			}
			for _, i := range c.red {
				ps[i].check("ci", steps[i], "failure")
			}
			c.setup(w, steps, ps)
			v := w.judge1(up(main, w.c0, steps[c.n-1]))
			if v.Code != c.want {
				t.Fatalf("code %q (%s), want %q", v.Code, v.Reason, c.want)
			}
			if c.want == "" {
				return
			}
			want := strings.NewReplacer("{1}", short(steps[0]), "{2}", short(steps[min(1, c.n-1)]), "{last}", short(steps[c.n-1])).Replace(c.reason)
			if !strings.Contains(v.Reason, want) {
				t.Fatalf("reason %q does not say %q", v.Reason, want)
			}
		})
	}
}

// TestAuditBatch: the audit judges a batch landing by the rules in force
// when it landed: steps vouched for by a green marked group end are
// justified, also once the rules say checkEvery 1 or the runner's key is
// removed (the marks are read under the trust its pr.merged names); the
// same steps without marks are not.
func TestAuditBatch(t *testing.T) {
	for _, tt := range []struct {
		name       string
		marks      bool
		strictNow  bool
		unjustKeep int
		removeQ    bool // the runner's key removed after the landing
	}{
		{"marked group", true, false, 0, false},
		{"no marks", false, false, 2, false},
		{"rules tightened after the landing", true, true, 0, false},
		{"runner removed after the landing", true, false, 0, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			w := newWorld(t, rulesBatch(3, 4))
			steps, ps := batchChain(w, 3)
			ps[2].check("ci", steps[2], "success")
			if tt.marks {
				publish(w, "queuer", steps, ps, 3)
			}
			if v := w.judge1(up(main, w.c0, steps[2])); v.Accepted() != tt.marks {
				t.Fatalf("hook: %+v", v)
			}
			w.refs[main] = steps[2]
			if tt.strictNow {
				// The landing is pinned by pr.merged records, so it is
				// judged under the trust of its time, not this one.
				for i, p := range ps {
					w.event(p.ref, "queuer", hubrefs.PRMerged{Base: w.base(hubrefs.TypePRMerged), Revision: p.head.String(), Branch: main, Commit: steps[i].String()})
				}
				w.clock += 100
				w.event(hubrefs.TrustRef, "admin", hubrefs.RulesSet{Base: w.base(hubrefs.TypeRulesSet), Rules: []byte(rulesBatch(1, 4))})
			}
			if tt.removeQ {
				// The queue records its landing with the trust it was
				// written under (as queue run does, in the landing's own
				// push): the marks are read under that trust, whoever
				// holds hub.queue now.
				for i, p := range ps {
					w.event(p.ref, "queuer", hubrefs.PRMerged{Base: w.base(hubrefs.TypePRMerged), Revision: p.head.String(), Branch: main, Commit: steps[i].String(),
						Trust: w.refs[hubrefs.TrustRef].String()})
				}
				w.clock += 100
				w.event(hubrefs.TrustRef, "admin", hubrefs.MemberRemoved{Base: w.base(hubrefs.TypeMemberRemoved), Name: "queuer"})
			}
			rep, err := Audit(AuditInput{Objects: GoGitObjects(w.store), Refs: w.refs, Branch: main})
			if err != nil {
				t.Fatal(err)
			}
			if len(rep.Unjustified) != tt.unjustKeep || len(rep.Landings) != 3-tt.unjustKeep {
				t.Fatalf("landings %+v, unjustified %+v; want %d unjustified", rep.Landings, rep.Unjustified, tt.unjustKeep)
			}
			if tt.marks && rep.Landings[0].Record != "group end "+steps[2].String() {
				t.Errorf("first landing %+v, want it vouched by the group end %s", rep.Landings[0], steps[2])
			}
		})
	}
}
