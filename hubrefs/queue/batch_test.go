package queue

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/gitplus/gitplus/hubrefs"
	"github.com/gitplus/gitplus/hubrefs/pr"
)

// TestBatchGroups: the groups cut from a chain's verdicts under
// checkEvery k, and the culprit (a red group of one with green ends ahead).
func TestBatchGroups(t *testing.T) {
	for _, tt := range []struct {
		verdicts string // one letter a step: P pending, G green, R red
		k        int
		groups   string
		culprit  int
	}{
		{"PPPP", 4, "0-3", -1},
		{"PPPPP", 2, "0-1,2-3,4-4", -1},
		{"PPPR", 4, "0-1,2-3", -1},           // red end: halve, CI runs step 1
		{"PGPR", 4, "0-1,2-2,3-3", -1},       // first half green: halve the second
		{"PGRR", 4, "0-0,1-2", -1},           // halving from the first red step; step 3 held
		{"GRRR", 4, "1-1", 1},                // a red group of one, green ahead: evict it
		{"GGGR", 4, "3-3", 3},                // own greens land; the red one is alone
		{"PRPPP", 3, "0-0,1-1", -1},          // a known red step ends its group; the rest held
		{"RPPP", 4, "0-0", 0},                // red first step: the culprit at once
		{"GGGG", 4, "", -1},                  // all green, unmarked: every step lands on its own checks
		{"PPPPPPPP", 8, "0-7", -1},           // one group up to k
		{"PPPPPPPPPP", 4, "0-3,4-7,8-9", -1}, // the last group shorter
	} {
		t.Run(fmt.Sprintf("%s_k%d", tt.verdicts, tt.k), func(t *testing.T) {
			var chain []Step
			for i, v := range tt.verdicts {
				st := Step{Commit: hex(fmt.Sprint("s", i)), Verdict: map[rune]string{'P': Pending, 'G': Green, 'R': Red}[v]}
				chain = append(chain, st)
			}
			q := &State{marks: map[string]int{}}
			culprit, _ := batchGroups(chain, q, tt.k, nil, false)
			var groups []string
			for i := 0; i < len(chain); i++ {
				if chain[i].GroupEnd == "" {
					continue
				}
				n := chain[i].GroupSize
				end := i + n - 1
				if end >= len(chain) || chain[end].Commit != chain[i].GroupEnd {
					t.Fatalf("step %d: group end %s, size %d, not a step %d ahead", i, chain[i].GroupEnd, n, n-1)
				}
				groups = append(groups, fmt.Sprintf("%d-%d", i, end))
				i = end
			}
			if got := strings.Join(groups, ","); got != tt.groups || culprit != tt.culprit {
				t.Errorf("groups %q culprit %d; want %q, %d", got, culprit, tt.groups, tt.culprit)
			}
		})
	}
}

// TestBatchLandable: the prefix the planner lands under batch checks is
// the one the boundary accepts from the published marks.
func TestBatchLandable(t *testing.T) {
	for _, tt := range []struct {
		verdicts string
		marks    map[int]int // step → group size its record marks it the end of
		k, want  int
	}{
		{"PPPG", map[int]int{3: 4}, 4, 4},
		{"PPPG", nil, 4, 0},                     // no marks: no vouching
		{"PPPG", map[int]int{3: 4}, 3, 0},       // a mark longer than k
		{"PPPG", map[int]int{3: 2}, 4, 0},       // the group does not reach the start
		{"PGPG", map[int]int{1: 2, 3: 2}, 4, 4}, // two groups
		{"PGPP", map[int]int{1: 2, 3: 2}, 4, 2}, // the second end pending: land the first group
		{"PPGG", map[int]int{1: 2, 3: 2}, 4, 0}, // a marked end not green blocks what it marks
		{"GPPG", map[int]int{3: 3}, 4, 4},       // an own green below a group
	} {
		var chain []Step
		q := &State{marks: map[string]int{}}
		for i, v := range tt.verdicts {
			st := Step{Commit: hex(fmt.Sprint("s", i)), Verdict: map[rune]string{'P': Pending, 'G': Green, 'R': Red}[v]}
			chain = append(chain, st)
			if n, ok := tt.marks[i]; ok {
				q.marks[st.Commit] = n
			}
		}
		if got := batchLandable(chain, q, tt.k); got != tt.want {
			t.Errorf("%s marks %v k %d: landable %d, want %d", tt.verdicts, tt.marks, tt.k, got, tt.want)
		}
	}
}

// applyBatch is world.apply with the group marks of queue.candidate.
func (w *world) applyBatch(p Plan) {
	pubs := p.Publish
	p.Publish = nil
	w.apply(p)
	for _, pb := range pubs {
		fields := []any{"pr", pb.PR, "head", pb.Head, "step", pb.Step, "parents", pb.Parents, "branch", pb.Branch}
		if pb.GroupEnd != "" {
			fields = append(fields, "groupEnd", pb.GroupEnd, "groupSize", pb.GroupSize)
		}
		if pb.Trial {
			fields = append(fields, "trial", true)
		}
		if pb.Run != "" {
			fields = append(fields, "run", pb.Run)
		}
		if pb.Partition != "" {
			fields = append(fields, "partition", pb.Partition)
		}
		w.q.add(w.c.runner, hubrefs.TypeQueueCandidate, fields...)
	}
}

