package main

// End-to-end tests of what operators see (docs/operating.md "Checking the
// boundary", "When a wake rule fails", "When a protected branch moves
// unjudged"): hook check's warnings, wake failures in queue show, on the
// page and in /metrics, and the alarm for an unjudged push. The real
// gitolite versions are in e2e_hostinstall_test.go (TestE2EGitolite) and
// e2e_hosts_gitolite_test.go (TestHostGitolite).

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gitplus/gitplus/hooks"
	"github.com/gitplus/gitplus/hooks/config"
	"github.com/gitplus/gitplus/hooks/delivery"
	"github.com/gitplus/gitplus/hooks/install"
	"github.com/gitplus/gitplus/hooks/metrics"
	"github.com/gitplus/gitplus/hooks/opstatus"
	"github.com/gitplus/gitplus/hooks/serve"
	"github.com/gitplus/gitplus/hooks/wake"
	"github.com/gitplus/gitplus/hooks/webview"
	"github.com/gitplus/gitplus/receive/repo"
)

// hookCheck runs git+ hook check on w's origin.
func hookCheck(w *e2e, dir string) (string, int) {
	out, errs, code := w.gp("", w.work, "", "hook", "check", "--repo", dir)
	return out + errs, code
}

// TestE2EHookCheckWarnsPusher: after git+ init the rules require a known
// pusher; with gitplus.pusher unset hook check warns (exit 3) that plain
// pushes will be refused [unknown-pusher]; set, it passes; a repository
// git+ serve serves needs no gitplus.pusher.
func TestE2EHookCheckWarnsPusher(t *testing.T) {
	t.Parallel()
	w := newE2E(t, nil)
	if fi, err := os.Stat(filepath.Join(w.origin, "hub")); err != nil || !fi.IsDir() {
		t.Errorf("git+ init did not create hub/, where wake.json goes: %v", err)
	}
	out, code := hookCheck(w, w.origin)
	if code != install.ExitWarnings || !strings.Contains(out, "warning: the rules require a known pusher") || !strings.Contains(out, "[unknown-pusher]") {
		t.Fatalf("hook check with requireKnownPusher and no gitplus.pusher: exit %d\n%s", code, out)
	}
	// A plain push is indeed refused so.
	w.signPushes(w.work, "")
	w.git(w.work, "commit", "-q", "--allow-empty", "-m", "plain")
	if _, errs, err := w.gitRun(w.work, "", nil, "push", "-q", "origin", "HEAD:refs/heads/plain"); err == nil || !strings.Contains(errs, "[unknown-pusher]") {
		t.Fatalf("a plain push was not refused [unknown-pusher]: %v\n%s", err, errs)
	}
	w.git(w.origin, "config", "gitplus.pusher", "env:REMOTE_USER")
	if out, code := hookCheck(w, w.origin); code != 0 || !strings.Contains(out, "ok: the boundary is in place") {
		t.Fatalf("hook check with gitplus.pusher set: exit %d\n%s", code, out)
	}
	w.git(w.origin, "config", "--unset", "gitplus.pusher")
	if err := install.MarkServed(w.origin); err != nil { // as git+ serve's install does
		t.Fatal(err)
	}
	if out, code := hookCheck(w, w.origin); code != 0 {
		t.Fatalf("hook check on a repository git+ serve serves: exit %d\n%s", code, out)
	}
}

