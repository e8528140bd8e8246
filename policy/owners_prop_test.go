package policy

import (
	"encoding/json"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/gitplus/gitplus/hubrefs"
	"github.com/gitplus/gitplus/hubrefs/trust"
)

// TestOwnersHookAuditAgree: over random trees (nested paths added,
// changed and deleted by heads of one to three commits), random owners
// entries and random approvals (some of them of an earlier head), a
// direct landing or a candidate step of a pull request's head is accepted
// by the hook exactly when a model says so — git diff-tree lists the files
// changed since the old tip, every entry they trigger has its approvals
// from its approvers (never the opener), or a bypass names the head — and
// verify (Audit of the whole branch, from the records) reaches the same
// verdict on that landing, with the same code, and on nothing else. A
// third or more of the heads merge the branch into a feature branch forked from
// an older tip (first parent the feature, second the tip; more commits
// after the merge half the time): the hook diffs them from the old tip,
// and so must the audit, which finds that tip only through the merge
// (issue #35). A refused landing is audited as if pushed around the
// boundary, then taken back, so every head builds on what the hook took.
// Two seeds run on a squash branch, where the steps are squash steps.
func TestOwnersHookAuditAgree(t *testing.T) {
	for seed := int64(1); seed <= 3; seed++ {
		t.Run(fmt.Sprint(seed), func(t *testing.T) { ownersAgree(t, seed, 14, false) })
	}
	// On a squash branch the steps are squash steps (one parent, the
	// trailers, the merged tree), judged against their parent.
	for seed := int64(4); seed <= 5; seed++ {
		t.Run(fmt.Sprint(seed, " squash"), func(t *testing.T) { ownersAgree(t, seed, 14, true) })
	}
}

// mergeOf is the merge commit git merge --no-ff of theirs into ours
// writes (tree from git merge-tree, parents [ours, theirs]), false when
// the merge conflicts.
func (w *world) mergeOf(ours, theirs plumbing.Hash, msg string) (plumbing.Hash, bool) {
	w.t.Helper()
	cmd := exec.Command("git", "merge-tree", "--write-tree", ours.String(), theirs.String())
	cmd.Dir = w.dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1")
	out, err := cmd.Output()
	if err != nil {
		return plumbing.ZeroHash, false
	}
	tree := strings.Fields(string(out))[0]
	return plumbing.NewHash(w.git("-c", "user.name=t", "-c", "user.email=t@example.invalid", "commit-tree", tree, "-p", ours.String(), "-p", theirs.String(), "-m", msg)), true
}

// mergedNow records that landed carried rev, as git+ writes pr.merged:
// naming the trust it was written under.
func (p *prq) mergedNow(rev, landed plumbing.Hash) *prq {
	p.w.event(p.ref, "queuer", hubrefs.PRMerged{Base: p.w.base(hubrefs.TypePRMerged), Revision: rev.String(), Branch: main, Commit: landed.String(),
		Trust: p.w.refs[hubrefs.TrustRef].String()})
	return p
}

var ownerPool = []string{"README.md", "notes.md", "docs/" + "a.md", "docs/x/y.txt", "src/main.go", "src/gen/z.go", "gen/q", "a1/b", "b/a1/b", "top.txt"}

var ownerGlobs = []string{"docs/**", "*.md", "/src/", "src/*.go", "**/gen", "docs/", "a?/b", "*.txt", "/gen/q", "x/"}

