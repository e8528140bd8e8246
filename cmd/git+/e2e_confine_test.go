package main

// A check worker confining a lane candidate's reads to its partition's
// inputs (docs/ci.md, "Confining reads to a partition"), end to end: from
// a developer's clone against git+ serve, wake rules running the queue, a
// real `git+ check worker --confine-reads` in its own clone.

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gitplus/gitplus/fixtures"
	"github.com/gitplus/gitplus/hooks/config"
	"github.com/gitplus/gitplus/hooks/wake"
	"github.com/gitplus/gitplus/hubrefs"
	"github.com/gitplus/gitplus/receive/sandbox"
)

const e2eConfineRules = `{"protected": {"refs/heads/main": {"requiredApprovals": 1, "requiredChecks": ["ci"], "queueCandidates": true, "queueDepth": 2,
  "partitions": [
    {"name": "web", "paths": ["web/**"], "reads": ["package.json"]},
    {"name": "api", "paths": ["api/**"], "reads": ["go.mod"]}]}}}`

// confineCI is the check command: a partition's own test script, or every
// one for a revision of no lane.
const confineCI = `case "${GITPLUS_CHECK_PARTITION:-}" in
  "") for t in web/test.sh api/test.sh; do sh "$t" || exit 1; done ;;
  *) sh "$GITPLUS_CHECK_PARTITION/test.sh" ;;
esac`