// TestE2EHookCheckWarnsWakeKey: a wake rule running a check whose server
// key lacks hub.check:<name> makes hook check warn (exit 3), naming the
// capability; so does a queue rule without hub.queue; given, it passes.
func TestE2EHookCheckWarnsWakeKey(t *testing.T) {
	t.Parallel()
	w := newE2E(t, map[string][]string{"server": {"hub.queue"}})
	w.git(w.origin, "config", "gitplus.pusher", "env:REMOTE_USER")
	w.git(w.origin, "config", "gitplus.serverKey", w.keys["server"].Path)
	if err := os.Remove(w.keys["server"].Path + ".pub"); err != nil { // read from the private key file's public half
		t.Fatal(err)
	}
	writeJSONFile(t, filepath.Join(w.origin, config.WakeFile), wake.WakeConfig{Rules: []wake.WakeRule{
		{Name: "ci", Ref: "refs/hub/queue/*", On: []string{"queue.candidate"},
			Run: []string{"env", "GL_BYPASS_ACCESS_CHECKS=1", w.bin, "check", "run", "--pr", "{event.pr}", "--rev", "{event.step}", "--name", "ci", "--", "true"}},
		{Name: "queue", Ref: "refs/hub/pr/*", On: []string{"check.completed"}, Run: []string{"git+", "queue", "run", "--target", "main"}},
	}})
	out, code := hookCheck(w, w.origin)
	if code != install.ExitWarnings || !strings.Contains(out, "wake rule ci runs git+ check run signing as member server") || !strings.Contains(out, "lacks hub.check:ci") {
		t.Fatalf("hook check with a CI wake rule whose key lacks hub.check:ci: exit %d\n%s", code, out)
	}
	if strings.Contains(out, "wake rule queue ") {
		t.Fatalf("hook check warns about the queue rule, whose key holds hub.queue:\n%s", out)
	}
	w.mustGP("admin", w.work, "", "--repo", w.origin, "member", "change", "server", "--add-cap", "hub.check:ci")
	if out, code := hookCheck(w, w.origin); code != 0 {
		t.Fatalf("hook check once the server key holds hub.check:ci: exit %d\n%s", code, out)
	}
	w.mustGP("admin", w.work, "", "--repo", w.origin, "member", "change", "server", "--remove-cap", "hub.queue")
	if out, code := hookCheck(w, w.origin); code != install.ExitWarnings || !strings.Contains(out, "wake rule queue runs git+ queue run signing as member server") || !strings.Contains(out, "lacks hub.queue") {
		t.Fatalf("hook check with a queue rule whose key lacks hub.queue: exit %d\n%s", code, out)
	}
}

// pageAndMetrics renders the index page and /metrics of the repository
// at gitDir in process, as git+ serve mounts them.
func pageAndMetrics(t *testing.T, gitDir string) (page, expo string) {
	t.Helper()
	get := func(h http.Handler, path string) string {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest("GET", path, nil))
		if rec.Code != 200 {
			t.Fatalf("GET %s: %d\n%s", path, rec.Code, rec.Body.String())
		}
		return rec.Body.String()
	}
	page = get(webview.Repo(gitDir, "/r.git"), "/r.git/")
	expo = get(metrics.New(serve.TrustOf, io.Discard).Handler([]metrics.Repo{{Name: "r.git", GitDir: gitDir}}), "/metrics")
	return page, expo
}

