package main

// End-to-end tests of git+ serve: stock git over smart HTTP against the
// built binary, hooks installed by the server.

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gitplus/gitplus/fixtures"
	"github.com/gitplus/gitplus/hooks"
	"github.com/gitplus/gitplus/hooks/config"
	"github.com/gitplus/gitplus/hooks/delivery"
	"github.com/gitplus/gitplus/hooks/install"
	"github.com/gitplus/gitplus/hooks/wake"
)

// gpServer is a running `git+ serve`.
type gpServer struct {
	URL string // http://127.0.0.1:PORT
	SSH string // 127.0.0.1:PORT with --ssh
	Log string // the server's standard error
	cmd *exec.Cmd
}

// startServe starts git+ serve on a free port of 127.0.0.1 and stops it
// (SIGTERM, expecting a clean exit) when the test ends.
func startServe(t *testing.T, bin string, env []string, root string, extra ...string) *gpServer {
	t.Helper()
	cmd := exec.Command(bin, append([]string{"serve", "--root", root, "--listen", "127.0.0.1:0"}, extra...)...)
	cmd.Env = env
	logf, err := os.Create(filepath.Join(t.TempDir(), "serve.log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = logf
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := make(chan string, 2)
	go func() {
		sc := bufio.NewScanner(out)
		for i := 0; i < 2 && sc.Scan(); i++ {
			lines <- sc.Text()
		}
		close(lines)
	}()
	var line string
	select {
	case line = <-lines:
	case <-time.After(20 * time.Second):
		cmd.Process.Kill()
		t.Fatalf("git+ serve printed nothing in 20 s")
	}
	url, ok := strings.CutPrefix(line, "listening on ")
	if !ok {
		cmd.Process.Kill()
		t.Fatalf("git+ serve printed %q", line)
	}
	s := &gpServer{URL: strings.TrimSuffix(url, "/"), Log: logf.Name(), cmd: cmd}
	for _, a := range extra {
		if a == "--ssh" {
			var line string
			select {
			case line = <-lines:
			case <-time.After(20 * time.Second):
			}
			addr, ok := strings.CutPrefix(line, "listening on ssh://")
			if !ok {
				cmd.Process.Kill()
				t.Fatalf("git+ serve --ssh printed %q second", line)
			}
			s.SSH = strings.TrimSuffix(addr, "/")
		}
	}
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("git+ serve after SIGTERM: %v\n%s", err, readFile(logf.Name()))
			}
		case <-time.After(35 * time.Second):
			cmd.Process.Kill()
			t.Errorf("git+ serve did not stop on SIGTERM")
		}
		if t.Failed() {
			t.Logf("git+ serve's log (%s):\n%s", logf.Name(), readFile(logf.Name()))
		}
		logf.Close()
	})
	return s
}