// TestConfineReadsE2E: with `check worker --confine-reads`, a pull request
// of lane web whose test reads api/secret.txt, which web does not declare,
// is evicted red, the refused read in the output check.completed keeps;
// an honest web pull request lands, its run recorded
// "landlock-<N>+reads". Without confinement the dishonest test would pass
// (TestConfineReads in receive/checkrun shows the same run passing
// without the flag).
func TestConfineReadsE2E(t *testing.T) {
	t.Parallel()
	abi, why := sandbox.ABI()
	if abi == 0 {
		t.Skipf("this kernel has no Landlock (%s): --confine-reads needs it", why)
	}
	e := newHubEnv(t, "admin", "dev", "rev", "ci", "q")
	root := settlingDir(t)
	bare := filepath.Join(root, "repo.git")
	e.ok(root, "admin", "init", bare)
	for _, m := range []struct{ name, cap string }{{"dev", "hub.pr"}, {"rev", "hub.review"}, {"ci", "hub.check:ci"}, {"q", "hub.queue"}} {
		e.ok(bare, "admin", "member", "add", m.name, "--key", e.keys[m.name].Path+".pub", "--cap", m.cap)
	}
	e.ok(bare, "admin", "member", "change", "dev", "--cap", "hub.pr", "--cap", "source.push")
	t.Cleanup(func() { stopWorker(t, bare) })
	queueRun := []string{"git+", "--key", e.keys["q"].Path, "queue", "run", "--target", "main"}
	writeJSONFile(t, filepath.Join(bare, config.WakeFile), wake.WakeConfig{Rules: []wake.WakeRule{
		{Name: "queue-on-check", Ref: "refs/hub/pr/*", On: []string{"check.completed"}, Run: queueRun},
		{Name: "queue-on-entry", Ref: "refs/hub/queue/*", On: []string{"queue.entered"}, Run: queueRun},
	}})
	token := strings.TrimSpace(e.ok(bare, "admin", "member", "token", "issue", "dev"))
	ciToken := strings.TrimSpace(e.ok(bare, "admin", "member", "token", "issue", "ci"))
	s := startServe(t, e.bin, fixtures.GitEnv(e.home), root)

	work := filepath.Join(t.TempDir(), "work")
	fixtures.Git(t, root, "init", "-q", "-b", "main", work)
	fixtures.Git(t, work, "remote", "add", "origin", strings.Replace(s.URL, "http://", "http://dev:"+token+"@", 1)+"/repo.git")
	write := func(files map[string]string) {
		t.Helper()
		for p, c := range files {
			f := filepath.Join(work, filepath.FromSlash(p))
			if err := os.MkdirAll(filepath.Dir(f), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(f, []byte(c), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	write(map[string]string{
		"web/index.js": "web\n", "web/test.sh": "cat web/*.js package.json >/dev/null && echo web passed\n",
		"api/main.go": "api\n", "api/secret.txt": "api's\n", "api/test.sh": "cat api/main.go go.mod >/dev/null && echo api passed\n",
		"package.json": "{}\n", "go.mod": "module x\n",
	})
	fixtures.Git(t, work, "add", ".")
	fixtures.Git(t, work, "commit", "-q", "-m", "base")
	fixtures.Git(t, work, "push", "-q", "origin", "main")
	rules := filepath.Join(t.TempDir(), "rules.json")
	if err := os.WriteFile(rules, []byte(e2eConfineRules), 0o644); err != nil {
		t.Fatal(err)
	}
	e.ok(bare, "admin", "rules", "set", rules)
	qid := lastLine(e.ok(bare, "q", "queue", "open", "--target", "main"))
	openPR := func(br string, files map[string]string) string {
		t.Helper()
		fixtures.Git(t, work, "checkout", "-q", "-B", br, "origin/main")
		write(files)
		fixtures.Git(t, work, "add", ".")
		fixtures.Git(t, work, "commit", "-q", "-m", br)
		fixtures.Git(t, work, "push", "-q", "-f", "origin", br)
		id := lastLine(e.ok(work, "dev", "pr", "open", "--base", "main", "--head", br, "--title", br))
		e.ok(work, "rev", "pr", "review", id, "--approve")
		return id
	}
	fixtures.Git(t, work, "fetch", "-q", "origin")
	honest := openPR("honest", map[string]string{"web/button.js": "button\n"})
	// Its test reads api/secret.txt: web's declaration misses an input.
	dishonest := openPR("dishonest", map[string]string{"web/form.js": "form\n",
		"web/test.sh": "cat web/*.js package.json api/secret.txt >/dev/null && echo web passed\n"})

	clone := filepath.Join(t.TempDir(), "ci")
	fixtures.Git(t, root, "clone", "-q", strings.Replace(s.URL, "http://", "http://ci:"+ciToken+"@", 1)+"/repo.git", clone)
	wk := startCheckWorker(t, e.bin, fixtures.GitEnv(t.TempDir()), clone, e.keys["ci"].Path, []string{"--confine-reads", "--sandbox", "required"}, "sh", "-c", confineCI)
	e.ok(work, "q", "queue", "enter", honest)
	e.ok(work, "q", "queue", "enter", dishonest)
	settled := func() bool {
		tree := fixtures.Git(t, bare, "ls-tree", "-r", "--name-only", "refs/heads/main")
		return strings.Contains(tree, "web/button.js") &&
			strings.Contains(fixtures.Git(t, bare, "log", "--format=%b", "refs/hub/queue/"+qid), `"reason":"failed"`)
	}
	if !waitFor(120*time.Second, settled) {
		t.Fatalf("the queue did not settle\nmain: %s\nqueue:\n%s\nworker:\n%s", fixtures.Git(t, bare, "ls-tree", "-r", "--name-only", "refs/heads/main"),
			fixtures.Git(t, bare, "log", "--format=%s %b", "refs/hub/queue/"+qid), wk.Log())
	}
	wk.stop(t)
	if tree := fixtures.Git(t, bare, "ls-tree", "-r", "--name-only", "refs/heads/main"); strings.Contains(tree, "web/form.js") {
		t.Errorf("the dishonest pull request landed: %s", tree)
	}
	// completions are a pull request's check.completed events.
	completions := func(id string) []hubrefs.Check {
		var out []hubrefs.Check
		for _, line := range strings.Split(fixtures.Git(t, bare, "log", "--reverse", "--format=%b", hubrefs.PRRefPrefix+id), "\n") {
			var c hubrefs.Check
			if strings.HasPrefix(line, "{") && json.Unmarshal([]byte(line), &c) == nil && c.Type == hubrefs.TypeCheckCompleted {
				out = append(out, c)
			}
		}
		return out
	}
	reads := fmt.Sprintf("landlock-%d+reads", abi)
	var failed *hubrefs.Check
	for _, c := range completions(dishonest) {
		if c.Conclusion == "failure" {
			failed = &c
		}
	}
	switch {
	case failed == nil:
		t.Errorf("no failed check of the dishonest pull request: %+v\nworker:\n%s", completions(dishonest), wk.Log())
	case !strings.Contains(failed.Output, "api/secret.txt: Permission denied") || !strings.Contains(failed.Output, "reads confined to partition web's inputs: web/**, package.json") || failed.Sandbox != reads:
		t.Errorf("the dishonest pull request's failed check: sandbox %q, output:\n%s\nwant %s, the refused read of api/secret.txt and why", failed.Sandbox, failed.Output, reads)
	}
	passed := false
	for _, c := range completions(honest) {
		passed = passed || c.Conclusion == "success" && c.Sandbox == reads && strings.Contains(c.Output, "web passed")
	}
	if !passed {
		t.Errorf("no success recorded %s for the honest pull request: %+v", reads, completions(honest))
	}
	if log := wk.Log(); !strings.Contains(log, "--confine-reads: a lane's candidate reads") || !strings.Contains(log, "reads confined to partition web's inputs") {
		t.Errorf("the worker does not say its reads are confined:\n%s", log)
	}
}

// TestConfineReadsRefused: --confine-reads cannot be honoured without
// Landlock — check run refuses before anything is recorded, a worker
// refuses to start, even under best-effort — and --sandbox off with it is
// a usage error.
func TestConfineReadsRefused(t *testing.T) {
	t.Parallel()
	w := newE2E(t, map[string][]string{"dev": {"hub.pr"}, "ci": {"hub.check:ci"}})
	base := w.commit(nil, map[string]string{"base.txt": "base\n"}, "base")
	h := w.commit([]string{base}, map[string]string{"f.txt": "f\n"}, "f")
	p := w.localPR("dev", "refs/heads/main", h)
	if out, err := w.push("origin", base+":refs/heads/main", h+":refs/heads/f", p.tip+":"+p.Ref()); err != nil {
		t.Fatalf("push: %v\n%s", err, out)
	}
	run := func(args ...string) (string, int) {
		cmd := exec.Command(w.bin, append([]string{"--key", w.keys["ci"].Path}, args...)...)
		cmd.Dir, cmd.Env = w.origin, w.env
		var out strings.Builder
		cmd = noLandlock(t, cmd)
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		// A worker that does not refuse would run until stopped.
		stop := time.AfterFunc(2*time.Minute, func() { _ = cmd.Process.Kill() })
		err := cmd.Wait()
		stop.Stop()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		return out.String(), code
	}
	const why = "--confine-reads: the kernel cannot confine the check command: Landlock is not available (landlock_create_ruleset: function not implemented)"
	if out, code := run("check", "run", "--pr", p.ID, "--rev", h, "--name", "ci", "--confine-reads", "--", "true"); code != 1 || !strings.Contains(out, why) || !strings.Contains(out, "nothing was run or recorded") {
		t.Errorf("check run --confine-reads without Landlock: exit %d, want 1 saying why:\n%s", code, out)
	}
	if got := checkEvents(t, w.origin, p.Ref()); len(got) != 0 {
		t.Errorf("a refused run recorded %q", got)
	}
	if out, code := run("check", "worker", "--name", "ci", "--confine-reads", "--", "true"); code != 1 || !strings.Contains(out, why) {
		t.Errorf("check worker --confine-reads without Landlock: exit %d, want 1 saying why:\n%s", code, out)
	}
	if out, code := run("check", "run", "--pr", p.ID, "--rev", h, "--name", "ci", "--confine-reads", "--sandbox", "off", "--", "true"); code != 2 || !strings.Contains(out, "--confine-reads needs the sandbox") {
		t.Errorf("check run --confine-reads --sandbox off: exit %d, want 2 (usage):\n%s", code, out)
	}
}
