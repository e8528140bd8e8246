package main

// `git+ check run --retries N` and the check.started lease (docs/queue.md,
// "Flakes" and "CI once per candidate").

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gitplus/gitplus/fixtures"
	"github.com/gitplus/gitplus/hubrefs"
)

// prChecks lists the check events of pull request ref in origin, oldest
// first, as "type conclusion attempts".
func prChecks(t *testing.T, w *e2e, ref string) []string {
	t.Helper()
	log, errOut, err := w.gitRun(w.origin, "", nil, "log", "--reverse", "--format=%b", ref)
	if err != nil {
		t.Fatalf("git log: %v\n%s", err, errOut)
	}
	var out []string
	for _, line := range strings.Split(log, "\n") {
		var c hubrefs.Check
		if strings.HasPrefix(line, "{") && json.Unmarshal([]byte(line), &c) == nil && strings.HasPrefix(c.Type, "check.") {
			out = append(out, strings.TrimSpace(c.Type+" "+c.Conclusion+" "+strings.Repeat("+", c.Attempts)))
		}
	}
	return out
}

func TestCheckRunRetriesAndLease(t *testing.T) {
	t.Parallel()
	w := newE2E(t, map[string][]string{"dev": {"hub.pr"}, "ci": {"hub.check:ci"}})
	base := w.commit(nil, map[string]string{"base.txt": "base\n"}, "base")
	h := w.commit([]string{base}, map[string]string{"f.txt": "f\n"}, "f")
	p := w.localPR("dev", "refs/heads/main", h)
	if out, err := w.push("origin", base+":refs/heads/main", h+":refs/heads/f", p.tip+":"+p.Ref()); err != nil {
		t.Fatalf("push: %v\n%s", err, out)
	}
	dir := t.TempDir()
	count := filepath.Join(dir, "count")
	// Fails on its first run, succeeds on the second: a flake.
	flaky := `n=$(cat "$0" 2>/dev/null || echo 0); echo $((n+1)) >"$0"; [ "$n" -ge 1 ]`
	check := func(extra ...string) (string, int) {
		// The command keeps its count outside its checkout: a directory
		// the sandbox lets it write (--cache).
		args := append([]string{"check", "run", "--pr", p.ID, "--rev", h, "--name", "ci", "--cache", dir}, extra...)
		args = append(args, "--", "sh", "-c", flaky, count)
		out, errs, code := w.gp("ci", w.origin, "", args...)
		return out + errs, code
	}

	// --retries 1: the flake runs twice and is recorded once, as success
	// after two attempts.
	if out, code := check("--retries", "1"); code != 0 {
		t.Fatalf("check run --retries 1: exit %d\n%s", code, out)
	}
	if got := prChecks(t, w, p.Ref()); strings.Join(got, "|") != "check.started|check.completed success ++" {
		t.Fatalf("events after a retried flake: %q", got)
	}

	// A live check.started by another worker holds the check: no run, no
	// event, exit 0.
	w.git(w.work, "fetch", "-q", "origin", "+refs/hub/*:refs/hub/*")
	tip := strings.TrimSpace(w.git(w.work, "rev-parse", p.Ref()))
	started := w.writeEvent("ci", hubrefs.Check{Base: w.base(hubrefs.TypeCheckStarted), Name: "ci", Head: h}, tip)
	if out, err := w.push("origin", started+":"+p.Ref()); err != nil {
		t.Fatalf("push check.started: %v\n%s", err, out)
	}
	os.Remove(count)
	out, code := check()
	if code != 0 || !strings.Contains(out, "already running") {
		t.Fatalf("check run under a live lease: exit %d\n%s", code, out)
	}
	if _, err := os.Stat(count); err == nil {
		t.Fatal("the command ran although another worker holds the lease")
	}
	if got := prChecks(t, w, p.Ref()); len(got) != 3 {
		t.Fatalf("a check run under a live lease wrote events: %q", got)
	}
	// An expired lease (the worker crashed) does not hold it: the command
	// runs, fails (first run of the flake, no retries) and records it.
	if out, code := check("--lease", "1ns"); code != 1 {
		t.Fatalf("check run after the lease expired: exit %d, want 1 (failure)\n%s", code, out)
	}
	if got := prChecks(t, w, p.Ref()); strings.Join(got[3:], "|") != "check.started|check.completed failure" {
		t.Fatalf("events after an expired lease: %q", got)
	}
}