func TestServe(t *testing.T) {
	t.Parallel()
	w := newE2E(t, map[string][]string{"dev": {"hub.pr"}})
	root := filepath.Dir(w.origin)
	// A plain bare repository (no refs/hub/trust): serve must leave it
	// alone, and a git+ repository nested in a directory it must equip.
	other := filepath.Join(root, "team", "other.git")
	w.git(root, "init", "-q", "--bare", other)
	nested := filepath.Join(root, "team", "nested.git")
	w.mustGP("admin", root, "", "init", nested)
	os.RemoveAll(filepath.Join(nested, "hooks", "pre-receive"))
	writeJSONFile(t, filepath.Join(w.origin, config.WakeFile), wake.WakeConfig{Rules: []wake.WakeRule{
		{Name: "late", Ref: "refs/heads/*", On: []string{"*"}, Run: []string{"sh", "-c", "sleep 1; echo survived"}},
	}})
	s := startServe(t, w.bin, w.env, root)
	if ok, _, err := install.Installed(nested); err != nil || !ok {
		t.Fatalf("git+ serve did not install the hooks in %s: %v", nested, err)
	}
	if ok, _, _ := install.Installed(other); ok {
		t.Fatalf("git+ serve installed hooks in %s, which has no refs/hub/trust", other)
	}
	if log := readFile(s.Log); !strings.Contains(log, "skipped "+other) {
		t.Fatalf("git+ serve did not list %s as skipped:\n%s", other, log)
	}

	// Clone anonymously, commit, push a branch over HTTP with a token.
	clone := filepath.Join(t.TempDir(), "c")
	w.git(root, "clone", "-q", s.URL+"/origin.git", clone)
	token := strings.TrimSpace(w.mustGP("", root, "", "--repo", w.origin, "member", "token", "issue", "admin"))
	w.git(clone, "remote", "set-url", "--push", "origin", strings.Replace(s.URL, "http://", "http://admin:"+token+"@", 1)+"/origin.git")
	w.git(clone, "commit", "-q", "--allow-empty", "-m", "first")
	w.git(clone, "push", "-q", "origin", "HEAD:refs/heads/main", "HEAD:refs/heads/feature")
	head := w.git(clone, "rev-parse", "HEAD")
	if got := w.ref("refs/heads/feature"); got != head {
		t.Fatalf("feature = %q after the HTTP push, want %s", got, head)
	}
	// The wake run outlives the request (gitkit signals receive-pack's group).
	late := wake.WakeLog(w.origin, "late")
	if !waitFor(15*time.Second, func() bool { return strings.Contains(readFile(late), "exit 0") }) {
		t.Fatalf("wake run did not survive the request:\n%s", readFile(late))
	}
	if !strings.Contains(readFile(late), "survived") {
		t.Fatalf("wake log: %s", readFile(late))
	}

	// Protect main; a direct push is refused, and the client is told.
	w.mustGP("admin", w.origin, `{"protected":{"refs/heads/main":{"requiredApprovals":1}}}`, "rules", "set", "-")
	w.git(clone, "commit", "-q", "--allow-empty", "-m", "second")
	out, errs, err := w.gitRun(clone, "", nil, "push", "origin", "HEAD:refs/heads/main")
	if err == nil {
		t.Fatalf("push to protected main over HTTP succeeded:\n%s%s", out, errs)
	}
	if !strings.Contains(errs, "remote: git+: refused refs/heads/main") {
		t.Fatalf("refusal did not reach the client:\n%s", errs)
	}
	if got := w.ref("refs/heads/main"); got != head {
		t.Fatalf("main moved to %s despite the refusal", got)
	}

	// Fetch works; unknown repositories and escapes are 404/400.
	w.git(clone, "fetch", "-q", "origin")
	if _, errs, err := w.gitRun(root, "", nil, "ls-remote", s.URL+"/nope.git"); err == nil {
		t.Fatalf("ls-remote of a missing repository succeeded")
	} else if !strings.Contains(errs, "not found") && !strings.Contains(errs, "404") {
		t.Logf("ls-remote of a missing repository: %s", errs)
	}
	if _, _, err := w.gitRun(root, "", nil, "ls-remote", s.URL+"/team/nested.git"); err != nil {
		t.Fatalf("ls-remote of a nested repository: %v", err)
	}
	if _, _, err := w.gitRun(root, "", nil, "ls-remote", s.URL+"/team/other.git"); err == nil {
		t.Fatalf("ls-remote of a repository without refs/hub/trust succeeded")
	}
}

