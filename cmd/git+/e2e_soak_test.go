package main

// The closed-loop soak (docs/queue.md, "Running it unattended"): `git+
// serve` over HTTP, the README's wake rules starting `queue run` and CI
// (`check run --retries 1`), clones opening pull requests concurrently —
// some conflicting, some broken, one flaky — and nobody kicking the queue
// but a developer re-entering a pull request a flake evicted. It runs until
// the queue drains and checks that everything happened exactly once.
//
// The suite runs 4 clones × 1 pull request (the conflicting pair, the
// broken one and the flaky one); GITPLUS_SOAK_PER_CLONE=8 is
// the full size (bench/soak.sh), which also prints the figures.

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gitplus/gitplus/hooks/config"
	"github.com/gitplus/gitplus/hooks/wake"
	"github.com/gitplus/gitplus/hubrefs"
	"github.com/gitplus/gitplus/hubrefs/queue"
)

// soakRules are the README's wake rules ("Running the queue unattended":
// CI on published candidates, `queue run` on a completed check and on
// queue.entered), read from README.md, with the CI command replaced by
// ciScript, which logs its runs beside itself: check run's sandbox lets it
// write there (--cache, docs/ci.md). With gate set, the CI job waits for that file to exist before
// it starts check run (bin, the git+ binary the wake rule's "git+" names).
func soakRules(t *testing.T, ciScript, gate, bin string) wake.WakeConfig {
	t.Helper()
	readme := readFile(filepath.Join("..", "..", "README.md"))
	_, block, ok := strings.Cut(readme, "<!-- wake-rules -->\n```json\n")
	block, _, ok2 := strings.Cut(block, "```")
	if !ok || !ok2 {
		t.Fatal("README.md has no wake-rules block")
	}
	var cfg wake.WakeConfig
	if err := json.Unmarshal([]byte(block), &cfg); err != nil {
		t.Fatalf("README.md's wake rules: %v", err)
	}
	found := 0
	for i, r := range cfg.Rules {
		switch {
		case r.Ref == "refs/hub/queue/*" && slices.Equal(r.On, []string{hubrefs.TypeQueueCandidate}) && slices.Contains(r.Run, "check"):
			dashes := slices.Index(r.Run, "--")
			if dashes < 0 || dashes != len(r.Run)-2 {
				t.Fatalf("README.md's CI rule does not end with -- and its command: %q", r.Run)
			}
			cfg.Rules[i].Run = append(append(slices.Clone(r.Run[:dashes]), "--cache", filepath.Dir(ciScript), "--"), "sh", ciScript)
			if gate != "" {
				wait := fmt.Sprintf(`while [ ! -e %q ]; do sleep 0.2; done; exec "$@"`, gate)
				run := append([]string{"sh", "-c", wait, "gate"}, cfg.Rules[i].Run...)
				if run[4] == "git+" {
					run[4] = bin
				}
				cfg.Rules[i].Run = run
			}
			found++
		case r.Ref == "refs/hub/pr/*" && slices.Equal(r.On, []string{hubrefs.TypeCheckCompleted}) && slices.Contains(r.Run, "queue"):
			found++
		}
	}
	if found != 2 {
		t.Fatalf("README.md's wake rules lack CI on queue.candidate or queue run on check.completed: %+v", cfg.Rules)
	}
	return cfg
}

// soakCI is the CI command, run in the candidate's checkout: it logs the
// commit, fails when a BROKEN-* file is in the tree, and fails the first
// runs (as many as its second argument says) of a candidate whose pull
// request (second parent, or a squash step's Git-Plus-Head) adds FLAKY-*.
const soakCI = `log=%q
git rev-parse HEAD >>"$log/runs"
for f in BROKEN-*; do [ -e "$f" ] && exit 1; done
head=$(git log -1 --format='%%(trailers:key=Git-Plus-Head,valueonly)' HEAD)
[ -n "$head" ] || head=HEAD^2
for f in $(git ls-tree --name-only $head | grep '^FLAKY-'); do
  n=$(cat "$log/$f" 2>/dev/null || echo 0); echo $((n+1)) >"$log/$f"
  [ "$n" -ge %d ] || exit 1
done
exit 0
`

type soakPR struct {
	id, kind string // kind: good, broken, flaky, conflict
	clone    int
}

func TestQueueSoak(t *testing.T) {
	t.Parallel()
	soak(t, e2eQueueRules, false, 0)
}