func ownersAgree(t *testing.T, seed int64, trials int, squash bool) {
	rng := rand.New(rand.NewSource(seed))
	w := newWorld(t, "")
	w.event(hubrefs.TrustRef, "admin", hubrefs.TeamSet{Base: w.base(hubrefs.TypeTeamSet), Team: "rev", Members: []string{"carol"}})
	type entry struct {
		paths, who []string
		n          int
	}
	var entries []entry
	var js []string
	for k := 1 + rng.Intn(4); k > 0; k-- {
		var e entry
		for _, i := range rng.Perm(len(ownerGlobs))[:1+rng.Intn(2)] {
			e.paths = append(e.paths, ownerGlobs[i])
		}
		e.who = [][]string{{"bob"}, {"carol"}, {"team:rev"}, {"alice", "carol"}, {"bob", "team:rev"}}[rng.Intn(5)]
		e.n = 1 + rng.Intn(2)
		entries = append(entries, e)
		pj, _ := json.Marshal(e.paths)
		wj, _ := json.Marshal(e.who)
		js = append(js, fmt.Sprintf(`{"paths":%s,"approvers":%s,"approvals":%d}`, pj, wj, e.n))
	}
	method := "merge"
	if squash {
		method = "squash"
	}
	rules := `{"protected":{"refs/heads/main":{"requiredApprovals":0,"requiredChecks":[],"queueCandidates":true,"mergeMethod":"` + method + `","owners":[` + strings.Join(js, ",") + `]}}}`
	w.event(hubrefs.TrustRef, "admin", hubrefs.RulesSet{Base: w.base(hubrefs.TypeRulesSet), Rules: json.RawMessage(rules)})
	teams := map[string][]string{"carol": {"rev"}}

	tip := w.c0
	tips := []plumbing.Hash{w.c0} // what the hook took, oldest first
	accepted, refused, merging, steps := 0, 0, 0, 0
	for trial := 0; trial < trials; trial++ {
		h := tip
		mergesMain := false
		if len(tips) > 1 && rng.Intn(2) == 0 {
			// A feature branch forked from an older tip, with the branch
			// merged in: its first-parent chain never meets the old tip.
			f := tips[rng.Intn(len(tips)-1)]
			// The feature changes what the branch did not since (or the
			// merge would conflict, mostly).
			since := map[string]bool{}
			for _, l := range strings.Split(w.git("diff-tree", "-r", "--no-renames", "--name-only", f.String(), tip.String()), "\n") {
				since[l] = true
			}
			for c := 1 + rng.Intn(2); c > 0; c-- {
				f = w.commitPathsBut(f, rng, fmt.Sprintf("t%d f%d", trial, c), since)
			}
			if m, ok := w.mergeOf(f, tip, fmt.Sprintf("t%d merge main", trial)); ok {
				h, mergesMain = m, true
				if rng.Intn(2) == 0 {
					h = w.commitPaths(h, rng, fmt.Sprintf("t%d after", trial))
				}
			}
		}
		if !mergesMain {
			for c := 1 + rng.Intn(3); c > 0; c-- {
				h = w.commitPaths(h, rng, fmt.Sprintf("t%d c%d", trial, c))
			}
		}
		p := w.open(h)
		approved := map[string]bool{}
		for _, who := range []string{"bob", "carol"} {
			if rng.Intn(2) == 0 {
				p.approve(who)
				approved[who] = true
			}
		}
		if !mergesMain && rng.Intn(5) == 0 { // a pushed head stales them (a rewritten one,
			// so that the audit cannot read the old head as a landing of its own)
			h2 := w.commitPaths(tip, rng, fmt.Sprintf("t%d late", trial))
			w.event(p.ref, "alice", hubrefs.PRUpdated{Base: w.base(hubrefs.TypePRUpdated), Head: h2.String()})
			p.head, h = h2, h2
			approved = map[string]bool{}
			if rng.Intn(2) == 0 {
				p.approve("carol")
				approved["carol"] = true
			}
		}
		candidate := rng.Intn(3) == 0
		bypass := !candidate && rng.Intn(6) == 0
		if bypass {
			w.event(p.ref, "admin", hubrefs.PRBypassed{Base: w.base(hubrefs.TypePRBypassed), Head: h.String(), BaseRef: main, Reason: "hotfix"})
		}
		landed := h
		if candidate && squash {
			landed = w.squashOf(tip, p, "", plumbing.ZeroHash) // squash_test.go
		} else if candidate {
			landed = w.merge(tip, h)
		}
		// The model.
		var changed []string
		for _, l := range strings.Split(w.git("diff-tree", "-r", "--no-renames", "--name-only", tip.String(), landed.String()), "\n") {
			if l != "" {
				changed = append(changed, l)
			}
		}
		want := true
		for _, e := range entries {
			hit := false
			for _, pat := range e.paths {
				g, err := trust.CompilePathGlob(pat)
				if err != nil {
					t.Fatal(err)
				}
				for _, f := range changed {
					hit = hit || g.Match(f)
				}
			}
			n := 0
			for who := range approved {
				if trust.Counts(e.who, who, teams[who]) {
					n++
				}
			}
			if hit && n < e.n {
				want = false
			}
		}
		want = want || bypass
		v := w.judge1(up(main, tip, landed))
		if v.Accepted() != want || !v.Accepted() && v.Code != CodeOwners {
			t.Fatalf("trial %d (rules %s, changed %q, approved %v, candidate %v, bypass %v): hook [%s] %s; model accepts=%v", trial, rules, changed, approved, candidate, bypass, v.Code, v.Reason, want)
		}
		// Land it either way (a refused one as if around the boundary) and
		// audit the whole branch: this landing is judged as the hook judged
		// it, and nothing else is unjustified.
		p.mergedNow(h, landed)
		w.refs[main] = landed
		rep, err := Audit(AuditInput{Objects: GoGitObjects(w.store), Refs: w.refs, Branch: main})
		if err != nil {
			t.Fatal(err)
		}
		justified := false
		for _, l := range rep.Landings {
			justified = justified || l.Commit == landed
		}
		ok := justified && len(rep.Unjustified) == 0
		if !want {
			// The refused landing, and below it the head's own commits
			// that nothing landed covers (never one the hook took).
			onLanded := false
			ok = !justified
			for _, f := range rep.Unjustified {
				if f.Commit == landed {
					onLanded = f.Code == CodeOwners
				} else {
					ok = ok && !slices.Contains(tips, f.Commit)
				}
			}
			ok = ok && onLanded
		}
		if !ok {
			t.Fatalf("trial %d (rules %s, changed %q, merges main %v, candidate %v): hook accepts=%v, audit %+v", trial, rules, changed, mergesMain, candidate, v.Accepted(), rep)
		}
		if mergesMain {
			merging++
		}
		if candidate {
			steps++
		}
		if want {
			accepted++
			tip = landed
			tips = append(tips, landed)
		} else {
			refused++
			w.refs[main] = tip
		}
	}
	if accepted == 0 || refused == 0 || merging == 0 || steps == 0 {
		t.Errorf("seed %d: lopsided, %d accepted, %d refused, %d merging the branch in, %d steps", seed, accepted, refused, merging, steps)
	}
}

