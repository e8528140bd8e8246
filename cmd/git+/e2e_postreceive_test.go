package main

// End-to-end tests of the after-push chain (hooks.PostReceive run by the
// installed post-receive hook): mirrors, signed webhooks, wake rules.

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/gitplus/gitplus/hooks"
	"github.com/gitplus/gitplus/hooks/config"
	"github.com/gitplus/gitplus/hooks/delivery"
	"github.com/gitplus/gitplus/hooks/wake"
	"github.com/gitplus/gitplus/hubrefs"
)

func writeJSONFile(t *testing.T, path string, v any) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// closedPort returns an address nothing listens on.
func closedPort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}

// blackHole accepts connections and never answers.
func blackHole(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var conns []net.Conn
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		l.Close()
		mu.Lock()
		for _, c := range conns {
			c.Close()
		}
		mu.Unlock()
	})
	return l.Addr().String()
}

// hubAndHeads lists a repository's refs/heads and refs/hub.
func hubAndHeads(w *e2e, dir string) string {
	w.t.Helper()
	return w.git(dir, "for-each-ref", "--format=%(objectname) %(refname)", "refs/heads", "refs/hub")
}

// waitFor polls cond every 50 ms until it holds or d passes.
func waitFor(d time.Duration, cond func() bool) bool {
	end := time.Now().Add(d)
	for time.Now().Before(end) {
		if cond() {
			return true
		}
		time.Sleep(50 * time.Millisecond)
	}
	return cond()
}

func readFile(p string) string {
	b, _ := os.ReadFile(p)
	return string(b)
}