// TestBatchDrain drives the planner with a CI that runs every step
// published as a group end (as check run does, again if announced again), failing any step that contains a broken pull
// request: the good pull requests all land, each broken one is evicted
// alone after a search by halving, nobody enters again, and the CI runs are
// counted against checkEvery 1 on the same queue.
func TestBatchDrain(t *testing.T) {
	for _, tt := range []struct {
		name    string
		k       int
		n       int
		broken  []string
		runs    int // CI runs to drain
		landed  string
		evicted string
	}{
		{name: "strict, one broken", k: 1, n: 4, broken: []string{"c"}, runs: 5, landed: "a,b,d", evicted: "c"},
		{name: "groups of 4, none broken", k: 4, n: 4, runs: 1, landed: "a,b,c,d"},
		// The group end (red); trials a-b, c-d; trials c, d (the green ones
		// land as they are): 5 runs in 3 rounds.
		{name: "groups of 4, one broken", k: 4, n: 4, broken: []string{"c"}, runs: 5, landed: "a,b,d", evicted: "c"},
		{name: "groups of 4, the first broken", k: 4, n: 4, broken: []string{"a"}, runs: 5, landed: "b,c,d", evicted: "a"},
		{name: "strict over 8, two broken", k: 1, n: 8, broken: []string{"b", "g"}, runs: 15, landed: "a,c,d,e,f,h", evicted: "b,g"},
		// Both groups red (the second holds the first); e-h rebuilt on the
		// tip, red again; each group searched in trials of 2 then 1; a and h
		// cleared and checked again in the chain.
		{name: "groups of 4 over 8, two broken", k: 4, n: 8, broken: []string{"b", "g"}, runs: 13, landed: "a,c,d,e,f,h", evicted: "b,g"},
		{name: "groups of 2 over 8, two broken", k: 2, n: 8, broken: []string{"b", "g"}, runs: 13, landed: "a,c,d,e,f,h", evicted: "b,g"},
		{name: "groups of 8 over 8, none broken", k: 8, n: 8, runs: 1, landed: "a,b,c,d,e,f,g,h"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := newCast(t)
			var names []string
			specs := map[string]prSpec{}
			for i := 0; i < tt.n; i++ {
				n := string(rune('a' + i))
				names = append(names, n)
				specs[n] = prSpec{head: "h" + n}
			}
			w := newWorld(t, c, names, specs)
			heads := map[plumbing.Hash]string{}
			for _, n := range names {
				heads[plumbing.NewHash(hex("h"+n))] = n
			}
			// Each step's pull requests, to know whether it holds a broken one.
			holds := map[plumbing.Hash][]string{}
			tip := tip0
			var checks []chk
			runs := 0
			var landed, evicted []string
			for round := 0; round < 60; round++ {
				in := w.input(t, tip)
				in.Branch.CheckEvery = tt.k
				for id := range w.prs {
					w.prs[id] = c.pr(t, nameOf(id), prSpec{head: specs[nameOf(id)].head, checks: checks})
				}
				in.PRs = w.prs
				p, err := PlanPass(in)
				if err != nil {
					t.Fatal(err)
				}
				if p.Appends() == 0 && p.Land == nil {
					if len(p.Chain) == 0 {
						break
					}
				}
				for _, st := range p.Chain {
					parent := plumbing.NewHash(st.Parent)
					holds[plumbing.NewHash(st.Commit)] = append(slices.Clone(holds[parent]), nameOf(st.PR))
				}
				for _, pb := range p.Publish { // trials too, built on the tip
					parent := plumbing.NewHash(pb.Parents[0])
					holds[plumbing.NewHash(pb.Step)] = append(slices.Clone(holds[parent]), nameOf(pb.PR))
				}
				if p.Land != nil {
					tip = plumbing.NewHash(p.Land.New)
					for _, l := range p.Land.Landed {
						landed = append(landed, nameOf(l.PR))
						w.contains[plumbing.NewHash(l.Head)] = true
					}
				}
				for _, e := range p.Evict {
					evicted = append(evicted, nameOf(e.PR))
				}
				w.applyBatch(p)
				if len(p.Enter) > 0 {
					t.Fatalf("round %d entered %v", round, p.Enter)
				}
				// Planning again before CI answers changes nothing.
				again := w.input(t, tip)
				again.Branch.CheckEvery = tt.k
				again.PRs = w.prs
				if p2, err := PlanPass(again); err != nil || p2.Appends() != 0 || p2.Land != nil {
					t.Fatalf("round %d: planning again is not idle (%v): %+v", round, err, p2)
				}
				// CI: run the published group ends (every step with k = 1).
				for _, pb := range p.Publish {
					step := plumbing.NewHash(pb.Step)
					if pb.GroupEnd != "" && pb.GroupEnd != pb.Step {
						continue // check run skips a step inside a group
					}
					runs++
					concl := pr.Success
					for _, n := range holds[step] {
						if slices.Contains(tt.broken, n) {
							concl = pr.Failure
						}
					}
					checks = append(checks, chk{step, concl})
				}
			}
			slices.Sort(landed)
			slices.Sort(evicted)
			if got := strings.Join(landed, ","); got != tt.landed {
				t.Errorf("landed %q, want %q", got, tt.landed)
			}
			if got := strings.Join(evicted, ","); got != tt.evicted {
				t.Errorf("evicted %q, want %q", got, tt.evicted)
			}
			if tt.runs > 0 && runs != tt.runs {
				t.Errorf("%d CI runs, want %d", runs, tt.runs)
			}
			t.Logf("checkEvery %d: %d pull requests, broken %v: %d CI runs", tt.k, tt.n, tt.broken, runs)
		})
	}
}

