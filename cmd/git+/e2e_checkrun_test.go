package main

// `git+ check run --retries N` and the check.started lease (docs/queue.md,
// "Flakes" and "CI once per candidate").

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

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
		args := append([]string{"check", "run", "--pr", p.ID, "--rev", h, "--name", "ci"}, extra...)
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
