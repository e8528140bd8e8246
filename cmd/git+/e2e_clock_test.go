package main

// Clocks off by days (docs/events.md "Record times and clocks", docs/queue.md
// "Clocks and leases", docs/delivery.md "Clocks"): check workers, a queue
// runner and the delivery worker run as separate processes whose clocks
// GITPLUS_CLOCK_OFFSET moves, against a server whose clock is right.

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/gitplus/gitplus/fixtures"
	"github.com/gitplus/gitplus/hooks/config"
	"github.com/gitplus/gitplus/hooks/delivery"
	"github.com/gitplus/gitplus/receive/clock"
)

const threeDays = "72h"

func offsetEnv(env []string, offset string) []string {
	return append(append([]string{}, env...), clock.EnvOffset+"="+offset)
}

// clockWorkers is a served repository holding one pull request whose
// candidate branch waits for check ci, two clones of it for check workers,
// and the command the workers run: it records its process id in marks and,
// under SLOW, sleeps for ten minutes.
type clockWorkers struct {
	w      *e2e
	p      *localPR
	cand   string
	clones []string
	marks  string
	cmd    []string
}

func newClockWorkers(t *testing.T) *clockWorkers {
	t.Helper()
	w := newE2E(t, map[string][]string{"dev": {"hub.pr"}, "ci": {"hub.check:ci"}})
	base := w.commit(nil, map[string]string{"base.txt": "base\n"}, "base")
	h := w.commit([]string{base}, map[string]string{"f.txt": "f\n"}, "f")
	p := w.localPR("dev", "refs/heads/main", h)
	cand := w.candidate(base, h, "candidate")
	if out, err := w.push("origin", base+":refs/heads/main", h+":refs/heads/f", p.tip+":"+p.Ref(), cand+":refs/heads/queue/main/"+p.ID); err != nil {
		t.Fatalf("push: %v\n%s", err, out)
	}
	s := startServe(t, w.bin, w.env, filepath.Dir(w.origin))
	token := strings.TrimSpace(w.mustGP("", w.origin, "", "--repo", w.origin, "member", "token", "issue", "ci"))
	url := strings.Replace(s.URL, "http://", "http://ci:"+token+"@", 1) + "/origin.git"
	cw := &clockWorkers{w: w, p: p, cand: cand, marks: filepath.Join(t.TempDir(), "started"),
		cmd: []string{"sh", "-c", `echo $$ >>"$MARK"; if [ -n "$SLOW" ]; then exec sleep 600; fi; echo all good`}}
	for i := 0; i < 2; i++ {
		clone := filepath.Join(t.TempDir(), fmt.Sprintf("clone%d", i))
		w.git(filepath.Dir(clone), "clone", "-q", url, clone)
		cw.clones = append(cw.clones, clone)
	}
	t.Cleanup(func() {
		for _, pid := range cw.runs() {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	})
	return cw
}

// runs are the process ids of the command's runs so far.
func (cw *clockWorkers) runs() []int {
	var out []int
	for _, f := range strings.Fields(readFile(cw.marks)) {
		n, _ := strconv.Atoi(f)
		out = append(out, n)
	}
	return out
}

// start starts a check worker in clone i with lease 4 s, its clock moved by
// offset ("" for none), the command slow or not.
func (cw *clockWorkers) start(t *testing.T, i int, offset string, slow bool) *workerProc {
	t.Helper()
	env := append(append([]string{}, cw.w.env...), "MARK="+cw.marks)
	if slow {
		env = append(env, "SLOW=1")
	}
	if offset != "" {
		env = offsetEnv(env, offset)
	}
	// The command runs sandboxed (docs/ci.md): MARK and SLOW are passed on
	// purpose and the marks' directory is declared writable.
	flags := []string{"--lease", "4s", "--pass-env", "MARK", "--pass-env", "SLOW", "--cache", filepath.Dir(cw.marks)}
	return startCheckWorker(t, cw.w.bin, env, cw.clones[i], cw.w.keys["ci"].Path, flags, cw.cmd...)
}

func (cw *clockWorkers) succeeded() bool {
	return countLines(checkEvents(cw.w.t, cw.w.origin, cw.p.Ref()), "check.completed success "+cw.cand) == 1
}

// TestCheckWorkerClockAhead: a check worker whose clock runs three days
// ahead, then killed, does not hold the candidate for three days: another
// worker takes it within one lease. With the server's bound (the default)
// the fast worker's check.started is refused (clock-skew) and it never
// runs; with the bound turned off its start is recorded, dated three days
// ahead, and the other worker counts the lease from when it first saw it.
func TestCheckWorkerClockAhead(t *testing.T) {
	t.Parallel()
	for _, bound := range []bool{true, false} {
		t.Run(fmt.Sprintf("bound=%v", bound), func(t *testing.T) {
			t.Parallel()
			cw := newClockWorkers(t)
			if !bound {
				cw.w.git(cw.w.origin, "config", "gitplus.clockSkew", "off")
			}
			a := cw.start(t, 0, threeDays, true)
			if !waitFor(60*time.Second, func() bool { return len(cw.runs()) > 0 || strings.Contains(a.Log(), "[clock-skew]") }) {
				t.Fatalf("the fast worker neither ran nor was refused:\n%s", a.Log())
			}
			if bound && len(cw.runs()) > 0 {
				t.Fatalf("the fast worker ran the command although the server bounds record times:\n%s", a.Log())
			}
			if !bound && !waitFor(60*time.Second, func() bool { return len(cw.runs()) == 1 }) {
				t.Fatalf("with the bound off, the fast worker did not run:\n%s", a.Log())
			}
			_ = a.cmd.Process.Kill()
			_ = a.cmd.Wait()
			b := cw.start(t, 1, "", false)
			if !waitFor(90*time.Second, cw.succeeded) {
				t.Fatalf("the other worker did not take the candidate: %q\nfast worker:\n%s\nother worker:\n%s",
					checkEvents(t, cw.w.origin, cw.p.Ref()), a.Log(), b.Log())
			}
			b.stop(t)
			if want := map[bool]int{true: 1, false: 2}[bound]; len(cw.runs()) != want {
				t.Fatalf("the command ran %d times, want %d\n%s", len(cw.runs()), want, a.Log())
			}
		})
	}
}

// TestCheckWorkerClockBehind: a check worker whose clock runs three days
// behind cannot take a lease the others do not see: its check.started,
// dated three days before the pull request's last event, is refused
// (clock-skew), so it never runs the command and a worker with the right
// clock runs the candidate once.
func TestCheckWorkerClockBehind(t *testing.T) {
	t.Parallel()
	cw := newClockWorkers(t)
	slow := cw.start(t, 0, "-"+threeDays, true)
	if !waitFor(60*time.Second, func() bool { return len(cw.runs()) > 0 || strings.Contains(slow.Log(), "[clock-skew]") }) {
		t.Fatalf("the slow-clocked worker neither ran nor was refused:\n%s", slow.Log())
	}
	right := cw.start(t, 1, "", false)
	if !waitFor(90*time.Second, cw.succeeded) {
		t.Fatalf("no success recorded: %q\nbehind:\n%s\nright:\n%s", checkEvents(t, cw.w.origin, cw.p.Ref()), slow.Log(), right.Log())
	}
	right.stop(t)
	slow.stop(t)
	if n := len(cw.runs()); n != 1 {
		t.Fatalf("the candidate ran %d times (a worker three days behind held no lease the other saw)\nbehind:\n%s\nright:\n%s", n, slow.Log(), right.Log())
	}
}

// TestQueueRunClockAhead: a queue runner whose clock runs three days ahead
// does not evict a healthy pull request as timed out (checkTimeout): its
// pass, whose records carry its clock, is refused (clock-skew) and records
// nothing; the pull request lands once its check passes.
func TestQueueRunClockAhead(t *testing.T) {
	t.Parallel()
	e := newHubEnv(t, "admin", "dev", "rev", "ci", "q")
	bare, ids := queueSetup(t, e, 1)
	rules := filepath.Join(t.TempDir(), "rules.json")
	if err := os.WriteFile(rules, []byte(`{"protected": {"refs/heads/main": {"requiredApprovals": 1, "requiredChecks": ["ci"], "queueCandidates": true, "checkTimeout": "30m"}}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	e.ok(bare, "admin", "rules", "set", rules)
	if rep := queueRunJSON(t, e, bare); len(rep.Published) != 1 {
		t.Fatalf("pass 1 published %+v", rep.Published)
	}
	before := hubRefs(t, bare)
	cmd := exec.Command(e.bin, "--key", e.keys["q"].Path, "queue", "run", "--target", "main")
	cmd.Dir, cmd.Env = bare, offsetEnv(fixtures.GitEnv(e.home), threeDays)
	out, err := cmd.CombinedOutput()
	if after := hubRefs(t, bare); after != before {
		t.Fatalf("a runner three days ahead changed the records (exit %v):\n%s\nlog of the pull request:\n%s", err, out,
			fixtures.Git(t, bare, "log", "--format=%s", "refs/hub/queue/"))
	}
	if err == nil || !strings.Contains(string(out), "[clock-skew]") {
		t.Fatalf("queue run three days ahead: %v, want a clock-skew refusal:\n%s", err, out)
	}
	var show queueJSON
	if err := json.Unmarshal([]byte(e.ok(bare, "", "queue", "show", "--target", "main", "--json")), &show); err != nil {
		t.Fatal(err)
	}
	if len(show.Active) != 1 || len(show.Left) != 0 {
		t.Fatalf("queue show after the fast runner: %+v", show)
	}
	e.ok(bare, "ci", "check", "run", "--pr", ids[0], "--rev", "queue/main/"+ids[0], "--name", "ci", "--", "true")
	if rep := queueRunJSON(t, e, bare); len(rep.Landed) != 1 || rep.Landed[0].PR != ids[0] {
		t.Fatalf("the healthy pull request did not land: %+v", rep)
	}
}

// TestMirrorCatchUpOldRecords: records written days ago — the server took
// them then — reach a mirror that was offline meanwhile, on top of what it
// already held: the bound on record times follows each record's tip, not
// the mirror's clock.
func TestMirrorCatchUpOldRecords(t *testing.T) {
	t.Parallel()
	w := newE2E(t, map[string][]string{"dev": {"hub.pr"}, "rev": {"hub.review"}, "server": {"source.push", "hub.queue"}})
	w.git(w.origin, "config", "gitplus.serverKey", w.keys["server"].Path)
	mirror := filepath.Join(t.TempDir(), "mirror.git")
	w.git(filepath.Dir(mirror), "clone", "-q", "--mirror", w.origin, mirror)
	w.mustGP("", mirror, "", "--repo", mirror, "hook", "install")
	remotes := filepath.Join(w.origin, config.RemotesFile)
	sync := func() {
		t.Helper()
		writeJSONFile(t, remotes, delivery.RemotesConfig{Remotes: []delivery.Remote{{Name: "m", URL: mirror}}})
		if out, errs, code := w.gp("", w.origin, "", "mirror", "sync"); code != 0 {
			t.Fatalf("mirror sync: exit %d\n%s%s", code, out, errs)
		}
		if got, want := hubAndHeads(w, mirror), hubAndHeads(w, w.origin); got != want {
			t.Fatalf("the mirror did not take the records written four days ago:\n%s\nprimary:\n%s\nmirror status:\n%s", got, want, w.mustGP("", w.origin, "", "mirror", "status"))
		}
		if err := os.Remove(remotes); err != nil { // offline again
			t.Fatal(err)
		}
	}

	// Four days ago: a pull request opened, and the mirror in step; then,
	// while the mirror was offline, its review and a thread, written by
	// clocks that were right then. The primary's hook judged them by its
	// clock then; here its bound is off (its clock reads today), so that
	// the mirror's bound is what is tested.
	w.git(w.origin, "config", "gitplus.clockSkew", "off")
	old := offsetEnv(w.env, "-96h")
	base := w.commit(nil, map[string]string{"base.txt": "base\n"}, "base")
	h := w.commit([]string{base}, map[string]string{"f.txt": "f\n"}, "f")
	if out, err := w.push("origin", base+":refs/heads/main", h+":refs/heads/f"); err != nil {
		t.Fatalf("push: %v\n%s", err, out)
	}
	gpOld := func(key string, args ...string) string {
		t.Helper()
		cmd := exec.Command(w.bin, append([]string{"--key", w.keys[key].Path}, args...)...)
		cmd.Dir, cmd.Env = w.origin, old
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git+ %s (clock four days back): %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	id := lastLine(gpOld("dev", "pr", "open", "--base", "main", "--head", "f", "--title", "old"))
	sync()
	gpOld("rev", "pr", "review", id, "--approve")
	gpOld("dev", "pr", "thread", id, "--open", "--body", "four days ago")
	if when := w.git(w.origin, "log", "-1", "--format=%ct", "refs/hub/pr/"+id); !olderThan(when, 95*time.Hour) {
		t.Fatalf("the records are dated %s, not four days ago", when)
	}
	sync()
}

func olderThan(unix string, d time.Duration) bool {
	n, err := strconv.ParseInt(strings.TrimSpace(unix), 10, 64)
	return err == nil && time.Since(time.Unix(n, 0)) > d
}

// TestDeliveryClockSkew: a receiver down for its first three attempts gets
// the delivery on the fourth whatever the clocks of the post-receive that
// spooled it and of the delivery worker (`git+ hook deliver`, run by hand
// while the test holds the worker lock during the push so post-receive
// starts none): a worker three days ahead, a delivery spooled three days
// behind (then the clock set right) or ahead, a worker three days behind.
func TestDeliveryClockSkew(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name            string
		spooled, worker string
	}{
		{"worker ahead", "", threeDays},
		{"spooled behind", "-" + threeDays, ""},
		{"spooled ahead", threeDays, ""},
		{"worker behind", "", "-" + threeDays},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			w := newE2E(t, nil)
			t.Cleanup(func() { stopWorker(t, w.origin) })
			var mu sync.Mutex
			calls := 0
			srv := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
				mu.Lock()
				defer mu.Unlock()
				calls++
				if calls <= 3 {
					http.Error(rw, "down", http.StatusServiceUnavailable)
				}
			}))
			t.Cleanup(srv.Close)
			writeJSONFile(t, filepath.Join(w.origin, config.WebhooksFile), delivery.WebhooksConfig{Hooks: []delivery.Webhook{
				{Name: "h", URL: srv.URL, Secret: "k", BackoffSeconds: 0.05, BackoffMaxSeconds: 0.2, RetryWindowSeconds: 5},
			}})
			lock := holdWorkerLock(t, w.origin)
			pushEnv := []string(nil)
			if tc.spooled != "" {
				pushEnv = []string{clock.EnvOffset + "=" + tc.spooled}
			}
			c1 := w.commit(nil, map[string]string{"a": "1"}, "c1")
			if _, errs, err := w.gitRun(w.work, "", pushEnv, "push", "origin", c1+":refs/heads/main"); err != nil {
				t.Fatalf("push: %v\n%s", err, errs)
			}
			lock.Close()
			env := append([]string{}, w.env...)
			if tc.worker != "" {
				env = offsetEnv(env, tc.worker)
			}
			deliver := exec.Command(w.bin, "hook", "deliver", "--repo", w.origin)
			deliver.Env = env
			done := make(chan []byte, 1)
			go func() { out, _ := deliver.CombinedOutput(); done <- out }()
			var out []byte
			select {
			case out = <-done:
			case <-time.After(60 * time.Second):
				_ = deliver.Process.Kill()
				out = <-done
				t.Logf("the worker did not finish: the delivery was never due")
			}
			d := w.deliveries()
			if len(d.Deliveries) != 1 || d.Deliveries[0].State != delivery.StateDelivered || d.Deliveries[0].Attempts != 4 {
				t.Fatalf("deliveries: %+v, want one delivered on the 4th attempt\nworker:\n%s\nlog:\n%s", d, out, readFile(filepath.Join(w.origin, delivery.WorkerLog)))
			}
		})
	}
}

// holdWorkerLock takes gitDir's delivery worker lock, so a post-receive
// starts no worker; Close releases it.
func holdWorkerLock(t *testing.T, gitDir string) *os.File {
	t.Helper()
	p := filepath.Join(gitDir, delivery.SpoolDir, "worker.lock")
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(p, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}