// TestBatchSilence: checkTimeout counts only against steps CI was asked
// for. Steps inside a group never time out; a silent group end turns red,
// which starts the search aside (its halves in trials on the target)
// instead of evicting anyone at once.
func TestBatchSilence(t *testing.T) {
	c := newCast(t)
	specs := map[string]prSpec{"a": {head: "ha"}, "b": {head: "hb"}, "c": {head: "hc"}, "d": {head: "hd"}}
	w := newWorld(t, c, []string{"a", "b", "c", "d"}, specs)
	in := w.input(t, tip0)
	in.Branch.CheckEvery = 4
	p1, err := PlanPass(in)
	if err != nil || len(p1.Publish) != 4 {
		t.Fatalf("first pass: %v %+v", err, p1)
	}
	w.applyBatch(p1)
	in = w.input(t, tip0)
	in.Branch.CheckEvery = 4
	in.Branch.CheckTimeout = time.Minute
	rec, _ := in.Queue.LatestCandidate(prID("d"))
	in.Now = rec.Time + 3600
	p, err := PlanPass(in)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Evict) != 0 || chainStr(p) != "" {
		t.Fatalf("evicted %v, chain %s; want no eviction and the red group out of the chain", p.Evict, chainStr(p))
	}
	// The search starts: a, b and c, d are trials of their own on the
	// target, ending at b and d.
	var ends []string
	for _, pb := range p.Publish {
		if !pb.Trial || pb.Parents[0] != tip0.String() && (pb.PR == prID("a") || pb.PR == prID("c")) {
			t.Fatalf("published %+v: want trials, each built on the tip", pb)
		}
		if pb.GroupEnd == pb.Step {
			ends = append(ends, nameOf(pb.PR))
		}
	}
	if strings.Join(ends, ",") != "b,d" {
		t.Fatalf("newly announced group ends %v, want b,d", ends)
	}
}

// TestJudgeBatch: the batch-check rule the hook and the planner share
// (docs/boundary.md, "Batch checks"), fault by fault, in the hook's order.
func TestJudgeBatch(t *testing.T) {
	q := &State{marks: map[string]int{}}
	steps := []string{hex("s1"), hex("s2"), hex("s3"), hex("s4")}
	mark := func(step string, n int) { q.marks[step] = n }
	mark(steps[2], 3) // s1..s3 under checkEvery 3
	mark(steps[3], 1)
	cases := []struct {
		name  string
		green []bool
		k     int
		want  BatchJudgement
	}{
		{"all green reads no mark, even one longer than k", []bool{true, true, true, true}, 2, BatchJudgement{Step: -1}},
		{"k = 1: every step its own checks", []bool{true, false, true, true}, 1, BatchJudgement{Fault: BatchUnvouched, Step: 1}},
		{"the last step lacks its checks", []bool{true, true, true, false}, 3, BatchJudgement{Fault: BatchLastNotGreen, Step: 3, Marked: true, Size: 1}},
		{"a green end vouches for its group", []bool{false, false, true, true}, 3, BatchJudgement{Step: -1}},
		{"a mark longer than k", []bool{false, true, true, true}, 2, BatchJudgement{Fault: BatchTooLong, Step: 2, Marked: true, Size: 3}},
		{"a marked end lacks its checks", []bool{true, true, false, true}, 3, BatchJudgement{Fault: BatchEndNotGreen, Step: 2, Marked: true, Size: 3}},
	}
	for _, c := range cases {
		if got := JudgeBatch(steps, c.green, q, c.k); got != c.want {
			t.Errorf("%s: %+v, want %+v", c.name, got, c.want)
		}
	}
	// No marks: an unchecked step is vouched for by nobody.
	if got := JudgeBatch(steps, []bool{true, false, true, true}, &State{}, 3); got != (BatchJudgement{Fault: BatchUnvouched, Step: 1}) {
		t.Errorf("no marks: %+v", got)
	}
	// Landable is JudgeBatch over the planner's verdicts.
	prefix := []Step{{Commit: steps[0], Verdict: Green}, {Commit: steps[1], Verdict: Green}, {Commit: steps[2], Verdict: Green}}
	if !Landable(prefix, q, 2) || Landable(prefix[:0], q, 2) {
		t.Errorf("Landable disagrees with JudgeBatch on an all-green prefix under a mark longer than k")
	}
}
