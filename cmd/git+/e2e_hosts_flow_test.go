package main

// The unattended flow on a real host: a pull request opened, reviewed and
// entered by people pushing through the host, then checked, queued and
// landed by wake rules running as the server (gitplus.serverKey), and the
// landing verified on a mirror the server feeds.

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gitplus/gitplus/fixtures"
	"github.com/gitplus/gitplus/hooks/config"
	"github.com/gitplus/gitplus/hooks/delivery"
	"github.com/gitplus/gitplus/hooks/wake"
)

// hostFlow is what the flow needs of a host: the clone URL a member uses,
// the environment their git and git+ need for it (credentials, ssh), and
// what goes before the git+ binary in a wake rule's command (gitolite's
// bypass for the server's own pushes).
type hostFlow struct {
	url     string
	env     []string
	wakePre []string
}

// checkHostFlow runs the flow on w (members alice with source.push, hub.pr
// and hub.queue; main seeded at c0 and protected by seedProtected, whose
// rules it replaces).
func checkHostFlow(t *testing.T, w *e2e, f hostFlow, c0 string) {
	t.Helper()
	keys := t.TempDir()
	w.keys["server"] = fixtures.NewKey(t, keys, "server")
	w.keys["rev"] = fixtures.NewKey(t, keys, "rev")
	w.mustGP("admin", w.work, "", "--repo", w.origin, "member", "add", "server", "--key", w.keys["server"].Path+".pub",
		"--cap", "hub.queue", "--cap", "hub.check:ci", "--cap", "source.push")
	w.mustGP("admin", w.work, "", "--repo", w.origin, "member", "add", "rev", "--key", w.keys["rev"].Path+".pub", "--cap", "hub.review")
	rules := filepath.Join(t.TempDir(), "rules.json")
	writeRules(t, rules, `{"requireKnownPusher":true,"protected":{"refs/heads/main":{"requiredApprovals":1,"requiredChecks":["ci"],"queueCandidates":true}}}`)
	w.mustGP("admin", w.work, "", "--repo", w.origin, "rules", "set", rules)
	w.mustGP("server", w.work, "", "--repo", w.origin, "queue", "open", "--target", "main")
	w.git(w.origin, "config", "gitplus.serverKey", w.keys["server"].Path)

	mirror := filepath.Join(t.TempDir(), "mirror.git")
	w.git(filepath.Dir(mirror), "init", "-q", "--bare", mirror)
	writeJSONFile(t, filepath.Join(w.origin, config.RemotesFile), delivery.RemotesConfig{Remotes: []delivery.Remote{{Name: "m", URL: mirror}}})
	gp := append(append([]string{}, f.wakePre...), w.bin)
	run := func(args ...string) []string { return append(append([]string{}, gp...), args...) }
	writeJSONFile(t, filepath.Join(w.origin, config.WakeFile), wake.WakeConfig{Rules: []wake.WakeRule{
		{Name: "ci", Ref: "refs/hub/queue/*", On: []string{"queue.candidate"},
			Run: run("check", "run", "--pr", "{event.pr}", "--rev", "{event.step}", "--name", "ci", "--", "true"), Key: wake.WakeKeyServer},
		{Name: "queue", Ref: "refs/hub/pr/*", On: []string{"check.completed"}, Run: run("queue", "run", "--target", "main"), Key: wake.WakeKeyServer},
		{Name: "queue-entered", Ref: "refs/hub/queue/*", On: []string{"queue.entered"}, Run: run("queue", "run", "--target", "main"), Key: wake.WakeKeyServer},
	}})

	// alice and rev work in a clone of the host's URL: plain git pushes
	// (the host says who), git+ verbs signing their events.
	dir := filepath.Join(t.TempDir(), "team")
	clientEnv := append(append([]string{}, w.env...), f.env...)
	gitc := func(args ...string) string {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir, cmd.Env = dir, clientEnv
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return strings.TrimSpace(string(out))
	}
	gpc := func(key string, args ...string) string {
		t.Helper()
		cmd := exec.Command(w.bin, args...)
		cmd.Dir, cmd.Env = dir, append(append([]string{}, clientEnv...), "GITPLUS_KEY="+w.keys[key].Path)
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		if err := cmd.Run(); err != nil {
			t.Fatalf("git+ %s (as %s): %v\n%s%s", strings.Join(args, " "), key, err, out.String(), errb.String())
		}
		return strings.TrimSpace(out.String())
	}
	cmd := exec.Command("git", "clone", "-q", f.url, dir)
	cmd.Env = clientEnv
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git clone %s: %v\n%s", f.url, err, out)
	}
	gitc("checkout", "-q", "-b", "topic", c0)
	os.WriteFile(filepath.Join(dir, "topic.txt"), []byte("topic\n"), 0o644)
	gitc("add", "topic.txt")
	gitc("commit", "-q", "-m", "topic")
	gitc("push", "-q", "origin", "topic")
	id := lastLine(gpc("alice", "pr", "open", "--base", "main", "--head", "topic", "--title", "topic"))
	gpc("rev", "pr", "review", id, "--approve")
	gpc("alice", "queue", "enter", id)

	// Nobody runs anything more: the wake rules check, queue and land.
	if !waitFor(25*time.Second, func() bool {
		return w.git(w.origin, "rev-parse", "refs/heads/main") != c0
	}) {
		logs, _ := filepath.Glob(filepath.Join(w.origin, "gitplus", "log", "*.log"))
		var all string
		for _, l := range logs {
			b, _ := os.ReadFile(l)
			all += "== " + filepath.Base(l) + "\n" + string(b)
		}
		t.Fatalf("main did not move: the unattended flow stopped\n%s", all)
	}
	landed := w.git(w.origin, "rev-parse", "refs/heads/main")
	if !waitFor(20*time.Second, func() bool {
		_, _, err := w.gitRun(mirror, "", nil, "rev-parse", "--verify", "-q", landed+"^{commit}")
		return err == nil && hubAndHeads(w, mirror) == hubAndHeads(w, w.origin)
	}) {
		st, _, _ := w.gp("", w.origin, "", "mirror", "status")
		t.Fatalf("the mirror did not catch up:\n%s", st)
	}
	if out, errs, code := w.gp("", mirror, "", "--repo", mirror, "verify", "--branch", "main"); code != 0 {
		t.Fatalf("verify --branch main on the mirror: exit %d\n%s%s", code, out, errs)
	}
	// The setup passes hook check with no warning: gitplus.pusher names
	// the host's identity and the server key holds what its rules need.
	if out, errs, code := w.gp("", w.work, "", "hook", "check", "--repo", w.origin); code != 0 {
		t.Fatalf("hook check after the flow: exit %d\n%s%s", code, out, errs)
	}
}