// The closed loop: a server whose wake rules run the checks on each
// candidate and the queue on each check and entry; a user only pushes
// branches and opens, approves and enters pull requests over HTTP. Good
// pull requests land, the failing one is evicted, the mirror follows.
func TestServeClosedLoop(t *testing.T) {
	t.Parallel()
	setupStart := time.Now()
	e := newHubEnv(t, "admin", "dev", "rev", "ci", "q")
	env := fixtures.GitEnv(e.home)
	root := settlingDir(t)
	bare := filepath.Join(root, "repo.git")
	e.ok(root, "admin", "init", bare)
	for _, m := range []struct{ name, cap string }{{"dev", "hub.pr"}, {"rev", "hub.review"}, {"ci", "hub.check:ci"}, {"q", "hub.queue"}} {
		e.ok(bare, "admin", "member", "add", m.name, "--key", e.keys[m.name].Path+".pub", "--cap", m.cap)
	}
	mirror := filepath.Join(settlingDir(t), "mirror.git")
	fixtures.Git(t, filepath.Dir(mirror), "init", "-q", "--bare", mirror)
	writeJSONFile(t, filepath.Join(bare, config.RemotesFile), delivery.RemotesConfig{Remotes: []delivery.Remote{{Name: "m", URL: mirror}}})
	t.Cleanup(func() { stopWorker(t, bare) })
	queueRun := []string{"git+", "--key", e.keys["q"].Path, "queue", "run", "--target", "main"}
	writeJSONFile(t, filepath.Join(bare, config.WakeFile), wake.WakeConfig{Rules: []wake.WakeRule{
		{Name: "ci", Ref: "refs/hub/queue/*", On: []string{"queue.candidate"},
			Run: []string{"git+", "--key", e.keys["ci"].Path, "check", "run", "--pr", "{event.pr}", "--rev", "{event.step}", "--name", "ci",
				"--timeout", "30s", "--", "sh", "-c", "test ! -e fail.txt"}},
		{Name: "queue-on-check", Ref: "refs/hub/pr/*", On: []string{"check.completed"}, Run: queueRun},
		{Name: "queue-on-entry", Ref: "refs/hub/queue/*", On: []string{"queue.entered"}, Run: queueRun},
	}})
	// The user pushes branches: source.push, and a token for HTTP.
	e.ok(bare, "admin", "member", "change", "dev", "--cap", "hub.pr", "--cap", "source.push")
	token := strings.TrimSpace(e.ok(bare, "admin", "member", "token", "issue", "dev"))
	s := startServe(t, e.bin, env, root)

	// The user: a clone over HTTP.
	work := servedQueueClone(t, e, bare, root, s, token)
	qid := lastLine(e.ok(bare, "q", "queue", "open", "--target", "main"))

	files := []string{"one.txt", "fail.txt", "three.txt"}
	var ids []string
	for i, f := range files {
		br := fmt.Sprintf("feat%d", i+1)
		id := openApprovedEntered(t, e, work, br, f)
		ids = append(ids, id)
	}

	// No further step: poll the server's refs.
	start := time.Now()
	t.Logf("set-up and three pull requests entered over HTTP in %v", time.Since(setupStart))
	landed := func() bool {
		tree := fixtures.Git(t, bare, "ls-tree", "--name-only", "refs/heads/main")
		log := fixtures.Git(t, bare, "log", "--format=%B", "refs/hub/queue/"+qid)
		return strings.Contains(tree, "one.txt") && strings.Contains(tree, "three.txt") &&
			strings.Contains(log, `"reason":"failed"`) && strings.Count(log, `"reason":"landed"`) == 2
	}
	if !waitFor(60*time.Second, landed) {
		logs := ""
		for _, id := range []string{"ci", "queue-on-check", "queue-on-entry"} {
			logs += "--- " + id + "\n" + readFile(wake.WakeLog(bare, id))
		}
		t.Fatalf("the loop did not close in 60 s\nmain: %s\nqueue:\n%s\npost-receive:\n%s\n%s",
			fixtures.Git(t, bare, "ls-tree", "--name-only", "refs/heads/main"),
			fixtures.Git(t, bare, "log", "--format=%s %b", "refs/hub/queue/"+qid),
			readFile(filepath.Join(bare, hooks.LogFile)), logs)
	}
	t.Logf("two pull requests landed and one was evicted %v after the last entry", time.Since(start))
	tree := fixtures.Git(t, bare, "ls-tree", "--name-only", "refs/heads/main")
	if strings.Contains(tree, "fail.txt") {
		t.Fatalf("the failing pull request landed: %s", tree)
	}
	qlog := fixtures.Git(t, bare, "log", "--format=%B", "refs/hub/queue/"+qid)
	if !strings.Contains(qlog, `"pr":"`+ids[1]+`"`) || strings.Count(qlog, `"reason":"landed"`) != 2 {
		t.Fatalf("queue log:\n%s", qlog)
	}
	// The mirror converges on the same branches and records.
	same := func() bool {
		a := fixtures.Git(t, bare, "for-each-ref", "--format=%(objectname) %(refname)", "refs/heads", "refs/hub")
		b := fixtures.Git(t, mirror, "for-each-ref", "--format=%(objectname) %(refname)", "refs/heads", "refs/hub")
		return a == b
	}
	if !waitFor(20*time.Second, same) {
		t.Fatalf("mirror differs:\n%s\n---\n%s",
			fixtures.Git(t, bare, "for-each-ref", "refs/heads", "refs/hub"), fixtures.Git(t, mirror, "for-each-ref", "refs/heads", "refs/hub"))
	}
}

