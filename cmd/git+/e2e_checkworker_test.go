package main

// git+ check worker (docs/queue.md "Check workers"): workers in their own
// clones against git+ serve, as separate processes.

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gitplus/gitplus/fixtures"
	"github.com/gitplus/gitplus/hooks/config"
	"github.com/gitplus/gitplus/hooks/delivery"
	"github.com/gitplus/gitplus/hooks/wake"
	"github.com/gitplus/gitplus/hubrefs"
)

// checkEvents lists the check events of ref in the bare repository, oldest
// first, as "type conclusion head".
func checkEvents(t *testing.T, bare, ref string) []string {
	t.Helper()
	log := fixtures.Git(t, bare, "log", "--reverse", "--format=%b", ref)
	var out []string
	for _, line := range strings.Split(log, "\n") {
		var c hubrefs.Check
		if strings.HasPrefix(line, "{") && json.Unmarshal([]byte(line), &c) == nil && strings.HasPrefix(c.Type, "check.") {
			out = append(out, strings.TrimSpace(c.Type+" "+c.Conclusion)+" "+c.Head)
		}
	}
	return out
}

func countLines(lines []string, want string) int {
	n := 0
	for _, l := range lines {
		if l == want {
			n++
		}
	}
	return n
}

// workerProc is a running `git+ check worker`.
type workerProc struct {
	cmd  *exec.Cmd
	file string // its standard output and error
}

func (p *workerProc) Log() string { return readFile(p.file) }

func startCheckWorker(t *testing.T, bin string, env []string, clone, key string, extra []string, argv ...string) *workerProc {
	t.Helper()
	args := append([]string{"--key", key, "check", "worker", "--name", "ci", "--poll", "1s"}, extra...)
	args = append(append(args, "--"), argv...)
	cmd := exec.Command(bin, args...)
	cmd.Dir, cmd.Env = clone, env
	f, err := os.Create(filepath.Join(t.TempDir(), "worker.log"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	p := &workerProc{cmd: cmd, file: f.Name()}
	cmd.Stdout, cmd.Stderr = f, f
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
	})
	return p
}

// stop sends SIGTERM and waits: the worker must exit 0.
func (p *workerProc) stop(t *testing.T) {
	t.Helper()
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	if err := p.cmd.Wait(); err != nil {
		t.Errorf("check worker after SIGTERM: %v\n%s", err, p.Log())
	}
}

func alive(pid int) bool { return pid > 0 && syscall.Kill(pid, 0) == nil }