func TestPostReceiveChain(t *testing.T) {
	t.Parallel()
	w := newE2E(t, map[string][]string{"dev": {"hub.pr"}})
	t.Cleanup(func() { stopWorker(t, w.origin) })

	// A good webhook checks the signature and keeps the deliveries.
	const secret = "s3cret"
	var mu sync.Mutex
	var got []delivery.Delivery
	badSig := 0
	srv := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		defer mu.Unlock()
		if !delivery.VerifySignature(secret, body, r.Header.Get(delivery.SignatureHeader)) {
			badSig++
			http.Error(rw, "bad signature", 400)
			return
		}
		var d delivery.Delivery
		if err := json.Unmarshal(body, &d); err != nil {
			http.Error(rw, err.Error(), 400)
			return
		}
		got = append(got, d)
	}))
	defer srv.Close()

	mirror := filepath.Join(t.TempDir(), "mirror.git")
	w.git(filepath.Dir(mirror), "init", "-q", "--bare", mirror)
	writeJSONFile(t, filepath.Join(w.origin, config.RemotesFile), delivery.RemotesConfig{Remotes: []delivery.Remote{
		{Name: "m1", URL: mirror},
		{Name: "down", URL: "http://" + closedPort(t) + "/x.git", TimeoutSeconds: 3},
		{Name: "hole", URL: "http://" + blackHole(t) + "/x.git", TimeoutSeconds: 2},
	}})
	writeJSONFile(t, filepath.Join(w.origin, config.WebhooksFile), delivery.WebhooksConfig{Hooks: []delivery.Webhook{
		{Name: "good", URL: srv.URL, Secret: secret, Events: []string{"*"}},
		{Name: "hole", URL: "http://" + blackHole(t) + "/hook", Secret: "x", TimeoutSeconds: 1, Attempts: 2},
	}})
	probe := `s=$(cat /proc/$$/stat); set -- $s; echo "pid=$1 pgrp=$5 sid=$6 rule=$GITPLUS_WAKE_RULE cwd=$(pwd)"`
	writeJSONFile(t, filepath.Join(w.origin, config.WakeFile), wake.WakeConfig{Rules: []wake.WakeRule{
		{Name: "probe", Ref: "refs/heads/*", On: []string{"*"}, Run: []string{"sh", "-c", probe}},
		{Name: "pr", Ref: "refs/hub/pr/*", On: []string{hubrefs.TypePROpened}, Run: []string{"sh", "-c", "echo woke"}},
		{Name: "never", Ref: "refs/hub/pr/*", On: []string{hubrefs.TypeCheckCompleted}, Run: []string{"sh", "-c", "echo never"}},
	}})

	// One push of two branches: one wake run; the push stands and does not
	// wait for the dead mirror or the black-holed webhook and mirror: they
	// are spooled for the delivery worker.
	c1 := w.commit(nil, map[string]string{"a": "1"}, "c1")
	out, err := w.push("origin", c1+":refs/heads/main", c1+":refs/heads/f1")
	if err != nil {
		t.Fatalf("push failed: %v\n%s", err, out)
	}
	if strings.Contains(out, "git+: post-receive") {
		t.Fatalf("the post-receive chain reported failures for a push it only spooled:\n%s", out)
	}
	if !waitFor(20*time.Second, func() bool { return hubAndHeads(w, w.origin) == hubAndHeads(w, mirror) }) {
		t.Fatalf("mirror differs:\norigin:\n%s\nmirror:\n%s", hubAndHeads(w, w.origin), hubAndHeads(w, mirror))
	}
	logText := readFile(filepath.Join(w.origin, hooks.LogFile))
	if !strings.Contains(logText, "mirrors to sync [m1 down hole]") {
		t.Fatalf("post-receive log:\n%s", logText)
	}
	if !waitFor(20*time.Second, func() bool {
		st, _, _ := w.gp("", w.origin, "", "mirror", "status")
		return strings.Contains(st, "down http://") && strings.Contains(st, "hole http://") && strings.Count(st, "last error") == 2
	}) {
		st, _, _ := w.gp("", w.origin, "", "mirror", "status")
		t.Fatalf("mirror status does not show the two failing mirrors:\n%s", st)
	}
	probeLog := wake.WakeLog(w.origin, "probe")
	if !waitFor(10*time.Second, func() bool { return strings.Contains(readFile(probeLog), "exit 0") }) {
		t.Fatalf("probe rule did not finish; log:\n%s", readFile(probeLog))
	}
	pl := readFile(probeLog)
	if n := strings.Count(pl, "=== "); n != 2 { // one start line, one exit line
		t.Fatalf("probe ran %d/2 times for one push of two refs:\n%s", n, pl)
	}
	var pid, pgrp, sid int
	var rule, cwd string
	line := pl[strings.LastIndex(pl, "\npid=")+1:]
	if _, err := fmt.Sscanf(line, "pid=%d pgrp=%d sid=%d rule=%s cwd=%s", &pid, &pgrp, &sid, &rule, &cwd); err != nil {
		t.Fatalf("probe output %q: %v", line, err)
	}
	if pgrp != sid || pgrp == syscall.Getpgrp() || rule != "probe" {
		t.Fatalf("probe ran in group %d session %d (test group %d), rule %q: want its own session", pgrp, sid, syscall.Getpgrp(), rule)
	}
	if abs, _ := filepath.EvalSymlinks(w.origin); cwd != abs && cwd != w.origin {
		t.Fatalf("probe ran in %s, want the git dir %s", cwd, w.origin)
	}

	// Webhook: the branch updates arrived, signed.
	if !waitFor(20*time.Second, func() bool { mu.Lock(); defer mu.Unlock(); return len(got) > 0 }) {
		t.Fatalf("the good webhook got nothing")
	}
	mu.Lock()
	if badSig != 0 || len(got) != 1 || len(got[0].Updates) != 2 {
		t.Fatalf("deliveries %+v, bad signatures %d", got, badSig)
	}
	mu.Unlock()

	// A pull request: the webhook gets the event, rule pr wakes, never does not.
	id := w.prOpen("dev", "refs/heads/main", c1, "first")
	if !waitFor(20*time.Second, func() bool { mu.Lock(); defer mu.Unlock(); return len(got) > 1 }) {
		t.Fatalf("the good webhook did not get the pr.opened push")
	}
	mu.Lock()
	last := got[len(got)-1]
	mu.Unlock()
	if len(last.Events) != 1 || last.Events[0].Type != hubrefs.TypePROpened || last.Events[0].Ref != hubrefs.PRRefPrefix+id {
		t.Fatalf("delivery for pr.opened: %+v", last)
	}
	var payload hubrefs.PROpened
	if err := json.Unmarshal(last.Events[0].Payload, &payload); err != nil || payload.ID != id {
		t.Fatalf("event payload %s: %v", last.Events[0].Payload, err)
	}
	if !waitFor(10*time.Second, func() bool { return strings.Contains(readFile(wake.WakeLog(w.origin, "pr")), "exit 0") }) {
		t.Fatalf("rule pr did not run: %s", readFile(wake.WakeLog(w.origin, "pr")))
	}
	if _, err := os.Stat(wake.WakeLog(w.origin, "never")); err == nil {
		t.Fatalf("rule never ran")
	}
	if !waitFor(20*time.Second, func() bool { return hubAndHeads(w, w.origin) == hubAndHeads(w, mirror) }) {
		t.Fatalf("mirror differs after the event:\norigin:\n%s\nmirror:\n%s", hubAndHeads(w, w.origin), hubAndHeads(w, mirror))
	}
}

