package policy

import (
	"fmt"
	"strings"
	"testing"
)

// concurrentObjects declares the store safe for concurrent reads, so that a
// chain's merges are spread over goroutines (go-git's memory storage is, as
// long as nothing writes).
type concurrentObjects struct{ Objects }

func (concurrentObjects) ConcurrentReads() bool { return true }

// TestParallelChainMerges: a chain's rule-3 merges give the same verdict
// read from one goroutine or several, and a refusal names the first bad
// step in chain order even when a later step is bad too.
func TestParallelChainMerges(t *testing.T) {
	const n = minParallelSteps + 4
	rules := fmt.Sprintf(`{"protected":{"refs/heads/main":{"requiredChecks":["ci"],"queueCandidates":true,"queueDepth":%d}}}`, n)
	build := func(t *testing.T, tamper ...int) (*world, Update) {
		w := newWorld(t, rules)
		bad := map[int]bool{}
		for _, i := range tamper {
			bad[i] = true
		}
		c := w.c0
		for i := 1; i <= n; i++ {
			h := w.commit(w.c0, fmt.Sprintf("f%d", i), "x\n")
			p := w.open(h).approve("bob")
			c = w.merge(c, h)
			if bad[i] {
				w.write(fmt.Sprintf("smuggled%d", i), "evil\n")
				w.git("add", "-A")
				w.git("commit", "-q", "--amend", "-m", "candidate")
				c = w.head()
			}
			p.check("ci", c, "success")
		}
		return w, up(main, w.c0, c)
	}
	judgeBoth := func(t *testing.T, w *world, u Update) Verdict {
		t.Helper()
		seq := Judge(Input{Objects: GoGitObjects(w.store), Refs: w.refs, Updates: []Update{u}})
		par := Judge(Input{Objects: concurrentObjects{GoGitObjects(w.store)}, Refs: w.refs, Updates: []Update{u}})
		if seq[0] != par[0] {
			t.Fatalf("verdicts differ:\nsequential %+v\nconcurrent %+v", seq[0], par[0])
		}
		return par[0]
	}
	t.Run("accepted", func(t *testing.T) {
		w, u := build(t)
		if v := judgeBoth(t, w, u); !v.Accepted() {
			t.Fatalf("refused: %+v", v)
		}
	})
	t.Run("first bad step reported", func(t *testing.T) {
		w, u := build(t, 3, 7)
		v := judgeBoth(t, w, u)
		if v.Code != CodeCandidateTree || !strings.HasPrefix(v.Reason, "step 3 ") {
			t.Fatalf("verdict %+v, want %s at step 3", v, CodeCandidateTree)
		}
	})
	t.Run("bad step in the second block", func(t *testing.T) {
		w, u := build(t, n)
		v := judgeBoth(t, w, u)
		if v.Code != CodeCandidateTree || !strings.HasPrefix(v.Reason, fmt.Sprintf("step %d ", n)) {
			t.Fatalf("verdict %+v, want %s at step %d", v, CodeCandidateTree, n)
		}
	})
}