// TestQueueSoakWorkers is the soak with the README's CI wake rule replaced
// by two `git+ check worker` processes in their own clones (docs/queue.md,
// "Check workers"): the same end state, and CI still runs each candidate at
// most (1 + retries) times per announcement.
func TestQueueSoakWorkers(t *testing.T) {
	t.Parallel()
	soak(t, e2eQueueRules, false, 2)
}

// TestQueueSoakSquash is the soak on a branch taking squash steps
// (docs/queue.md, "Step shapes"): the README's wake rules land the queue
// as squash steps, exactly once each, and main holds no merge commit.
func TestQueueSoakSquash(t *testing.T) {
	t.Parallel()
	w, _ := soak(t, `{"protected": {"refs/heads/main": {"requiredApprovals": 1, "requiredChecks": ["ci"], "queueCandidates": true, "mergeMethod": "squash", "requireLinearHistory": true}}}`, false, 0)
	if merges := w.git(w.origin, "log", "--merges", "--format=%H", "refs/heads/main"); merges != "" {
		t.Errorf("git log --merges main: %s", merges)
	}
}

// TestQueueSoakBatch is the soak under batch checks (checkEvery 4, depth
// 4): the broken pull request's group turns red and is searched aside, in
// trials the wake rules run CI on (docs/queue.md, "Searching a red group
// aside"), by the same processes, and everything still happens exactly
// once.
func TestQueueSoakBatch(t *testing.T) {
	t.Parallel()
	w, qid := soak(t, `{"protected": {"refs/heads/main": {"requiredApprovals": 1, "requiredChecks": ["ci"], "queueCandidates": true, "queueDepth": 4, "checkEvery": 4}}}`, true, 0)
	log := w.git(w.origin, "log", "--format=%b", hubrefs.QueueRefPrefix+qid)
	if !strings.Contains(log, `"trial":true`) {
		t.Errorf("no trial was published: the broken pull request's group was not searched aside\n%s", log)
	}
}