// TestE2EWakeFailureShown: a wake rule that exits non-zero, and one that
// cannot start, are shown in queue show (text and --json, by path and in a
// clone), on the page and in /metrics; a later success clears the line.
func TestE2EWakeFailureShown(t *testing.T) {
	t.Parallel()
	w := newE2E(t, nil)
	w.mustGP("admin", w.work, "", "--repo", w.origin, "queue", "open", "--target", "main")
	writeJSONFile(t, filepath.Join(w.origin, config.WakeFile), wake.WakeConfig{Rules: []wake.WakeRule{
		{Name: "ci", Ref: "refs/heads/*", On: []string{"*"}, Run: []string{"sh", "-c", "echo running; echo 'ci: cannot reach the runner' >&2; exit 3"}},
		{Name: "gone", Ref: "refs/heads/*", On: []string{"*"}, Run: []string{"/nonexistent/ci-runner"}},
	}})
	for i := 0; i < 2; i++ {
		w.git(w.work, "commit", "-q", "--allow-empty", "-m", "wake me")
		w.git(w.work, "push", "-q", "origin", "HEAD:refs/heads/topic")
		if !waitFor(20*time.Second, func() bool {
			fs, _ := opstatus.WakeFailingIn(w.origin)
			return len(fs) == 2 && fs[0].Failures == i+1 && fs[1].Failures == i+1
		}) {
			fs, _ := opstatus.WakeFailingIn(w.origin)
			t.Fatalf("push %d: the wake failures were not recorded: %+v", i+1, fs)
		}
	}

	var v repo.QueueView
	if err := json.Unmarshal([]byte(w.mustGP("", w.work, "", "--repo", w.origin, "queue", "show", "--target", "main", "--json")), &v); err != nil {
		t.Fatal(err)
	}
	byRule := map[string]repo.WakeFailure{}
	for _, f := range v.WakeFailures {
		byRule[f.Rule] = f
	}
	if f := byRule["ci"]; f.Failures != 2 || f.Exit != 3 || f.Line != "ci: cannot reach the runner" {
		t.Fatalf("queue show --json: the failing ci rule: %+v (all: %+v)", f, v.WakeFailures)
	}
	if f := byRule["gone"]; f.Failures != 2 || !strings.Contains(f.Error, "cannot start") {
		t.Fatalf("queue show --json: the rule that cannot start: %+v", f)
	}
	text := w.mustGP("", w.work, "", "queue", "show", "--target", "main") // in the clone: its remote is a path
	if !strings.Contains(text, "wake rule ci failed 2 times since ") || !strings.Contains(text, ": ci: cannot reach the runner") {
		t.Fatalf("queue show in a clone does not show the failing wake rule:\n%s", text)
	}
	if all := w.mustGP("", w.work, "", "queue", "show"); !strings.Contains(all, "main") || !strings.Contains(all, "wake rule gone failed 2 times") {
		t.Fatalf("queue show without a queue: the queues and the failing rules:\n%s", all)
	}
	// A clone reading the published status ref (as a clone over ssh or
	// HTTP does): the origin's path is not read.
	other := filepath.Join(t.TempDir(), "other")
	w.git(w.work, "clone", "-q", "file://"+w.origin, other)
	w.git(other, "remote", "set-url", "origin", "ssh://example.invalid/r.git")
	w.git(other, "fetch", "-q", w.origin, "+refs/hub/*:refs/hub/*", "+refs/gitplus/status/*:refs/gitplus/status/*")
	if got := opstatus.PublishedWakeFailures(filepath.Join(other, ".git")); len(got) != 2 {
		t.Fatalf("the published status has %d failing rules, want 2: %+v", len(got), got)
	}

	page, expo := pageAndMetrics(t, w.origin)
	if !strings.Contains(page, "wake rule ci failed 2 times since") || !strings.Contains(page, "ci: cannot reach the runner") {
		t.Fatalf("the page does not show the failing wake rule:\n%s", page)
	}
	if v := mustSample(t, expo, "gitplus_wake_failures_total", "repository", "r.git", "rule", "ci"); v != 2 {
		t.Fatalf("gitplus_wake_failures_total{rule=ci} = %v, want 2", v)
	}
	if v := mustSample(t, expo, "gitplus_wake_failures_total", "repository", "r.git", "rule", "gone"); v != 2 {
		t.Fatalf("gitplus_wake_failures_total{rule=gone} = %v, want 2", v)
	}

	// The rule mended: its next run succeeds and queue show says nothing.
	writeJSONFile(t, filepath.Join(w.origin, config.WakeFile), wake.WakeConfig{Rules: []wake.WakeRule{
		{Name: "ci", Ref: "refs/heads/*", On: []string{"*"}, Run: []string{"true"}}}})
	w.git(w.work, "commit", "-q", "--allow-empty", "-m", "mended")
	w.git(w.work, "push", "-q", "origin", "HEAD:refs/heads/topic")
	if !waitFor(20*time.Second, func() bool {
		fs, _ := opstatus.WakeFailingIn(w.origin)
		return len(fs) == 1 && fs[0].Rule == "gone" && len(opstatus.PublishedWakeFailures(w.origin)) == 1
	}) {
		fs, _ := opstatus.WakeFailingIn(w.origin)
		t.Fatalf("a successful run did not clear the failing rule: %+v", fs)
	}
}

// webhookSink is a webhook receiver: every delivery's body.
type webhookSink struct {
	mu     sync.Mutex
	bodies []string
	srv    *httptest.Server
}

func newWebhookSink(t *testing.T) *webhookSink {
	s := &webhookSink{}
	s.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		s.mu.Lock()
		s.bodies = append(s.bodies, string(b))
		s.mu.Unlock()
	}))
	t.Cleanup(s.srv.Close)
	return s
}

func (s *webhookSink) has(sub string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, b := range s.bodies {
		if strings.Contains(b, sub) {
			return true
		}
	}
	return false
}