// TestCheckRunNoRetryBelowRed (docs/queue.md, "Retries below a red step"):
// with --retries, a failed candidate whose step below has no verdict yet
// waits for it — in another process — and retries once it is green; a
// failed candidate above a red step is recorded at once, not run again.
func TestCheckRunNoRetryBelowRed(t *testing.T) {
	t.Parallel()
	e := newHubEnv(t, "admin", "dev", "rev", "ci", "q")
	bare, _ := batchSetup(t, e, 3, 1)
	rep := queueRunJSON(t, e, bare)
	if len(rep.Published) != 3 {
		t.Fatalf("pass 1 published %+v, want 3 candidates", rep.Published)
	}
	c1, c2, c3 := rep.Published[0], rep.Published[1], rep.Published[2]
	dir := t.TempDir()
	// Each run appends a line to its count file, then fails.
	failing := func(count string) []string {
		return []string{"--cache", filepath.Dir(count), "--", "sh", "-c", `echo run >>"$0"; false`, count}
	}
	runs := func(count string) int {
		b, _ := os.ReadFile(count)
		return strings.Count(string(b), "run")
	}

	// --below-wait 0: c3 fails while c1 and c2 below it have no verdict,
	// and runs again at once.
	count3 := filepath.Join(dir, "c3")
	_, errs, code := e.run(bare, "ci", nil, append([]string{"check", "run", "--pr", c3.PR, "--rev", c3.Step, "--name", "ci", "--retries", "1", "--below-wait", "0"}, failing(count3)...)...)
	if code != 1 || runs(count3) != 2 || strings.Contains(errs, "waiting") {
		t.Fatalf("check run --below-wait 0 on c3: exit %d, %d runs, want 2 runs at once and exit 1:\n%s", code, runs(count3), errs)
	}

	// c2 fails while c1, below it, has no verdict: it waits; c1 then
	// turns green in another process, and c2 runs again.
	count2 := filepath.Join(dir, "c2")
	args := append([]string{"--key", e.keys["ci"].Path, "check", "run", "--pr", c2.PR, "--rev", c2.Step, "--name", "ci",
		"--retries", "1", "--below-wait", "1m"}, failing(count2)...)
	cmd := exec.Command(e.bin, args...)
	cmd.Dir, cmd.Env = bare, fixtures.GitEnv(e.home)
	var errs2 strings.Builder
	cmd.Stderr = &errs2
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	for i := 0; runs(count2) == 0; i++ {
		if i > 600 {
			t.Fatal("c2's first attempt never ran")
		}
		time.Sleep(50 * time.Millisecond)
	}
	e.ok(bare, "ci", "check", "run", "--pr", c1.PR, "--rev", c1.Step, "--name", "ci", "--", "true")
	err := cmd.Wait()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 {
		t.Fatalf("check run on c2: %v, want exit 1 (failure)\n%s", err, errs2.String())
	}
	if n := runs(count2); n != 2 || !strings.Contains(errs2.String(), "for the verdict of step "+c1.Step) {
		t.Fatalf("c2 ran %d times, want 2 (waited for c1, then retried):\n%s", n, errs2.String())
	}

	// c3 fails above c2, now red: recorded after one run, naming c2.
	count3 = filepath.Join(dir, "c3 again")
	_, errs3, code := e.run(bare, "ci", nil, append([]string{"check", "run", "--pr", c3.PR, "--rev", c3.Step, "--name", "ci", "--retries", "3"}, failing(count3)...)...)
	if code != 1 || runs(count3) != 1 || !strings.Contains(errs3, "not running it again: step "+c2.Step) {
		t.Fatalf("check run on c3 above a red step: exit %d, %d runs, want 1 run and exit 1:\n%s", code, runs(count3), errs3)
	}
	// The newest event of c3's log is that run's check.completed.
	var last hubrefs.Check
	body := fixtures.Git(t, bare, "log", "-1", "--format=%b", "refs/hub/pr/"+c3.PR)
	if err := json.Unmarshal([]byte(strings.SplitN(strings.TrimSpace(body), "\n", 2)[0]), &last); err != nil ||
		last.Type != hubrefs.TypeCheckCompleted || last.Conclusion != "failure" || last.Attempts != 0 {
		t.Fatalf("c3's last event: %+v (%v), want check.completed failure after one attempt:\n%s", last, err, body)
	}
}

