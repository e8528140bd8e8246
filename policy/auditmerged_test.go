package policy

import (
	"fmt"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/gitplus/gitplus/hubrefs/queue"
)

// TestAuditFalseRecord (issue #35 item 1): alice's reviewed pull request
// lands a commit whose message carries the squash trailers of bob's pull
// request; a pr.merged of bob's naming that commit (which the hook now
// refuses, so it is written around it) is a finding although alice's own
// record justifies the landing (or covers the commit, below the head that
// landed): bob's change did not land there. On a
// squash branch, the same record naming a real squash step of bob's head
// is true.
func TestAuditFalseRecord(t *testing.T) {
	for _, c := range []struct {
		name, rules string
		tree        func(w *world, hb plumbing.Hash) plumbing.Hash // alice's commit's tree
		want        string
		covered     bool // alice's head is a commit above it: her landing covers it
	}{
		{"trailers alone, in a commit a landing covers", `{"protected":{"refs/heads/main":{"requiredChecks":["ci"]}}}`,
			func(w *world, hb plumbing.Hash) plumbing.Hash {
				return commitTreeOf(w, w.commit(w.c0, "a.txt", "alice\n"))
			}, CodeMergedNotLanded, true},
		{"trailers alone, merge branch", `{"protected":{"refs/heads/main":{"requiredChecks":["ci"]}}}`,
			func(w *world, hb plumbing.Hash) plumbing.Hash {
				return commitTreeOf(w, w.commit(w.c0, "a.txt", "alice\n"))
			}, CodeMergedNotLanded, false},
		{"bob's change squashed in, merge branch", `{"protected":{"refs/heads/main":{"requiredChecks":["ci"]}}}`,
			func(w *world, hb plumbing.Hash) plumbing.Hash { return mergeTreeOf(w, w.c0, hb) }, CodeMergedNotLanded, false},
		{"a squash step of bob's head, squash branch", `{"protected":{"refs/heads/main":{"requiredChecks":["ci"],"mergeMethod":"squash"}}}`,
			func(w *world, hb plumbing.Hash) plumbing.Hash { return mergeTreeOf(w, w.c0, hb) }, "", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			w := newWorld(t, c.rules)
			hb := w.commit(w.c0, "b.txt", "bob\n")
			bob := w.ready(hb)
			ha := w.storeRaw(plumbing.CommitObject, []byte(fmt.Sprintf("tree %s\nparent %s\nauthor alice <a@example.invalid> 1700000000 +0000\ncommitter alice <a@example.invalid> 1700000000 +0000\n\nalice's change\n\n%s: %s\n%s: %s\n",
				c.tree(w, hb), w.c0, queue.TrailerPR, bob.id, queue.TrailerHead, hb)))
			head := ha
			if c.covered {
				head = w.commit(ha, "more.txt", "more\n")
			}
			alice := w.ready(head)
			w.refs[main] = head
			alice.mergedNow(head, head)
			bob.mergedNow(hb, ha)
			rep, err := auditAll(t, w)
			if err != nil {
				t.Fatal(err)
			}
			got := ""
			for _, f := range rep.Unjustified {
				if f.Commit == ha {
					got = f.Code
					if !strings.Contains(f.Reason, bob.id) {
						t.Errorf("the finding does not name bob's pull request: %s", f.Reason)
					}
				}
			}
			if got != c.want || len(rep.Landings) != 1 || rep.Landings[0].Commit != head {
				t.Fatalf("finding %q, want %q: %+v", got, c.want, rep)
			}
		})
	}
}

func commitTreeOf(w *world, c plumbing.Hash) plumbing.Hash {
	return plumbing.NewHash(w.git("rev-parse", c.String()+"^{tree}"))
}

func mergeTreeOf(w *world, ours, theirs plumbing.Hash) plumbing.Hash {
	return plumbing.NewHash(strings.Fields(w.git("merge-tree", "--write-tree", ours.String(), theirs.String()))[0])
}