// unjudgedAlarm checks the alarm's five places after an unjudged push of
// ref to c: the pusher's output, the post-receive log, the webhook
// delivery, /metrics and the page.
func unjudgedAlarm(t *testing.T, gitDir, pushOut, ref, c string, sink *webhookSink) {
	t.Helper()
	if !strings.Contains(pushOut, "git+: ALARM: "+ref+" moved ") || !strings.Contains(pushOut, "without git+'s judgement") {
		t.Errorf("the pusher was not told of the alarm:\n%s", pushOut)
	}
	log, _ := os.ReadFile(filepath.Join(gitDir, hooks.LogFile))
	if !strings.Contains(string(log), "ALARM: "+ref+" moved ") {
		t.Errorf("the post-receive log has no alarm:\n%s", log)
	}
	if !waitFor(20*time.Second, func() bool { return sink.has(`"type":"`+opstatus.UnjudgedEvent+`"`) && sink.has(c) }) {
		t.Errorf("no webhook delivery carried the %s event", opstatus.UnjudgedEvent)
	}
	page, expo := pageAndMetrics(t, gitDir)
	if v, ok := sample(expo, "gitplus_unjudged_updates_total", "repository", "r.git", "ref", ref); !ok || v != 1 {
		t.Errorf("gitplus_unjudged_updates_total{ref=%s} = %v (%v), want 1:\n%s", ref, v, ok, expo)
	}
	if !strings.Contains(page, "ALARM: "+ref+" moved ") {
		t.Errorf("the page has no alarm banner")
	}
}