// TestCheckRunNoRetryOfSearchSteps (docs/queue.md, "Searching a red group
// aside"): under batch checks the last step of a group of more than one is
// run once whatever --retries says — the queue's search of a red group is
// its retry — and --retry-search restores the retries.
func TestCheckRunNoRetryOfSearchSteps(t *testing.T) {
	t.Parallel()
	e := newHubEnv(t, "admin", "dev", "rev", "ci", "q")
	bare, _ := batchSetup(t, e, 2, 2)
	rep := queueRunJSON(t, e, bare)
	if len(rep.Published) != 2 || rep.Published[1].GroupSize != 2 {
		t.Fatalf("pass 1 published %+v, want one group of 2", rep.Published)
	}
	end := rep.Published[1]
	count := filepath.Join(t.TempDir(), "runs")
	failing := []string{"--cache", filepath.Dir(count), "--", "sh", "-c", `echo run >>"$0"; false`, count}
	runs := func() int {
		b, _ := os.ReadFile(count)
		return strings.Count(string(b), "run")
	}
	_, errs, code := e.run(bare, "ci", nil, append([]string{"check", "run", "--pr", end.PR, "--rev", end.Step, "--name", "ci", "--retries", "2"}, failing...)...)
	if code != 1 || runs() != 1 || !strings.Contains(errs, "the last step of a group of 2") || !strings.Contains(errs, "the queue's search is its retry") {
		t.Fatalf("check run --retries 2 on a group end: exit %d, %d runs, want 1 run and exit 1:\n%s", code, runs(), errs)
	}
	_, errs, code = e.run(bare, "ci", nil, append([]string{"check", "run", "--pr", end.PR, "--rev", end.Step, "--name", "ci", "--retries", "2", "--retry-search"}, failing...)...)
	if code != 1 || runs() != 1+3 {
		t.Fatalf("check run --retries 2 --retry-search: exit %d, %d runs in all, want 3 more:\n%s", code, runs(), errs)
	}
}

// TestCheckRunNoRetryOfStrictLaneSteps: under strict checks on a branch
// with partitions, check run runs a lane step once whatever --retries says
// (queue.SearchStep: a red one is tried aside, which is its retry), and the
// next queue run tries it alone on the target instead of evicting it
// (docs/queue.md, "A red strict step tried aside"); --retry-search retries
// it as set.
func TestCheckRunNoRetryOfStrictLaneSteps(t *testing.T) {
	t.Parallel()
	e := newHubEnv(t, "admin", "dev", "rev", "ci", "q")
	bare, _ := batchSetupRules(t, e, 1, 1, `, "partitions": [{"name": "all", "paths": ["**"]}]`)
	rep := queueRunJSON(t, e, bare)
	if len(rep.Published) != 1 || rep.Published[0].Partition != "all" {
		t.Fatalf("pass 1 published %+v, want one step of lane all", rep.Published)
	}
	st := rep.Published[0]
	count := filepath.Join(t.TempDir(), "runs")
	failing := []string{"--cache", filepath.Dir(count), "--", "sh", "-c", `echo run >>"$0"; false`, count}
	runs := func() int {
		b, _ := os.ReadFile(count)
		return strings.Count(string(b), "run")
	}
	_, errs, code := e.run(bare, "ci", nil, append([]string{"check", "run", "--pr", st.PR, "--rev", st.Step, "--name", "ci", "--retries", "2"}, failing...)...)
	if code != 1 || runs() != 1 || !strings.Contains(errs, "a strict step in queue") || !strings.Contains(errs, "the queue's search is its retry") {
		t.Fatalf("check run --retries 2 on a strict lane step: exit %d, %d runs, want 1 run and exit 1:\n%s", code, runs(), errs)
	}
	rep = queueRunJSON(t, e, bare)
	if len(rep.Evicted) != 0 || len(rep.Published) != 1 || !rep.Published[0].Trial || rep.Published[0].Run == "" || rep.Published[0].Partition != "all" {
		t.Fatalf("pass 2: evicted %+v, published %+v: want the red step tried alone in its lane, citing its run", rep.Evicted, rep.Published)
	}
	_, errs, code = e.run(bare, "ci", nil, append([]string{"check", "run", "--pr", st.PR, "--rev", rep.Published[0].Step, "--name", "ci", "--retries", "2", "--retry-search"}, failing...)...)
	if code != 1 || runs() != 1+3 {
		t.Fatalf("check run --retries 2 --retry-search on its trial: exit %d, %d runs in all, want 3 more:\n%s", code, runs(), errs)
	}
	rep = queueRunJSON(t, e, bare)
	if len(rep.Evicted) != 1 || !strings.Contains(rep.Evicted[0].Detail, "a trial of it alone") {
		t.Fatalf("pass 3: evicted %+v, want the pull request, on its trial", rep.Evicted)
	}
}