// commitPaths commits on top of from a random change of ownerPool's
// paths: each added or changed with probability 1/4, deleted with 1/8.
func (w *world) commitPaths(from plumbing.Hash, rng *rand.Rand, msg string) plumbing.Hash {
	w.t.Helper()
	return w.commitPathsBut(from, rng, msg, nil)
}

// commitPathsBut is commitPaths leaving the paths in keep as they are.
func (w *world) commitPathsBut(from plumbing.Hash, rng *rand.Rand, msg string, keep map[string]bool) plumbing.Hash {
	w.t.Helper()
	idx := filepath.Join(w.t.TempDir(), "index")
	run := func(stdin string, args ...string) string {
		cmd := exec.Command("git", args...)
		cmd.Dir = w.dir
		cmd.Stdin = strings.NewReader(stdin)
		cmd.Env = append(os.Environ(), "GIT_INDEX_FILE="+idx, "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.invalid",
			"GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.invalid", "GIT_CONFIG_NOSYSTEM=1")
		out, err := cmd.CombinedOutput()
		if err != nil {
			w.t.Fatalf("git %v: %v: %s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	run("", "read-tree", from.String())
	var lines []string
	for _, p := range ownerPool {
		if keep[p] {
			continue
		}
		switch r := rng.Intn(8); {
		case r < 2:
			blob := w.storeRaw(plumbing.BlobObject, []byte(fmt.Sprintf("%s %d\n", msg, rng.Int())))
			lines = append(lines, fmt.Sprintf("100644 %s\t%s", blob, p))
		case r == 2:
			lines = append(lines, fmt.Sprintf("0 %s\t%s", plumbing.ZeroHash, p))
		}
	}
	if len(lines) > 0 && !slices.Contains(lines, "") {
		run(strings.Join(lines, "\n")+"\n", "update-index", "--index-info")
	}
	tree := run("", "write-tree")
	return plumbing.NewHash(run("", "commit-tree", tree, "-p", from.String(), "-m", msg))
}