// soak runs the closed loop under rules and checks it (soakCheck); it
// returns the environment and the queue's id. With batch, the broken pull
// request is entered after the others and no CI job starts check run
// before all are entered, so it is checked in a group with others rather
// than alone;
// and the flaky pull request fails its first run only, not two: a search
// step runs once, so one that failed alone twice on a tip another pull
// request already failed alone on looks like a red target and stops the
// queue for a person (docs/queue.md, "Searching a red group aside"),
// which a soak with nobody watching cannot take.
//
// With workers > 0 the CI wake rule is left out and that many check
// workers run the CI command instead.
func soak(t *testing.T, rules string, batch bool, workers int) (*e2e, string) {
	clones, perClone := 4, 1
	if v, err := strconv.Atoi(os.Getenv("GITPLUS_SOAK_PER_CLONE")); err == nil && v > 0 {
		perClone = v
	}
	deadline := 150*time.Second + time.Duration(clones*perClone)*20*time.Second
	w := newE2E(t, map[string][]string{"dev": {"hub.pr", "hub.queue", "source.push"}, "rev": {"hub.review"}, "bot": {"hub.queue", "hub.check:ci"}})
	base := w.commit(nil, map[string]string{"base.txt": "base\n", "shared.txt": "one\ntwo\nthree\n"}, "base")
	if out, err := w.push("origin", base+":refs/heads/main"); err != nil {
		t.Fatalf("push: %v\n%s", err, out)
	}
	w.mustGP("admin", w.origin, rules, "rules", "set", "-")
	qid := lastLine(w.mustGP("bot", w.origin, "", "queue", "open", "--target", "main"))
	maintainBeside(t, w.origin)
	logDir := t.TempDir()
	gate, flakes := "", 2
	if batch {
		gate, flakes = filepath.Join(logDir, "gate"), 1
	}
	ciScript := filepath.Join(logDir, "ci.sh")
	if err := os.WriteFile(ciScript, []byte(fmt.Sprintf(soakCI, logDir, flakes)), 0o755); err != nil {
		t.Fatal(err)
	}
	wake := soakRules(t, ciScript, gate, w.bin)
	if workers > 0 {
		kept := wake.Rules[:0]
		for _, r := range wake.Rules {
			if !slices.Equal(r.On, []string{hubrefs.TypeQueueCandidate}) {
				kept = append(kept, r)
			}
		}
		wake.Rules = kept
	}
	writeJSONFile(t, filepath.Join(w.origin, config.WakeFile), wake)
	// The wake rules run with the server's environment: its key holds
	// hub.queue and hub.check:ci.
	srv := startServe(t, w.bin, append(append([]string{}, w.env...), "GITPLUS_KEY="+w.keys["bot"].Path), filepath.Dir(w.origin))
	url := srv.URL + "/" + filepath.Base(w.origin)
	token := strings.TrimSpace(w.mustGP("", w.origin, "", "member", "token", "issue", "dev"))
	var ciWorkers []*workerProc
	if workers > 0 {
		botToken := strings.TrimSpace(w.mustGP("", w.origin, "", "member", "token", "issue", "bot"))
		for i := 0; i < workers; i++ {
			dir := filepath.Join(t.TempDir(), fmt.Sprintf("ci%d", i))
			w.git(filepath.Dir(dir), "clone", "-q", strings.Replace(url, "http://", "http://bot:"+botToken+"@", 1), dir)
			ciWorkers = append(ciWorkers, startCheckWorker(t, w.bin, w.env, dir, w.keys["bot"].Path, []string{"--retries", "1", "--cache", logDir}, "sh", ciScript))
		}
	}

	// Kinds: pull request k of clone c. One conflicting pair (both edit
	// line two of shared.txt), one broken, one flaky, the rest good.
	kindOf := func(c, k int) string {
		switch {
		case k == 0 && (c == 0 || c == 1):
			return "conflict"
		case k == 0 && c == 2:
			return "broken"
		case k == 0 && c == 3:
			return "flaky"
		}
		return "good"
	}
	start := time.Now()
	var mu sync.Mutex
	var prs []soakPR
	var wg sync.WaitGroup
	errs := make(chan string, clones*perClone)
	var cloneDirs []string
	others := make(chan struct{}, clones*perClone) // a pull request other than the broken one entered
	for c := 0; c < clones; c++ {
		dir := filepath.Join(t.TempDir(), fmt.Sprintf("clone%d", c))
		cloneDirs = append(cloneDirs, dir)
		w.git(filepath.Dir(dir), "clone", "-q", url, dir)
		// Writes over HTTP carry a member token (docs/serving.md).
		w.git(dir, "remote", "set-url", "origin", strings.Replace(url, "http://", "http://dev:"+token+"@", 1))
		w.git(dir, "config", "user.name", "dev")
		w.git(dir, "config", "user.email", "dev@example.invalid")
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := 0; k < perClone; k++ {
				kind := kindOf(c, k)
				name := fmt.Sprintf("c%dk%d", c, k)
				w.git(dir, "checkout", "-q", "-B", name, base)
				files := map[string]string{name + ".txt": name + "\n"}
				switch kind {
				case "conflict":
					files["shared.txt"] = "one\ntwo " + name + "\nthree\n"
				case "broken":
					files["BROKEN-"+name] = "x\n"
				case "flaky":
					files["FLAKY-"+name] = "x\n"
				}
				for f, content := range files {
					if err := os.WriteFile(filepath.Join(dir, f), []byte(content), 0o644); err != nil {
						errs <- err.Error()
						return
					}
				}
				w.git(dir, "add", ".")
				w.git(dir, "commit", "-q", "-m", name)
				w.git(dir, "push", "-q", "origin", name)
				out, errOut, code := w.gp("dev", dir, "", "pr", "open", "--base", "main", "--head", name, "--title", name)
				if code != 0 {
					errs <- "pr open: " + out + errOut
					return
				}
				id := lastLine(out)
				for _, step := range [][]string{{"rev", "pr", "review", id, "--approve"}, {"dev", "queue", "enter", id}} {
					if batch && kind == "broken" && step[1] == "queue" {
						for n := 0; n < (clones-1)*perClone; n++ { // the other clones' (the broken one is its clone's first)
							select {
							case <-others:
							case <-time.After(2 * time.Minute):
								errs <- "the other pull requests were not entered"
								return
							}
						}
					}
					if out, errOut, code := w.gp(step[0], dir, "", step[1:]...); code != 0 {
						errs <- strings.Join(step, " ") + ": " + out + errOut
						return
					}
				}
				if kind != "broken" {
					others <- struct{}{}
				}
				mu.Lock()
				prs = append(prs, soakPR{id: id, kind: kind, clone: c})
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Fatal(e)
	}
	if batch {
		if err := os.WriteFile(gate, nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	opened := time.Since(start)

	// Wait for the queue to drain; re-enter a pull request a flake evicted
	// (a developer's action; nothing kicks the queue).
	reentered := map[string]bool{}
	kinds := map[string]string{}
	for _, p := range prs {
		kinds[p.id] = p.kind
	}
	var show queueJSON
	stable, last := 0, ""
	for {
		if time.Since(start) > deadline {
			t.Fatalf("the queue did not drain in %s: %+v\n%s", deadline, show, soakLogs(w.origin))
		}
		time.Sleep(time.Second)
		out := w.mustGP("", w.origin, "", "queue", "show", "--target", "main", "--json")
		if err := json.Unmarshal([]byte(out), &show); err != nil {
			t.Fatal(err)
		}
		for _, l := range show.Left {
			if kinds[l.PR] == "flaky" && l.Reason == "failed" && !reentered[l.PR] {
				reentered[l.PR] = true
				// Over HTTP, from a clone: the wake rules then run
				// with the server's key, as in production.
				w.mustGP("dev", cloneDirs[3], "", "queue", "enter", l.PR)
			}
		}
		finished := map[string]bool{}
		for _, l := range show.Left {
			if l.Reason == "landed" || kinds[l.PR] == "broken" && l.Reason == "failed" || kinds[l.PR] == "conflict" && l.Reason == "conflict" {
				finished[l.PR] = true
			}
		}
		refs := w.git(w.origin, "for-each-ref", "--format=%(objectname) %(refname)")
		if len(show.Active) == 0 && len(finished) == len(prs) && refs == last {
			stable++
		} else {
			stable = 0
		}
		last = refs
		if stable >= 3 {
			break
		}
	}
	drained := time.Since(start)
	for _, wk := range ciWorkers {
		wk.stop(t)
		if t.Failed() {
			t.Logf("check worker:\n%s", wk.Log())
		}
	}
	soakCheck(t, w, qid, prs, logDir, reentered)
	landed := strings.Count(w.git(w.origin, "rev-list", "--first-parent", base+"..refs/heads/main"), "\n") + 1
	runs := strings.Count(readFile(filepath.Join(logDir, "runs")), "\n")
	started, worked, deferred, pushes := soakPasses(t, w.origin)
	t.Logf("soak: %d pull requests from %d clones opened in %s, drained in %s: %d landed (%.1f per minute), %d CI runs (%.2f per landed pull request), %d queue pushes (%.2f per landing), %d queue passes started, %d did work, %d deferred to a running pass",
		len(prs), clones, opened.Round(time.Second), drained.Round(time.Second), landed, float64(landed)/drained.Minutes(),
		runs, float64(runs)/float64(landed), pushes, float64(pushes)/float64(landed), started, worked, deferred)
	t.Logf("soak: %d pull request(s) evicted by a flake and re-entered", len(reentered))
	return w, qid
}

// soakCheck asserts the end state of the soak.
func soakCheck(t *testing.T, w *e2e, qid string, prs []soakPR, logDir string, reentered map[string]bool) {
	t.Helper()
	type counts struct{ entered, left, landed, merged, candidates int }
	per := map[string]*counts{}
	for _, p := range prs {
		per[p.id] = &counts{}
	}
	steps := map[string]int{} // queue.candidate announcements per step
	resets := 0
	for _, line := range strings.Split(w.git(w.origin, "log", "--format=%b", hubrefs.QueueRefPrefix+qid), "\n") {
		var e struct {
			Type, PR, Reason, Step string
		}
		if !strings.HasPrefix(line, "{") || json.Unmarshal([]byte(line), &e) != nil || per[e.PR] == nil && e.Type != hubrefs.TypeQueueReset {
			continue
		}
		switch e.Type {
		case hubrefs.TypeQueueEntered:
			per[e.PR].entered++
		case hubrefs.TypeQueueLeft:
			per[e.PR].left++
			if e.Reason == "landed" {
				per[e.PR].landed++
			}
		case hubrefs.TypeQueueCandidate:
			per[e.PR].candidates++
			steps[e.Step]++
		case hubrefs.TypeQueueReset:
			resets++
		}
	}
	if resets != 0 {
		t.Errorf("%d queue.reset recorded; nothing moved main outside the queue", resets)
	}
	landedConflict := 0
	for _, p := range prs {
		c := per[p.id]
		for _, line := range strings.Split(w.git(w.origin, "log", "--format=%s", hubrefs.PRRefPrefix+p.id), "\n") {
			if line == hubrefs.TypePRMerged {
				c.merged++
			}
		}
		if c.left != c.entered {
			t.Errorf("pull request %s (%s): %d queue.entered, %d queue.left; want one queue.left per episode", p.id, p.kind, c.entered, c.left)
		}
		if c.merged != c.landed || c.landed > 1 {
			t.Errorf("pull request %s (%s): landed %d times, %d pr.merged", p.id, p.kind, c.landed, c.merged)
		}
		switch p.kind {
		case "good", "flaky":
			if c.landed != 1 {
				t.Errorf("pull request %s (%s) did not land", p.id, p.kind)
			}
		case "broken":
			if c.landed != 0 {
				t.Errorf("broken pull request %s landed", p.id)
			}
		case "conflict":
			landedConflict += c.landed
		}
		if p.kind == "flaky" && reentered[p.id] && c.entered != 2 {
			t.Errorf("flaky pull request %s: evicted, re-entered, but %d episodes", p.id, c.entered)
		}
	}
	if landedConflict != 1 {
		t.Errorf("%d of the conflicting pair landed, want exactly one", landedConflict)
	}
	// CI ran each candidate at most (1 + retries) times per announcement.
	runs := map[string]int{}
	for _, c := range strings.Fields(readFile(filepath.Join(logDir, "runs"))) {
		runs[c]++
	}
	for c, n := range runs {
		if n > 2*steps[c] {
			t.Errorf("candidate %s: %d CI runs for %d announcements (--retries 1)", c, n, steps[c])
		}
	}
	// queue stats counts what the history shows.
	var st queue.Stats
	if err := json.Unmarshal([]byte(w.mustGP("", w.origin, "", "queue", "stats", "--target", "main", "--json")), &st); err != nil {
		t.Fatal(err)
	}
	// A landing is a merge step or a squash step (docs/queue.md, "Step
	// shapes").
	merges := 0
	for _, line := range strings.Split(w.git(w.origin, "log", "--first-parent", "--format=%P %(trailers:key=Git-Plus-PR,valueonly,separator=)", "refs/heads/main"), "\n") {
		if f := strings.Fields(line); len(f) == 2 {
			merges++
		}
	}
	if st.Landed != merges {
		t.Errorf("queue stats: %d landed; main holds %d landings", st.Landed, merges)
	}
	if out, errOut, code := w.gp("", w.origin, "", "verify", "--branch", "main"); code != 0 {
		t.Errorf("verify --branch main: exit %d\n%s%s", code, out, errOut)
	}
	logs := soakLogs(w.origin)
	if strings.Contains(logs, "panic") {
		t.Errorf("a panic in the logs:\n%s", logs)
	}
	// Server-side passes and appends push into "." without push options
	// (docs/queue.md, "Transport failures"): none may die of SIGPIPE.
	if strings.Contains(logs, "broken pipe") {
		t.Errorf("a push died of SIGPIPE (broken pipe) in the logs:\n%s", logs)
	}
	if b := w.git(w.origin, "for-each-ref", "refs/heads/queue/"); b != "" {
		t.Errorf("candidate branches left behind:\n%s", b)
	}
}

var soakRoundRE = regexp.MustCompile(`(?m)^(\d+) round\(s\), (\d+) push\(es\)`)

// soakPasses counts the queue passes the wake rules started (from their
// logs): started, did work (pushed), deferred, and pushes in all.
func soakPasses(t *testing.T, origin string) (started, worked, deferred, pushes int) {
	for _, rule := range []string{"queue", "queue-entered"} {
		log := readFile(wake.WakeLog(origin, rule))
		started += strings.Count(log, " wake "+rule+": ")
		deferred += strings.Count(log, ": deferred: ")
		for _, m := range soakRoundRE.FindAllStringSubmatch(log, -1) {
			n, _ := strconv.Atoi(m[2])
			pushes += n
			if n > 0 {
				worked++
			}
		}
	}
	return started, worked, deferred, pushes
}

// soakLogs concatenates the repository's logs.
func soakLogs(origin string) string {
	var b strings.Builder
	paths, _ := filepath.Glob(filepath.Join(origin, "gitplus", "log", "*.log"))
	for _, p := range paths {
		fmt.Fprintf(&b, "== %s\n%s\n", p, readFile(p))
	}
	out, _ := exec.Command("git", "--git-dir="+origin, "for-each-ref").CombinedOutput()
	b.Write(out)
	return b.String()
}