// A slow run is cancelled when its candidate branch moves, and recorded
// cancelled; a worker killed with SIGKILL mid-run leaves a lease that
// another worker waits out and then takes the candidate.
func TestCheckWorkerSupersededAndKilled(t *testing.T) {
	t.Parallel()
	w := newE2E(t, map[string][]string{"dev": {"hub.pr"}, "ci": {"hub.check:ci"}})
	base := w.commit(nil, map[string]string{"base.txt": "base\n"}, "base")
	h := w.commit([]string{base}, map[string]string{"f.txt": "f\n"}, "f")
	p := w.localPR("dev", "refs/heads/main", h)
	c1 := w.candidate(base, h, "candidate 1")
	c2 := w.candidate(base, h, "candidate 2")
	branch := "refs/heads/queue/main/" + p.ID
	if out, err := w.push("origin", base+":refs/heads/main", h+":refs/heads/f", p.tip+":"+p.Ref(), c1+":"+branch); err != nil {
		t.Fatalf("push: %v\n%s", err, out)
	}
	s := startServe(t, w.bin, w.env, filepath.Dir(w.origin))
	token := strings.TrimSpace(w.mustGP("", w.origin, "", "--repo", w.origin, "member", "token", "issue", "ci"))
	url := strings.Replace(s.URL, "http://", "http://ci:"+token+"@", 1) + "/origin.git"
	clones := make([]string, 2)
	for i := range clones {
		clones[i] = filepath.Join(t.TempDir(), fmt.Sprintf("clone%d", i))
		w.git(filepath.Dir(clones[i]), "clone", "-q", url, clones[i])
	}
	marks := filepath.Join(t.TempDir(), "started")
	// The command records its process id; under SLOW it runs for 10
	// minutes, otherwise it passes at once.
	cmd := []string{"sh", "-c", `echo $$ >>"$MARK"; if [ -n "$SLOW" ]; then exec sleep 600; fi; echo all good`}
	pids := func() []int {
		var out []int
		for _, f := range strings.Fields(readFile(marks)) {
			n, _ := strconv.Atoi(f)
			out = append(out, n)
		}
		return out
	}
	t.Cleanup(func() {
		for _, pid := range pids() {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	})
	envA := append(append([]string{}, w.env...), "SLOW=1", "MARK="+marks)
	// The command records its pid in MARK's directory and reads SLOW: the
	// worker hands over both (--pass-env, --cache).
	handOver := []string{"--pass-env", "MARK", "--pass-env", "SLOW", "--cache", filepath.Dir(marks)}
	a := startCheckWorker(t, w.bin, envA, clones[0], w.keys["ci"].Path, append([]string{"--lease", "4s"}, handOver...), cmd...)
	if !waitFor(60*time.Second, func() bool { return len(pids()) == 1 }) {
		t.Fatalf("worker A did not start the command on %s:\n%s", c1, a.Log())
	}

	// The candidate branch moves: the run of c1 is killed and recorded
	// cancelled; A then runs c2.
	moved := time.Now()
	if out, err := w.push("origin", "+"+c2+":"+branch); err != nil {
		t.Fatalf("moving %s: %v\n%s", branch, err, out)
	}
	if !waitFor(60*time.Second, func() bool {
		return !alive(pids()[0]) && countLines(checkEvents(t, w.origin, p.Ref()), "check.completed cancelled "+c1) == 1
	}) {
		t.Fatalf("the run of %s was not cancelled: %q\n%s", c1, checkEvents(t, w.origin, p.Ref()), a.Log())
	}
	t.Logf("the superseded run was killed and recorded cancelled %v after its branch moved", time.Since(moved).Round(time.Millisecond))
	if !waitFor(60*time.Second, func() bool { return len(pids()) == 2 }) {
		t.Fatalf("worker A did not start the command on %s:\n%s", c2, a.Log())
	}

	// A dies mid-run. B waits out A's lease and takes the candidate.
	_ = a.cmd.Process.Kill()
	_ = a.cmd.Wait()
	envB := append(append([]string{}, w.env...), "MARK="+marks)
	b := startCheckWorker(t, w.bin, envB, clones[1], w.keys["ci"].Path, append([]string{"--lease", "4s", "--url", "https://ci.example/{pr}/{rev}"}, handOver...), cmd...)
	if !waitFor(90*time.Second, func() bool {
		return countLines(checkEvents(t, w.origin, p.Ref()), "check.completed success "+c2) == 1
	}) {
		t.Fatalf("worker B did not record %s: %q\n%s", c2, checkEvents(t, w.origin, p.Ref()), b.Log())
	}
	if len(pids()) != 3 {
		t.Fatalf("the command ran %d times, want 3 (c1 cancelled, c2 killed with A, c2 by B)", len(pids()))
	}
	last := fixtures.Git(t, w.origin, "log", "-1", "--format=%b", p.Ref())
	var done hubrefs.Check
	if err := json.Unmarshal([]byte(strings.TrimSpace(last)), &done); err != nil || !strings.Contains(done.Output, "all good") ||
		done.URL != "https://ci.example/"+p.ID+"/"+c2 {
		t.Fatalf("check.completed without the output's tail or URL: %s", last)
	}
	b.stop(t)
	if strings.Contains(a.Log()+b.Log(), token) {
		t.Errorf("a worker's log shows its member token")
	}
	if got := checkEvents(t, w.origin, p.Ref()); got[len(got)-1] != "check.completed success "+c2 {
		t.Fatalf("B left something after SIGTERM: %q", got)
	}
}

// workerQueue is a served repository with a queue on main that wake rules
// run on entries and completed checks, a developer's clone (work) and
// check workers in their own clones running ci.
type workerQueue struct {
	e       *hubEnv
	bare    string
	work    string
	qid     string
	workers []*workerProc
}

func newWorkerQueue(t *testing.T, nWorkers int, ci string, env []string, workerFlags ...string) *workerQueue {
	t.Helper()
	e := newHubEnv(t, "admin", "dev", "rev", "ci", "q")
	if env == nil {
		env = fixtures.GitEnv(e.home)
	}
	root := settlingDir(t)
	bare := filepath.Join(root, "repo.git")
	e.ok(root, "admin", "init", bare)
	for _, m := range []struct{ name, cap string }{{"dev", "hub.pr"}, {"rev", "hub.review"}, {"ci", "hub.check:ci"}, {"q", "hub.queue"}} {
		e.ok(bare, "admin", "member", "add", m.name, "--key", e.keys[m.name].Path+".pub", "--cap", m.cap)
	}
	t.Cleanup(func() { stopWorker(t, bare) })
	queueRun := []string{"git+", "--key", e.keys["q"].Path, "queue", "run", "--target", "main"}
	writeJSONFile(t, filepath.Join(bare, config.WakeFile), wake.WakeConfig{Rules: []wake.WakeRule{
		{Name: "queue-on-check", Ref: "refs/hub/pr/*", On: []string{"check.completed"}, Run: queueRun},
		{Name: "queue-on-entry", Ref: "refs/hub/queue/*", On: []string{"queue.entered"}, Run: queueRun},
	}})
	e.ok(bare, "admin", "member", "change", "dev", "--cap", "hub.pr", "--cap", "source.push")
	token := strings.TrimSpace(e.ok(bare, "admin", "member", "token", "issue", "dev"))
	ciToken := strings.TrimSpace(e.ok(bare, "admin", "member", "token", "issue", "ci"))
	s := startServe(t, e.bin, fixtures.GitEnv(e.home), root)

	work := servedQueueClone(t, e, bare, root, s, token)
	wq := &workerQueue{e: e, bare: bare, work: work, qid: lastLine(e.ok(bare, "q", "queue", "open", "--target", "main"))}
	ciURL := strings.Replace(s.URL, "http://", "http://ci:"+ciToken+"@", 1) + "/repo.git"
	for i := 0; i < nWorkers; i++ {
		clone := filepath.Join(t.TempDir(), fmt.Sprintf("ci%d", i))
		fixtures.Git(t, root, "clone", "-q", ciURL, clone)
		wq.workers = append(wq.workers, startCheckWorker(t, e.bin, env, clone, e.keys["ci"].Path, workerFlags, "sh", "-c", ci))
	}
	return wq
}

// open opens, approves and enters a pull request adding file f on branch
// br, and returns its id.
func (wq *workerQueue) open(t *testing.T, br, f string) string {
	t.Helper()
	return openApprovedEntered(t, wq.e, wq.work, br, f)
}

func (wq *workerQueue) logs() string {
	var logs string
	for i, wk := range wq.workers {
		logs += fmt.Sprintf("--- worker %d\n%s", i, wk.Log())
	}
	return logs
}

// The queue drains unaided with check workers: wake rules run the queue on
// entries and checks; the workers check every candidate it publishes; the
// broken pull requests (every tenth, from the second) are evicted, the
// flaky ones (every twentieth, from the fourth: their first two runs fail,
// so --retries 1 records a failure and the queue evicts them) are entered
// again by their developer, as in the soak, and land; the others land; and
// every candidate is recorded at most once per entry. GITPLUS_WORKER_DRAIN=WxN runs W workers and N pull
// requests (default 2x4; the acceptance is 3x20).
func TestCheckWorkerDrainsQueue(t *testing.T) {
	t.Parallel()
	nWorkers, nPRs := 2, 4
	if v := os.Getenv("GITPLUS_WORKER_DRAIN"); v != "" {
		if _, err := fmt.Sscanf(v, "%dx%d", &nWorkers, &nPRs); err != nil || nWorkers < 1 || nPRs < 1 {
			t.Fatalf("GITPLUS_WORKER_DRAIN=%q: want WxN, such as 3x20", v)
		}
	}
	// CI: a broken pull request adds BROKEN-*; a flaky one FLAKY-*, whose
	// first two runs fail (counted by file: a candidate built again on a
	// moved target is still the same flake).
	state := t.TempDir()
	ci := `for f in BROKEN-*; do [ -e "$f" ] && exit 1; done
for f in FLAKY-*; do
  [ -e "$f" ] || continue
  n=$(cat "$STATE/$f" 2>/dev/null || echo 0); echo $((n+1)) >"$STATE/$f"
  [ "$n" -ge 2 ] || { echo flaked; exit 1; }
done
echo passed`
	// The command reaches $STATE only because the worker hands it over:
	// the variable by --pass-env, the directory by --cache.
	wq := newWorkerQueue(t, nWorkers, ci, append(fixtures.GitEnv(t.TempDir()), "STATE="+state), "--retries", "1", "--jobs", "2",
		"--pass-env", "STATE", "--cache", state)
	e, bare, work, qid, workers := wq.e, wq.bare, wq.work, wq.qid, wq.workers
	dumpLogs := func() string {
		var logs string
		for i, wk := range workers {
			logs += fmt.Sprintf("--- worker %d\n%s", i, wk.Log())
		}
		return logs
	}

	var ids, good []string
	flaky := map[string]bool{}
	broken := 0
	for i := 0; i < nPRs; i++ {
		f := fmt.Sprintf("file%d.txt", i)
		switch {
		case i%10 == 1:
			f, broken = fmt.Sprintf("BROKEN-%d", i), broken+1
		case i%20 == 3:
			f = fmt.Sprintf("FLAKY-%d", i)
		}
		if !strings.HasPrefix(f, "BROKEN") {
			good = append(good, f)
		}
		br := fmt.Sprintf("feat%d", i)
		id := openApprovedEntered(t, e, work, br, f)
		ids = append(ids, id)
		if strings.HasPrefix(f, "FLAKY") {
			flaky[id] = true
		}
	}
	reentered := map[string]bool{}
	start := time.Now()
	drained := func() bool {
		// The developer of a flaky pull request the queue evicted enters
		// it again, once.
		for _, line := range strings.Split(fixtures.Git(t, bare, "log", "--format=%b", "refs/hub/queue/"+qid), "\n") {
			var l hubrefs.QueueLeft
			if json.Unmarshal([]byte(line), &l) == nil && l.Type == hubrefs.TypeQueueLeft && l.Reason == "failed" && flaky[l.PR] && !reentered[l.PR] {
				reentered[l.PR] = true
				e.ok(work, "q", "queue", "enter", l.PR)
			}
		}
		tree := fixtures.Git(t, bare, "ls-tree", "--name-only", "refs/heads/main")
		for _, f := range good {
			if !strings.Contains(tree, f) {
				return false
			}
		}
		log := fixtures.Git(t, bare, "log", "--format=%B", "refs/hub/queue/"+qid)
		return strings.Count(log, `"reason":"failed"`) >= broken
	}
	if !waitFor(time.Duration(60+15*nPRs)*time.Second, drained) {
		t.Fatalf("the queue did not drain\nmain: %s\nqueue:\n%s\n%s", fixtures.Git(t, bare, "ls-tree", "--name-only", "refs/heads/main"),
			fixtures.Git(t, bare, "log", "--format=%s %b", "refs/hub/queue/"+qid), dumpLogs())
	}
	t.Logf("%d workers drained %d pull requests (%d broken) %v after the last entry", nWorkers, nPRs, broken, time.Since(start).Round(time.Millisecond))
	tree := fixtures.Git(t, bare, "ls-tree", "--name-only", "refs/heads/main")
	if strings.Contains(tree, "BROKEN") {
		t.Fatalf("a broken pull request landed: %s", tree)
	}
	// Every candidate is recorded at most once per entry (success or
	// failure): twice for a flaky pull request entered again.
	for _, id := range ids {
		evs := checkEvents(t, bare, hubrefs.PRRefPrefix+id)
		seen := map[string]int{}
		limit := 1
		if reentered[id] {
			limit = 2
		}
		for _, ev := range evs {
			if f := strings.Fields(ev); f[0] == hubrefs.TypeCheckCompleted && f[1] != "cancelled" {
				seen[f[2]]++
				if seen[f[2]] > limit {
					t.Errorf("pull request %s: candidate %s recorded %d times: %q", id, f[2], seen[f[2]], evs)
				}
			}
		}
	}
	t.Logf("flaky pull requests entered again: %d", len(reentered))
	for _, wk := range workers {
		wk.stop(t)
	}
	if t.Failed() {
		t.Log(dumpLogs())
	}
}

// A worker listening for webhook deliveries (--listen, --secret) is woken
// by git+'s GitHub-format delivery of a candidate branch; a delivery with
// a wrong signature is refused and wakes nothing.
func TestCheckWorkerWokenByWebhook(t *testing.T) {
	t.Parallel()
	w := newE2E(t, map[string][]string{"dev": {"hub.pr"}, "ci": {"hub.check:ci"}})
	t.Cleanup(func() { stopWorker(t, w.origin) })
	base := w.commit(nil, map[string]string{"base.txt": "base\n"}, "base")
	h := w.commit([]string{base}, map[string]string{"f.txt": "f\n"}, "f")
	p := w.localPR("dev", "refs/heads/main", h)
	if out, err := w.push("origin", base+":refs/heads/main", h+":refs/heads/f", p.tip+":"+p.Ref()); err != nil {
		t.Fatalf("push: %v\n%s", err, out)
	}
	s := startServe(t, w.bin, w.env, filepath.Dir(w.origin))
	token := strings.TrimSpace(w.mustGP("", w.origin, "", "--repo", w.origin, "member", "token", "issue", "ci"))
	clone := filepath.Join(t.TempDir(), "clone")
	w.git(filepath.Dir(clone), "clone", "-q", strings.Replace(s.URL, "http://", "http://ci:"+token+"@", 1)+"/origin.git", clone)
	wk := startCheckWorker(t, w.bin, w.env, clone, w.keys["ci"].Path, []string{"--poll", "1h", "--listen", "127.0.0.1:0", "--secret", "k"}, "true")
	var addr string
	if !waitFor(30*time.Second, func() bool {
		_, rest, ok := strings.Cut(wk.Log(), "listening for webhook deliveries on ")
		addr, _, _ = strings.Cut(rest, "\n")
		return ok && strings.HasSuffix(addr, "/")
	}) {
		t.Fatalf("the worker did not say where it listens:\n%s", wk.Log())
	}
	// A forged delivery: 401, no wake.
	resp, err := http.Post(addr, "application/json", strings.NewReader(`{"ref":"refs/heads/queue/main/x"}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized || strings.Contains(wk.Log(), "woken") {
		t.Fatalf("a delivery without a valid signature: %s\n%s", resp.Status, wk.Log())
	}
	writeJSONFile(t, filepath.Join(w.origin, config.WebhooksFile), delivery.WebhooksConfig{Hooks: []delivery.Webhook{
		{Name: "worker", URL: addr, Secret: "k", Format: delivery.FormatGitHub, Events: []string{"push"}},
	}})
	c1 := w.candidate(base, h, "candidate")
	if out, err := w.push("origin", c1+":refs/heads/queue/main/"+p.ID); err != nil {
		t.Fatalf("push: %v\n%s", err, out)
	}
	if !waitFor(60*time.Second, func() bool {
		return strings.Contains(wk.Log(), "woken") && countLines(checkEvents(t, w.origin, p.Ref()), "check.completed success "+c1) == 1
	}) {
		t.Fatalf("the worker was not woken by the delivery, or did not record %s: %q\n%s\ndelivery log:\n%s", c1,
			checkEvents(t, w.origin, p.Ref()), wk.Log(), readFile(filepath.Join(w.origin, delivery.WorkerLog)))
	}
	wk.stop(t)
}

// Checks the rules require on pull request heads (a protected base that
// takes no queue candidates): the worker runs them at the head, and again
// when the head moves; a pull request whose base requires nothing is not
// run.
func TestCheckWorkerChecksHeads(t *testing.T) {
	t.Parallel()
	w := newE2E(t, map[string][]string{"dev": {"hub.pr"}, "ci": {"hub.check:ci"}})
	base := w.commit(nil, map[string]string{"base.txt": "base\n"}, "base")
	h1 := w.commit([]string{base}, map[string]string{"f.txt": "1\n"}, "f1")
	h2 := w.commit([]string{h1}, map[string]string{"f.txt": "2\n"}, "f2")
	other := w.commit([]string{base}, map[string]string{"g.txt": "g\n"}, "g")
	p := w.localPR("dev", "refs/heads/main", h1)
	q := w.localPR("dev", "refs/heads/other", other)
	if out, err := w.push("origin", base+":refs/heads/main", base+":refs/heads/other", h1+":refs/heads/f", other+":refs/heads/g",
		p.tip+":"+p.Ref(), q.tip+":"+q.Ref()); err != nil {
		t.Fatalf("push: %v\n%s", err, out)
	}
	w.mustGP("admin", w.origin, `{"requireKnownPusher":true,"protected":{"refs/heads/main":{"requiredApprovals":0,"requiredChecks":["ci"]}}}`, "rules", "set", "-")
	s := startServe(t, w.bin, w.env, filepath.Dir(w.origin))
	token := strings.TrimSpace(w.mustGP("", w.origin, "", "--repo", w.origin, "member", "token", "issue", "ci"))
	clone := filepath.Join(t.TempDir(), "clone")
	w.git(filepath.Dir(clone), "clone", "-q", strings.Replace(s.URL, "http://", "http://ci:"+token+"@", 1)+"/origin.git", clone)
	wk := startCheckWorker(t, w.bin, w.env, clone, w.keys["ci"].Path, nil, "sh", "-c", "cat f.txt")
	if !waitFor(60*time.Second, func() bool { return countLines(checkEvents(t, w.origin, p.Ref()), "check.completed success "+h1) == 1 }) {
		t.Fatalf("no check at the head %s: %q\n%s", h1, checkEvents(t, w.origin, p.Ref()), wk.Log())
	}
	w.git(w.work, "fetch", "-q", "origin", "+refs/hub/*:refs/hub/*")
	p.tip = strings.TrimSpace(w.git(w.work, "rev-parse", p.Ref()))
	p.update("dev", h2)
	if out, err := w.push("origin", h2+":refs/heads/f", p.tip+":"+p.Ref()); err != nil {
		t.Fatalf("push: %v\n%s", err, out)
	}
	if !waitFor(60*time.Second, func() bool { return countLines(checkEvents(t, w.origin, p.Ref()), "check.completed success "+h2) == 1 }) {
		t.Fatalf("no check at the new head %s: %q\n%s", h2, checkEvents(t, w.origin, p.Ref()), wk.Log())
	}
	wk.stop(t)
	if got := checkEvents(t, w.origin, q.Ref()); len(got) != 0 {
		t.Fatalf("a pull request whose base requires no check was run: %q", got)
	}
}

// A red target heals once by itself (docs/queue.md, "A red target"): two
// broken pull requests fail as the first candidate on main's tip and are
// evicted; the third fails there too, on its first run only (a flake), so
// the target looks red; the queue publishes that candidate again citing
// the failed run, a worker runs it once more, and it lands — nobody kicks
// anything.
func TestCheckWorkerHealsRedTarget(t *testing.T) {
	t.Parallel()
	state := t.TempDir()
	// Broken: always fails. Flaky: each candidate commit fails its first run.
	ci := `for f in BROKEN-*; do [ -e "$f" ] && exit 1; done
for f in FLAKY-*; do
  [ -e "$f" ] || continue
  c=$(git rev-parse HEAD)
  [ -e "$STATE/$c" ] && exit 0
  : >"$STATE/$c"; echo flaked; exit 1
done
echo passed`
	wq := newWorkerQueue(t, 1, ci, append(fixtures.GitEnv(t.TempDir()), "STATE="+state), "--pass-env", "STATE", "--cache", state)
	a := wq.open(t, "a", "BROKEN-a")
	b := wq.open(t, "b", "BROKEN-b")
	c := wq.open(t, "c", "FLAKY-c")
	healed := func() bool {
		tree := fixtures.Git(t, wq.bare, "ls-tree", "--name-only", "refs/heads/main")
		return strings.Contains(tree, "FLAKY-c")
	}
	if !waitFor(180*time.Second, healed) {
		t.Fatalf("the flaky pull request did not land after the red target\nqueue:\n%s\n%s",
			fixtures.Git(t, wq.bare, "log", "--format=%s %b", "refs/hub/queue/"+wq.qid), wq.logs())
	}
	qlog := fixtures.Git(t, wq.bare, "log", "--format=%b", "refs/hub/queue/"+wq.qid)
	var healing int
	for _, line := range strings.Split(qlog, "\n") {
		var rec hubrefs.QueueCandidate
		if json.Unmarshal([]byte(line), &rec) == nil && rec.Type == hubrefs.TypeQueueCandidate && rec.PR == c && rec.Run != "" && !rec.Trial {
			healing++
		}
	}
	if healing != 1 {
		t.Errorf("%d re-runs of the red first candidate published, want 1\n%s", healing, qlog)
	}
	if runs := readFile(wake.WakeLog(wq.bare, "queue-on-check")) + readFile(wake.WakeLog(wq.bare, "queue-on-entry")); !strings.Contains(runs, "heal: re-running") {
		t.Errorf("no queue run reported the heal:\n%s", runs)
	}
	for _, id := range []string{a, b} {
		if !strings.Contains(qlog, `"pr":"`+id+`","head"`) || strings.Contains(fixtures.Git(t, wq.bare, "ls-tree", "--name-only", "refs/heads/main"), "BROKEN") {
			t.Errorf("broken pull request %s: not evicted, or landed\n%s", id, qlog)
		}
	}
	for _, wk := range wq.workers {
		wk.stop(t)
	}
}
