package main

// Several runners at once (docs/queue.md: "any member holding the
// capabilities may run it, several at once"): three `git+ queue run`
// processes launched together, round after round, over 12 pull requests (30
// with GITPLUS_TEST_QUEUE_RACE_PRS=30) of which a tenth (seeded random) are
// broken; between rounds a CI simulator records check.completed on every
// published candidate. The queue must drain with every pull request landed
// exactly once (pr.merged once, its candidate a first-parent step of the
// target, so the target only moved by landings the hook accepted) or evicted
// as failed.

import (
	"encoding/json"
	"math/rand"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gitplus/gitplus/hubrefs"
)

func TestQueueRunnersRace(t *testing.T) {
	t.Parallel()
	// 30 pull requests cost about four minutes of CPU (every publish and
	// landing is a push through the hook, three runners each): the default
	// is 12; GITPLUS_TEST_QUEUE_RACE_PRS=30 runs the full size.
	n, runners, rounds := 12, 3, 40
	if v, err := strconv.Atoi(os.Getenv("GITPLUS_TEST_QUEUE_RACE_PRS")); err == nil && v > 3 {
		n = v
	}
	qw := newQWorld(t, n, true)
	rng := rand.New(rand.NewSource(20261202))
	broken := map[string]bool{}
	for _, i := range rng.Perm(n)[:n/10+1] {
		broken[qw.ids[i]] = true
	}
	dir := qw.origin
	maintainBeside(t, dir)
	var failures []string
	quiet := 0
	start := time.Now()
	for round := 0; round < rounds && quiet < 2; round++ {
		before := qw.allRefs(t, dir)
		var wg sync.WaitGroup
		var mu sync.Mutex
		for i := 0; i < runners; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				// --no-lock: the runners race as on separate machines,
				// through compare-and-swap alone; the lock is tested
				// on its own.
				_, out, code := qw.pass(t, dir, nil, "--no-lock")
				if code != 0 {
					mu.Lock()
					failures = append(failures, out)
					mu.Unlock()
				}
			}()
		}
		wg.Wait()
		qw.ci(t, dir, broken)
		if qw.allRefs(t, dir) == before {
			quiet++
		} else {
			quiet = 0
		}
		t.Logf("round %d: %s", round, time.Since(start))
	}
	if quiet < 2 {
		t.Fatalf("the queue did not drain in %d rounds", rounds)
	}
	if len(failures) > 0 {
		t.Errorf("%d runner(s) failed:\n%s", len(failures), strings.Join(failures, "\n---\n"))
	}
	if rep := qw.okPass(t, dir); len(rep.Chain)+len(rep.Waiting) > 0 {
		t.Logf("landed %+v refused %v resets %v published %d idle %q", rep.Landed, rep.Refused, rep.Resets, len(rep.Published), rep.Idle)
		for _, st := range rep.Chain {
			t.Logf("chain %s %s on %s: %s missing %v", st.PR, st.Commit, st.Parent, st.Verdict, st.Missing)
		}
		t.Logf("waiting %+v warnings %v tip %s\n%s", rep.Waiting, rep.Warnings, rep.Tip, qw.gitDir(t, dir, "for-each-ref", "refs/heads/"))
	}
	qw.converged(t, dir, broken)
	// Exactly once under overlap: one queue.candidate per published step.
	seen := map[string]int{}
	for _, line := range strings.Split(qw.gitDir(t, dir, "log", "--format=%b", hubrefs.QueueRefPrefix+qw.qid), "\n") {
		var c hubrefs.QueueCandidate
		if json.Unmarshal([]byte(line), &c) == nil && c.Type == hubrefs.TypeQueueCandidate {
			seen[c.PR+" "+c.Step]++
		}
	}
	if len(seen) < len(qw.ids) {
		t.Errorf("read %d queue.candidate records for %d pull requests: the log format changed?", len(seen), len(qw.ids))
	}
	for k, n := range seen {
		if n != 1 {
			t.Errorf("queue.candidate %s recorded %d times", k, n)
		}
	}
}