// A push made by a wake-started process does not wake the same rule, but
// wakes the others.
func TestPostReceiveWakeNoRetrigger(t *testing.T) {
	t.Parallel()
	w := newE2E(t, nil)
	writeJSONFile(t, filepath.Join(w.origin, config.WakeFile), wake.WakeConfig{Rules: []wake.WakeRule{
		// self pushes a new branch into its own repository (through
		// receive-pack, so the hooks run) each time it runs.
		{Name: "self", Ref: "refs/heads/*", On: []string{"*"},
			// It signs its push as the admin: git+ init requires a known pusher.
			Run: []string{"sh", "-c", `git -c gpg.format=ssh -c user.signingKey='` + w.keys["admin"].Path + `' -c gpg.ssh.program='` + w.bin +
				`' push --signed=if-asked -q . "refs/heads/main:refs/heads/w$(date +%s%N)"`}},
		{Name: "other", Ref: "refs/heads/w*", On: []string{"*"}, Run: []string{"sh", "-c", "echo other $GITPLUS_WAKE_RULE"}},
	}})
	c1 := w.commit(nil, map[string]string{"a": "1"}, "c1")
	if out, err := w.push("origin", c1+":refs/heads/main"); err != nil {
		t.Fatalf("push: %v\n%s", err, out)
	}
	selfLog, otherLog := wake.WakeLog(w.origin, "self"), wake.WakeLog(w.origin, "other")
	t0 := time.Now()
	if !waitFor(15*time.Second, func() bool { return strings.Contains(readFile(otherLog), "exit 0") }) {
		t.Fatalf("rule other did not run after self's push\nself:\n%s\nother:\n%s", readFile(selfLog), readFile(otherLog))
	}
	t.Logf("other finished %v after the push\nself:\n%s", time.Since(t0), readFile(selfLog))
	time.Sleep(500 * time.Millisecond) // a re-trigger would have started by now
	if n := strings.Count(readFile(selfLog), "wake self:"); n != 1 {
		t.Fatalf("rule self ran %d times, want 1:\n%s", n, readFile(selfLog))
	}
	if n := strings.Count(readFile(otherLog), "wake other:"); n != 1 {
		t.Fatalf("rule other ran %d times, want 1:\n%s", n, readFile(otherLog))
	}
	if !strings.Contains(readFile(otherLog), "other other") {
		t.Fatalf("other's environment: %s", readFile(otherLog))
	}
	if n := strings.Count(w.git(w.origin, "for-each-ref", "refs/heads/"), "\n") + 1; n != 2 {
		t.Fatalf("want main and one w* branch, got %d:\n%s", n, w.git(w.origin, "for-each-ref", "refs/heads/"))
	}

	// git+ wake by hand: --ref/--event picks what a push would wake;
	// --sweep --rule runs one rule in the foreground with the wake tag.
	out := w.mustGP("", w.origin, "", "wake", "--ref", "refs/heads/wx", "--event", "x", "--dry-run")
	if !strings.Contains(out, "wake self:") || !strings.Contains(out, "wake other:") {
		t.Fatalf("wake --dry-run:\n%s", out)
	}
	out = w.mustGP("", w.origin, "", "wake", "--sweep", "--rule", "other")
	if strings.TrimSpace(out) != "wake other: sh -c echo other $GITPLUS_WAKE_RULE\nother other" {
		t.Fatalf("wake --sweep --rule other:\n%q", out)
	}
	if _, _, code := w.gp("", w.origin, "", "wake", "--sweep", "--rule", "nope"); code != 1 {
		t.Fatalf("wake --rule nope: exit %d, want 1", code)
	}
	if _, _, code := w.gp("", w.origin, "", "wake"); code != 2 {
		t.Fatalf("wake without --sweep or --ref: exit %d, want 2", code)
	}
}