// servedQueueClone makes dev's clone of repo.git over HTTP from serve s
// (dev's token in the remote URL), pushes main's first commit through it,
// and has the admin protect main with e2eQueueRules: where the served
// closed loops start.
func servedQueueClone(t *testing.T, e *hubEnv, bare, root string, s *gpServer, token string) string {
	t.Helper()
	work := filepath.Join(t.TempDir(), "work")
	fixtures.Git(t, root, "init", "-q", "-b", "main", work)
	fixtures.Git(t, work, "remote", "add", "origin", strings.Replace(s.URL, "http://", "http://dev:"+token+"@", 1)+"/repo.git")
	if err := os.WriteFile(filepath.Join(work, "base.txt"), []byte("base\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	fixtures.Git(t, work, "add", ".")
	fixtures.Git(t, work, "commit", "-q", "-m", "base")
	fixtures.Git(t, work, "push", "-q", "origin", "main")
	rules := filepath.Join(t.TempDir(), "rules.json")
	if err := os.WriteFile(rules, []byte(e2eQueueRules), 0o644); err != nil {
		t.Fatal(err)
	}
	e.ok(bare, "admin", "rules", "set", rules)
	return work
}

// openApprovedEntered, in dev's served clone work, pushes branch br
// adding file f, and has dev open a pull request of it onto main, rev
// approve it and the queue bot enter it; it returns the pull request's id.
func openApprovedEntered(t *testing.T, e *hubEnv, work, br, f string) string {
	t.Helper()
	fixtures.Git(t, work, "checkout", "-q", "-b", br, "main")
	if err := os.WriteFile(filepath.Join(work, f), []byte(f+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	fixtures.Git(t, work, "add", ".")
	fixtures.Git(t, work, "commit", "-q", "-m", br)
	fixtures.Git(t, work, "push", "-q", "origin", br)
	id := lastLine(e.ok(work, "dev", "pr", "open", "--base", "main", "--head", br, "--title", br))
	e.ok(work, "rev", "pr", "review", id, "--approve")
	e.ok(work, "q", "queue", "enter", id)
	return id
}

// settlingDir is a temporary directory for a test whose detached wake runs
// (their logs, worktrees and mirror pushes) may still be finishing when the
// test returns: its removal is retried for a while instead of failing the
// test, as t.TempDir's does, on a file written meanwhile.
func settlingDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "gitplus-settle-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		deadline := time.Now().Add(15 * time.Second)
		for {
			err := os.RemoveAll(dir)
			if err == nil {
				return
			}
			if time.Now().After(deadline) {
				t.Logf("leaving %s: %v", dir, err)
				return
			}
			time.Sleep(200 * time.Millisecond)
		}
	})
	return dir
}