// TestE2EUnjudgedAlarm: with git+'s pre-receive replaced by a hook that
// accepts everything (git+'s post-receive still running), an unsigned,
// unreviewed push to protected main is accepted by git and raises the
// alarm; judged pushes (git+ back in pre-receive) raise none, also when
// several run at once.
func TestE2EUnjudgedAlarm(t *testing.T) {
	t.Parallel()
	w := newE2E(t, nil)
	c0 := w.commit(nil, map[string]string{"README": "hello\n"}, "seed")
	w.expectAccepted(t, "refs/heads/main", c0, "origin", c0+":refs/heads/main")
	rules := filepath.Join(t.TempDir(), "rules.json")
	writeRules(t, rules, `{"requireKnownPusher":true,"protected":{"refs/heads/main":{}}}`)
	w.mustGP("admin", w.work, "", "--repo", w.origin, "rules", "set", rules)
	sink := newWebhookSink(t)
	writeJSONFile(t, filepath.Join(w.origin, config.WebhooksFile), delivery.WebhooksConfig{Hooks: []delivery.Webhook{{URL: sink.srv.URL, Secret: "s"}}})
	t.Cleanup(func() { stopWorker(t, w.origin) }) // before the directories go

	// Judged pushes, several at once: no alarm.
	var wg sync.WaitGroup
	for i := 0; i < 4; i++ {
		c := w.commit([]string{c0}, map[string]string{"f.txt": strings.Repeat("x", i+1)}, "judged")
		wg.Add(1)
		go func(i int, c string) {
			defer wg.Done()
			w.gitRun(w.work, "", nil, "push", "-q", "origin", c+":refs/heads/topic"+string(rune('a'+i)))
		}(i, c)
	}
	wg.Wait()
	if a, _ := opstatus.ReadUnjudged(w.origin); len(a) != 0 {
		t.Fatalf("judged pushes raised alarms: %+v", a)
	}

	// git+ dropped from pre-receive.
	pre := filepath.Join(w.origin, "hooks", "pre-receive")
	if err := os.WriteFile(pre, []byte("#!/bin/sh\ncat >/dev/null\nexit 0\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	w.signPushes(w.work, "")
	c1 := w.commit([]string{c0}, map[string]string{"evil.txt": "unreviewed\n"}, "unreviewed")
	_, errs, err := w.gitRun(w.work, "", nil, "push", "origin", c1+":refs/heads/main")
	if err != nil || w.ref("refs/heads/main") != c1 {
		t.Fatalf("the unjudged push did not go through: %v\n%s", err, errs)
	}
	unjudgedAlarm(t, w.origin, errs, "refs/heads/main", c1, sink)
	// An unprotected branch moved the same way is no alarm.
	if _, errs, _ := w.gitRun(w.work, "", nil, "push", "origin", c1+":refs/heads/free"); strings.Contains(errs, "ALARM") {
		t.Fatalf("an unprotected branch raised the alarm:\n%s", errs)
	}
	if a, _ := opstatus.ReadUnjudged(w.origin); len(a) != 1 {
		t.Fatalf("%d alarms recorded, want 1: %+v", len(a), a)
	}
	// Without any after-push configuration the post-receive script starts
	// git+ all the same once its pre-receive is gone: the alarm still
	// reaches the pusher and the records.
	if err := os.Remove(filepath.Join(w.origin, config.WebhooksFile)); err != nil {
		t.Fatal(err)
	}
	c2 := w.commit([]string{c1}, map[string]string{"evil.txt": "again\n"}, "unreviewed again")
	if _, errs, err := w.gitRun(w.work, "", nil, "push", "origin", c2+":refs/heads/main"); err != nil || !strings.Contains(errs, "ALARM") {
		t.Fatalf("an unjudged push with no after-push configuration raised no alarm (%v):\n%s", err, errs)
	}
	if a, _ := opstatus.ReadUnjudged(w.origin); len(a) != 2 {
		t.Fatalf("%d alarms recorded, want 2: %+v", len(a), a)
	}
}

// TestE2ECheckRunFetchesRevision: check run told to check a commit its
// clone lacks fetches it from the remote instead of failing at the
// checkout.
func TestE2ECheckRunFetchesRevision(t *testing.T) {
	t.Parallel()
	w := newE2E(t, nil)
	c0 := w.commit(nil, map[string]string{"README": "hello\n"}, "seed")
	w.expectAccepted(t, "refs/heads/main", c0, "origin", c0+":refs/heads/main")
	// Another clone pushes a topic and opens a pull request of it.
	other := filepath.Join(t.TempDir(), "other")
	w.git(w.work, "clone", "-q", w.origin, other)
	w.signPushes(other, "admin")
	w.git(other, "checkout", "-q", "-b", "topic", c0)
	os.WriteFile(filepath.Join(other, "t.txt"), []byte("t\n"), 0o644)
	w.git(other, "add", "t.txt")
	w.git(other, "commit", "-q", "-m", "topic")
	head := w.git(other, "rev-parse", "HEAD")
	w.git(other, "push", "-q", "origin", "topic")
	id := lastLine(w.mustGP("admin", other, "", "pr", "open", "--base", "main", "--head", "topic", "--title", "topic"))
	if _, _, err := w.gitRun(w.work, "", nil, "cat-file", "-e", head+"^{commit}"); err == nil {
		t.Fatal("the work clone has the head already: the test would not test the fetch")
	}
	out, errs, code := w.gp("admin", w.work, "", "check", "run", "--pr", id, "--rev", head, "--name", "ci", "--", "test", "-f", "t.txt")
	if code != 0 {
		t.Fatalf("check run of a revision the clone lacks: exit %d\n%s%s", code, out, errs)
	}
	if show := w.mustGP("", w.work, "", "pr", "show", id); !strings.Contains(show, "ci") || !strings.Contains(show, "success") {
		t.Fatalf("the check was not recorded as a success:\n%s", show)
	}
}

// TestE2EDeleteSourceBranch: with deleteSourceBranch on main, pr merge and
// queue run delete a landed pull request's source branch; a source branch
// that moved past the landed head, and one the rules protect, are kept.
func TestE2EDeleteSourceBranch(t *testing.T) {
	t.Parallel()
	w := newE2E(t, nil)
	c0 := w.commit(nil, map[string]string{"README": "hello\n"}, "seed")
	w.expectAccepted(t, "refs/heads/main", c0, "origin", c0+":refs/heads/main")
	rules := filepath.Join(t.TempDir(), "rules.json")
	writeRules(t, rules, `{"requireKnownPusher":true,"protected":{"refs/heads/main":{"requiredApprovals":0,"requiredChecks":[],"queueCandidates":true,"deleteSourceBranch":true},"refs/heads/release":{"requiredApprovals":0,"requiredChecks":[]}}}`)
	w.mustGP("admin", w.work, "", "--repo", w.origin, "rules", "set", rules)
	if show := w.mustGP("", w.work, "", "--repo", w.origin, "rules", "show"); !strings.Contains(show, `"deleteSourceBranch": true`) && !strings.Contains(show, `"deleteSourceBranch":true`) {
		t.Fatalf("rules show does not carry deleteSourceBranch:\n%s", show)
	}
	branch := func(name, file string) string {
		w.git(w.work, "checkout", "-q", "-B", name, c0)
		os.WriteFile(filepath.Join(w.work, file), []byte(file+"\n"), 0o644)
		w.git(w.work, "add", file)
		w.git(w.work, "commit", "-q", "-m", file)
		w.git(w.work, "push", "-q", "-f", "origin", name)
		return lastLine(w.mustGP("admin", w.work, "", "pr", "open", "--base", "main", "--head", name, "--title", name))
	}
	// pr merge deletes the source.
	a := branch("topic-a", "a.txt")
	out := w.mustGP("admin", w.work, "", "pr", "merge", a)
	if !strings.Contains(out, "deleted its source branch refs/heads/topic-a") || w.ref("refs/heads/topic-a") != "" {
		t.Fatalf("pr merge did not delete the source branch: %q\n%s", w.ref("refs/heads/topic-a"), out)
	}
	// queue run deletes the source of what it lands.
	w.git(w.work, "fetch", "-q", "origin")
	c0 = w.git(w.work, "rev-parse", "origin/main")
	b := branch("topic-b", "b.txt")
	w.mustGP("admin", w.work, "", "--repo", w.origin, "queue", "open", "--target", "main")
	w.mustGP("admin", w.work, "", "queue", "enter", b)
	run := w.mustGP("admin", w.work, "", "--repo", w.origin, "queue", "run", "--target", "main")
	if w.ref("refs/heads/topic-b") != "" {
		t.Fatalf("queue run did not delete the landed pull request's source branch:\n%s", run)
	}
	// The pull request's page: its timeline has the queue's events too.
	rec := httptest.NewRecorder()
	webview.Repo(w.origin, "/r.git").ServeHTTP(rec, httptest.NewRequest("GET", "/r.git/pr/"+b, nil))
	for _, want := range []string{"entered the queue for main at", "left the queue for main: landed"} {
		if !strings.Contains(rec.Body.String(), want) {
			t.Errorf("the pull request's timeline lacks %q:\n%s", want, rec.Body.String())
		}
	}
	// A source that moved on is kept.
	w.git(w.work, "fetch", "-q", "origin")
	c0 = w.git(w.work, "rev-parse", "origin/main")
	c := branch("topic-c", "c.txt")
	head := w.git(w.work, "rev-parse", "HEAD")
	w.git(w.work, "commit", "-q", "--allow-empty", "-m", "more")
	w.git(w.work, "push", "-q", "origin", "topic-c")
	w.git(w.work, "push", "-q", "origin", head+":refs/heads/landing-c")
	_ = c
	// (the pull request's head is still head; land it by pr merge)
	out = w.mustGP("admin", w.work, "", "pr", "merge", c)
	if w.ref("refs/heads/topic-c") == "" || !strings.Contains(out, "kept refs/heads/topic-c") {
		t.Fatalf("a source branch that moved past the landed head was deleted (or not said):\n%s", out)
	}
}

// TestE2EVerifyFirstCommit: a protected branch whose first commit landed
// through a pull request (pr merge creating it): verify --branch reports
// that commit as the pull request's landing.
func TestE2EVerifyFirstCommit(t *testing.T) {
	t.Parallel()
	w := newE2E(t, nil)
	rules := filepath.Join(t.TempDir(), "rules.json")
	writeRules(t, rules, `{"requireKnownPusher":true,"protected":{"refs/heads/main":{"requiredApprovals":0,"requiredChecks":[]}}}`)
	w.mustGP("admin", w.work, "", "--repo", w.origin, "rules", "set", rules)
	c0 := w.commit(nil, map[string]string{"README": "first\n"}, "first")
	w.git(w.work, "branch", "-f", "first", c0)
	w.git(w.work, "push", "-q", "origin", "first")
	id := lastLine(w.mustGP("admin", w.work, "", "pr", "open", "--base", "main", "--head", "first", "--title", "first"))
	w.mustGP("admin", w.work, "", "pr", "merge", id)
	if w.ref("refs/heads/main") != c0 {
		t.Fatal("pr merge did not create main")
	}
	out, errs, code := w.gp("", w.work, "", "--repo", w.origin, "verify", "--branch", "main", "--no-fetch")
	t.Logf("verify:\n%s%s", out, errs)
	if code != 0 || !strings.Contains(out, c0) || !strings.Contains(out, id) {
		t.Fatalf("verify --branch main does not report the first commit %s landing pull request %s: exit %d\n%s%s", c0, id, code, out, errs)
	}
	var j struct {
		Landings int `json:"landings"`
		Records  []struct {
			Commit, Kind, PR string
		} `json:"landingRecords"`
	}
	js := w.mustGP("", w.work, "", "--repo", w.origin, "verify", "--branch", "main", "--no-fetch", "--json")
	if err := json.Unmarshal([]byte(js), &j); err != nil || len(j.Records) == 0 || j.Records[0].Commit != c0 || j.Records[0].PR != id {
		t.Fatalf("verify --json does not record the first commit's landing: %v\n%s", err, js)
	}
}