// TestCheckRunRecordsOutput: a failed check's output is not only in the
// runner's terminal or a server's wake log: check run records its tail (at
// most hubrefs.MaxCheckOutput bytes) and --url in check.completed, and
// pr show (text and JSON) shows them.
func TestCheckRunRecordsOutput(t *testing.T) {
	t.Parallel()
	w := newE2E(t, map[string][]string{"dev": {"hub.pr"}, "ci": {"hub.check:ci"}})
	base := w.commit(nil, map[string]string{"base.txt": "base\n"}, "base")
	h := w.commit([]string{base}, map[string]string{"f.txt": "f\n"}, "f")
	p := w.localPR("dev", "refs/heads/main", h)
	if out, err := w.push("origin", base+":refs/heads/main", h+":refs/heads/f", p.tip+":"+p.Ref()); err != nil {
		t.Fatalf("push: %v\n%s", err, out)
	}
	// 3,000 lines of noise, then the reason: only the tail is kept.
	script := `i=0; while [ $i -lt 3000 ]; do echo "noise $i"; i=$((i+1)); done; echo "FAIL: TestWidget expected 2 got 3" >&2; exit 1`
	out, errs, code := w.gp("ci", w.origin, "", "check", "run", "--pr", p.ID, "--rev", h, "--name", "ci", "--url", "https://ci.example/run/7", "--", "sh", "-c", script)
	if code != 1 || !strings.Contains(errs, "noise 2999\nFAIL: TestWidget") {
		t.Fatalf("check run of a failing command: exit %d (want 1), its output passed through to standard error in order?\n%s%s", code, out, errs)
	}
	log, _, _ := w.gitRun(w.origin, "", nil, "log", "-1", "--format=%b", p.Ref())
	var c hubrefs.Check
	if err := json.Unmarshal([]byte(strings.TrimSpace(log)), &c); err != nil || c.Type != hubrefs.TypeCheckCompleted {
		t.Fatalf("the last event is not check.completed: %v\n%s", err, log)
	}
	if c.URL != "https://ci.example/run/7" || !strings.HasSuffix(strings.TrimSpace(c.Output), "FAIL: TestWidget expected 2 got 3") || len(c.Output) > hubrefs.MaxCheckOutput || strings.Contains(c.Output, "noise 1 ") {
		t.Fatalf("check.completed: url %q, output (%d bytes) %q", c.URL, len(c.Output), c.Output)
	}
	show := w.mustGP("ci", w.origin, "", "pr", "show", p.ID)
	if !strings.Contains(show, "output (tail):") || !strings.Contains(show, "    FAIL: TestWidget expected 2 got 3") || !strings.Contains(show, "https://ci.example/run/7") {
		t.Fatalf("pr show does not show the failure's output and URL:\n%s", show)
	}
	var v struct {
		Runs []struct{ Output, URL string } `json:"runs"`
	}
	if err := json.Unmarshal([]byte(w.mustGP("ci", w.origin, "", "pr", "show", p.ID, "--json")), &v); err != nil {
		t.Fatal(err)
	}
	found := false
	for _, r := range v.Runs {
		found = found || strings.Contains(r.Output, "TestWidget") && r.URL == "https://ci.example/run/7"
	}
	if !found {
		t.Fatalf("pr show --json: no run with the output and URL: %+v", v.Runs)
	}
}
