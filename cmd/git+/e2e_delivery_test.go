package main

// End-to-end tests of after-push delivery (docs/delivery.md): real pushes
// into bare repositories with the hooks installed; post-receive spools, the
// detached delivery worker (a separate process) delivers; the verbs
// webhook deliveries/redeliver and mirror status/sync.

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/gitplus/gitplus/fixtures"
	"github.com/gitplus/gitplus/hooks"
	"github.com/gitplus/gitplus/hooks/config"
	"github.com/gitplus/gitplus/hooks/delivery"
	"github.com/gitplus/gitplus/hooks/install"
)

// stopWorker ends the delivery worker the test's pushes started in gitDir
// (by its process id, read from the worker lock) and waits until no worker
// has run for a while, so the test's directories can be removed.
func stopWorker(t *testing.T, gitDir string) {
	t.Helper()
	quiet := 0
	for i := 0; i < 400 && quiet < 6; i++ {
		if pid := delivery.WorkerPID(gitDir); pid > 0 {
			quiet = 0
			_ = syscall.Kill(pid, syscall.SIGTERM)
		} else {
			quiet++
		}
		time.Sleep(50 * time.Millisecond)
	}
}

type deliveriesOut struct {
	ConfigErrors []string `json:"config_errors"`
	Deliveries   []struct {
		ID         string `json:"id"`
		Hook       string `json:"hook"`
		State      string `json:"state"`
		Attempts   int    `json:"attempts"`
		LastStatus string `json:"last_status"`
		LastError  string `json:"last_error"`
	} `json:"deliveries"`
}

func (w *e2e) deliveries() deliveriesOut {
	w.t.Helper()
	out, errs, code := w.gp("", w.origin, "", "webhook", "deliveries", "--json")
	var d deliveriesOut
	if err := json.Unmarshal([]byte(out), &d); err != nil {
		w.t.Fatalf("webhook deliveries --json (exit %d): %v\n%s\n%s", code, err, out, errs)
	}
	return d
}

type mirrorsOut struct {
	ConfigErrors []string `json:"config_errors"`
	Mirrors      []struct {
		Name        string  `json:"name"`
		Behind      bool    `json:"behind"`
		LastSuccess *string `json:"last_success"`
		LastError   string  `json:"last_error"`
		Failures    int     `json:"failures"`
	} `json:"mirrors"`
}

func (w *e2e) mirrorStatus() mirrorsOut {
	w.t.Helper()
	out, errs, code := w.gp("", w.origin, "", "mirror", "status", "--json")
	var m mirrorsOut
	if err := json.Unmarshal([]byte(out), &m); err != nil {
		w.t.Fatalf("mirror status --json (exit %d): %v\n%s\n%s", code, err, out, errs)
	}
	return m
}

// A receiver that does not answer until the test lets it: the push returns
// while the worker's request is still held open, and the delivery arrives
// once the receiver answers.
func TestDeliverySlowReceiver(t *testing.T) {
	t.Parallel()
	w := newE2E(t, nil)
	t.Cleanup(func() { stopWorker(t, w.origin) })
	entered := make(chan struct{}, 4)
	release := make(chan struct{})
	var once sync.Once
	open := func() { once.Do(func() { close(release) }) }
	t.Cleanup(open)
	var mu sync.Mutex
	var answered []string
	srv := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		entered <- struct{}{}
		<-release
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		defer mu.Unlock()
		if delivery.VerifySignature("k", body, r.Header.Get(delivery.SignatureHeader)) {
			answered = append(answered, r.Header.Get("X-GitPlus-Delivery"))
		}
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(open) // runs before srv.Close
	writeJSONFile(t, filepath.Join(w.origin, config.WebhooksFile), delivery.WebhooksConfig{Hooks: []delivery.Webhook{
		{Name: "slow", URL: srv.URL, Secret: "k", TimeoutSeconds: 120},
	}})
	c1 := w.commit(nil, map[string]string{"a": "1"}, "c1")
	if out, err := w.push("origin", c1+":refs/heads/main"); err != nil {
		t.Fatalf("push: %v\n%s", err, out)
	}
	// The push has returned; the worker's request is now inside the
	// receiver, which has not answered.
	select {
	case <-entered:
	case <-time.After(30 * time.Second):
		t.Fatalf("the worker never reached the receiver; log:\n%s", readFile(filepath.Join(w.origin, delivery.WorkerLog)))
	}
	d := w.deliveries()
	if len(d.Deliveries) != 1 || d.Deliveries[0].State != delivery.StatePending || d.Deliveries[0].Attempts != 0 {
		t.Fatalf("while the receiver holds the request: %+v", d)
	}
	open()
	if !waitFor(30*time.Second, func() bool {
		d = w.deliveries()
		return len(d.Deliveries) == 1 && d.Deliveries[0].State == delivery.StateDelivered
	}) {
		t.Fatalf("not delivered after the receiver answered: %+v", d)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(answered) != 1 || answered[0] != d.Deliveries[0].ID || d.Deliveries[0].Attempts != 1 {
		t.Fatalf("receiver saw %v; record %+v", answered, d.Deliveries[0])
	}
}

// A receiver that fails three times, then succeeds: delivered once, four
// attempts recorded, the same delivery id each time; deliveries to one hook
// arrive in push order.
func TestDeliveryRetries(t *testing.T) {
	t.Parallel()
	w := newE2E(t, nil)
	t.Cleanup(func() { stopWorker(t, w.origin) })
	var mu sync.Mutex
	calls := 0
	var ids, okRefs []string
	srv := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		defer mu.Unlock()
		calls++
		ids = append(ids, r.Header.Get("X-GitPlus-Delivery"))
		if calls <= 3 {
			http.Error(rw, "not yet", http.StatusServiceUnavailable)
			return
		}
		var d delivery.Delivery
		_ = json.Unmarshal(body, &d)
		for _, u := range d.Updates {
			okRefs = append(okRefs, u.Ref)
		}
	}))
	t.Cleanup(srv.Close)
	writeJSONFile(t, filepath.Join(w.origin, config.WebhooksFile), delivery.WebhooksConfig{Hooks: []delivery.Webhook{
		{Name: "flaky", URL: srv.URL, Secret: "k", BackoffSeconds: 0.05, BackoffMaxSeconds: 0.2, RetryWindowSeconds: 60},
	}})
	c1 := w.commit(nil, map[string]string{"a": "1"}, "c1")
	for i, ref := range []string{"refs/heads/main", "refs/heads/second", "refs/heads/third"} {
		if out, err := w.push("origin", c1+":"+ref); err != nil {
			t.Fatalf("push %d: %v\n%s", i, err, out)
		}
	}
	var d deliveriesOut
	if !waitFor(30*time.Second, func() bool {
		d = w.deliveries()
		n := 0
		for _, x := range d.Deliveries {
			if x.State == delivery.StateDelivered {
				n++
			}
		}
		return n == 3
	}) {
		t.Fatalf("deliveries: %+v", d)
	}
	mu.Lock()
	defer mu.Unlock()
	first := d.Deliveries[0]
	if first.Attempts != 4 || first.LastStatus != "200 OK" || first.LastError != "" {
		t.Fatalf("first delivery: %+v", first)
	}
	for i := 0; i < 4; i++ {
		if ids[i] != first.ID {
			t.Fatalf("attempt %d carried delivery id %s, want %s (ids %v)", i+1, ids[i], first.ID, ids)
		}
	}
	if calls != 6 || strings.Join(okRefs, " ") != "refs/heads/main refs/heads/second refs/heads/third" {
		t.Fatalf("receiver: %d calls, delivered in order %v (want 6 calls, push order)", calls, okRefs)
	}
	out := w.mustGP("", w.origin, "", "webhook", "deliveries")
	if !strings.Contains(out, first.ID+" flaky delivered attempts=4") {
		t.Fatalf("webhook deliveries:\n%s", out)
	}
}

// A receiver that never succeeds: the delivery is failed after the window;
// once the receiver is up, redeliver sends it.
func TestDeliveryFailsThenRedeliver(t *testing.T) {
	t.Parallel()
	w := newE2E(t, nil)
	t.Cleanup(func() { stopWorker(t, w.origin) })
	var mu sync.Mutex
	up, got := false, 0
	srv := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		if !up {
			http.Error(rw, "down", http.StatusBadGateway)
			return
		}
		got++
	}))
	t.Cleanup(srv.Close)
	writeJSONFile(t, filepath.Join(w.origin, config.WebhooksFile), delivery.WebhooksConfig{Hooks: []delivery.Webhook{
		{Name: "down", URL: srv.URL, Secret: "k", BackoffSeconds: 0.05, BackoffMaxSeconds: 0.1, RetryWindowSeconds: 0.6},
	}})
	c1 := w.commit(nil, map[string]string{"a": "1"}, "c1")
	if out, err := w.push("origin", c1+":refs/heads/main"); err != nil {
		t.Fatalf("push: %v\n%s", err, out)
	}
	var d deliveriesOut
	if !waitFor(30*time.Second, func() bool {
		d = w.deliveries()
		return len(d.Deliveries) == 1 && d.Deliveries[0].State == delivery.StateFailed
	}) {
		t.Fatalf("not failed after the window: %+v", d)
	}
	f := d.Deliveries[0]
	if f.Attempts < 2 || !strings.Contains(f.LastError, "502") || f.LastStatus != "502 Bad Gateway" {
		t.Fatalf("failed delivery: %+v", f)
	}
	out := w.mustGP("", w.origin, "", "webhook", "deliveries")
	if !strings.Contains(out, f.ID+" down failed") || !strings.Contains(out, "502") {
		t.Fatalf("webhook deliveries:\n%s", out)
	}
	// Still down: redeliver fails and says so.
	if _, errs, code := w.gp("", w.origin, "", "webhook", "redeliver", f.ID); code != 1 || !strings.Contains(errs, "502") {
		t.Fatalf("redeliver while down: exit %d\n%s", code, errs)
	}
	mu.Lock()
	up = true
	mu.Unlock()
	out = w.mustGP("", w.origin, "", "webhook", "redeliver", f.ID)
	if !strings.Contains(out, "delivered "+f.ID) {
		t.Fatalf("redeliver: %s", out)
	}
	d = w.deliveries()
	if d.Deliveries[0].State != delivery.StateDelivered || d.Deliveries[0].Attempts != f.Attempts+2 {
		t.Fatalf("after redeliver: %+v (was %+v)", d.Deliveries[0], f)
	}
	mu.Lock()
	defer mu.Unlock()
	if got != 1 {
		t.Fatalf("receiver got %d deliveries, want 1", got)
	}
	if _, _, code := w.gp("", w.origin, "", "webhook", "redeliver", "0123456789abcdef012345"); code != 1 {
		t.Fatalf("redeliver of an unknown id: exit %d, want 1", code)
	}
}

// A mirror made unreachable (its directory renamed) during 20 pushes, then
// restored, converges on the primary by itself.
func TestDeliveryMirrorOutage(t *testing.T) {
	t.Parallel()
	w := newE2E(t, map[string][]string{"dev": {"hub.pr"}})
	t.Cleanup(func() { stopWorker(t, w.origin) })
	dir := t.TempDir()
	mirror := filepath.Join(dir, "mirror.git")
	w.git(dir, "init", "-q", "--bare", mirror)
	writeJSONFile(t, filepath.Join(w.origin, config.RemotesFile), delivery.RemotesConfig{Remotes: []delivery.Remote{
		{Name: "m", URL: mirror, BackoffSeconds: 0.05, BackoffMaxSeconds: 0.3},
	}})
	c := w.commit(nil, map[string]string{"a": "0"}, "c0")
	if out, err := w.push("origin", c+":refs/heads/main"); err != nil {
		t.Fatalf("push: %v\n%s", err, out)
	}
	if !waitFor(30*time.Second, func() bool { return hubAndHeads(w, w.origin) == hubAndHeads(w, mirror) }) {
		t.Fatalf("mirror did not follow the first push")
	}
	if err := os.Rename(mirror, mirror+".away"); err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= 20; i++ {
		c = w.commit([]string{c}, map[string]string{"a": fmt.Sprint(i)}, fmt.Sprint("c", i))
		if i%5 == 0 {
			w.prOpen("dev", "refs/heads/main", c, fmt.Sprint("pr ", i)) // records too
		}
		if out, err := w.push("origin", c+":refs/heads/main", c+":refs/heads/b"+fmt.Sprint(i%3)); err != nil {
			t.Fatalf("push %d: %v\n%s", i, err, out)
		}
	}
	var m mirrorsOut
	if !waitFor(30*time.Second, func() bool {
		m = w.mirrorStatus()
		return len(m.Mirrors) == 1 && m.Mirrors[0].Behind && m.Mirrors[0].LastError != ""
	}) {
		t.Fatalf("mirror status during the outage: %+v", m)
	}
	if out := w.mustGP("", w.origin, "", "mirror", "status"); !strings.Contains(out, "m "+mirror+": behind") {
		t.Fatalf("mirror status:\n%s", out)
	}
	if err := os.Rename(mirror+".away", mirror); err != nil {
		t.Fatal(err)
	}
	// No push, no verb: the worker's retries bring it back in step.
	if !waitFor(30*time.Second, func() bool { return hubAndHeads(w, w.origin) == hubAndHeads(w, mirror) }) {
		t.Fatalf("mirror did not converge:\norigin:\n%s\nmirror:\n%s", hubAndHeads(w, w.origin), hubAndHeads(w, mirror))
	}
	if !waitFor(10*time.Second, func() bool { m = w.mirrorStatus(); return !m.Mirrors[0].Behind }) {
		t.Fatalf("mirror status after convergence: %+v", m)
	}
	if m.Mirrors[0].Failures != 0 || m.Mirrors[0].LastSuccess == nil {
		t.Fatalf("mirror status after convergence: %+v", m)
	}
	if n := strings.Count(hubAndHeads(w, mirror), "refs/hub/pr/"); n != 4 {
		t.Fatalf("mirror holds %d pull request records, want 4", n)
	}
	// mirror sync by hand: an in-step mirror syncs again, fine; an unknown
	// name is an error.
	if out := w.mustGP("", w.origin, "", "mirror", "sync", "m"); !strings.Contains(out, "synced m") {
		t.Fatalf("mirror sync m: %s", out)
	}
	if _, errs, code := w.gp("", w.origin, "", "mirror", "sync", "nope"); code != 1 || !strings.Contains(errs, `no mirror "nope"`) {
		t.Fatalf("mirror sync nope: exit %d: %s", code, errs)
	}
}

// forceLeanHooks rewrites the origin's hook scripts to run the lean
// git+hook binary, as `git+ hook install` does beside a git+hook built from
// the same clean source (tests build from a work tree, so it would not).
func (w *e2e) forceLeanHooks(t *testing.T) {
	t.Helper()
	w.forcePreReceive(t, true)
	script := "#!/bin/sh\n" + install.Marker + " (rewritten by the test to run the lean post-receive)\n" +
		"exec '" + fixtures.HookBinary(t) + "' post-receive '" + w.bin + "'\n"
	if err := os.WriteFile(filepath.Join(w.origin, "hooks", "post-receive"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
}

// Ten concurrent pushes (separate git processes, so ten post-receive
// processes spooling at once; the lean post-receive of git+hook) with a
// mirror: one sync at a time, none left failed, the mirror identical at the
// end.
func TestDeliveryConcurrentPushes(t *testing.T) {
	t.Parallel()
	w := newE2E(t, nil)
	w.forceLeanHooks(t)
	t.Cleanup(func() { stopWorker(t, w.origin) })
	dir := t.TempDir()
	mirror := filepath.Join(dir, "mirror.git")
	w.git(dir, "init", "-q", "--bare", mirror)
	writeJSONFile(t, filepath.Join(w.origin, config.RemotesFile), delivery.RemotesConfig{Remotes: []delivery.Remote{{Name: "m", URL: mirror}}})
	maintainBeside(t, w.origin, mirror)
	base := w.commit(nil, map[string]string{"a": "0"}, "base")
	commits := make([]string, 10)
	for i := range commits {
		commits[i] = w.commit([]string{base}, map[string]string{"f": fmt.Sprint(i)}, fmt.Sprint("c", i))
	}
	var wg sync.WaitGroup
	errs := make([]error, 10)
	outs := make([]string, 10)
	for i := range commits {
		wg.Add(1)
		go func() {
			defer wg.Done()
			o, e, err := w.gitRun(w.work, "", nil, "push", w.origin, commits[i]+":refs/heads/c"+fmt.Sprint(i))
			outs[i], errs[i] = o+e, err
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("push %d: %v\n%s", i, err, outs[i])
		}
	}
	if !waitFor(30*time.Second, func() bool { return hubAndHeads(w, w.origin) == hubAndHeads(w, mirror) }) {
		t.Fatalf("mirror differs:\norigin:\n%s\nmirror:\n%s", hubAndHeads(w, w.origin), hubAndHeads(w, mirror))
	}
	var m mirrorsOut
	if !waitFor(10*time.Second, func() bool { m = w.mirrorStatus(); return !m.Mirrors[0].Behind }) {
		t.Fatalf("mirror still behind: %+v", m)
	}
	if m.Mirrors[0].LastError != "" || m.Mirrors[0].Failures != 0 {
		t.Fatalf("a sync failed: %+v\nlog:\n%s", m, readFile(filepath.Join(w.origin, delivery.WorkerLog)))
	}
	if strings.Count(readFile(filepath.Join(w.origin, hooks.LogFile)), "mirrors to sync [m]") != 10 {
		t.Fatalf("post-receive log:\n%s", readFile(filepath.Join(w.origin, hooks.LogFile)))
	}
}

// Bad configuration: the push succeeds; the error names file, line and
// column, in the pusher's output and in the status verbs.
func TestDeliveryBadConfig(t *testing.T) {
	t.Parallel()
	w := newE2E(t, nil)
	t.Cleanup(func() { stopWorker(t, w.origin) })
	if err := os.MkdirAll(filepath.Join(w.origin, "hub"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(w.origin, config.WebhooksFile), []byte("{\"hooks\": [\n  {\"url\": \"http://127.0.0.1:1/x\", \"secret\": \"s\",\n   \"timout_seconds\": 3}\n]}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(w.origin, config.RemotesFile), []byte("{\"remotes\": [\n  {\"name\": \"m\", \"url\": \"--upload-pack=evil\"}]}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	c1 := w.commit(nil, map[string]string{"a": "1"}, "c1")
	out, err := w.push("origin", c1+":refs/heads/main")
	if err != nil {
		t.Fatalf("push with a bad configuration failed: %v\n%s", err, out)
	}
	hookPos := config.WebhooksFile + ":3:4: json: unknown field \"timout_seconds\""
	remotePos := config.RemotesFile + ":2:24: remote 0: url \"--upload-pack=evil\" starts with '-'"
	if !strings.Contains(out, hookPos) || !strings.Contains(out, remotePos) {
		t.Fatalf("push output does not name the errors (%q, %q):\n%s", hookPos, remotePos, out)
	}
	d := w.deliveries()
	if len(d.ConfigErrors) != 1 || !strings.Contains(d.ConfigErrors[0], hookPos) {
		t.Fatalf("webhook deliveries: %+v", d)
	}
	if _, _, code := w.gp("", w.origin, "", "webhook", "deliveries"); code != 1 {
		t.Fatalf("webhook deliveries with a bad file: exit %d, want 1", code)
	}
	m := w.mirrorStatus()
	if len(m.ConfigErrors) != 1 || !strings.Contains(m.ConfigErrors[0], remotePos) {
		t.Fatalf("mirror status: %+v", m)
	}
	if _, errs, code := w.gp("", w.origin, "", "mirror", "sync"); code != 1 || !strings.Contains(errs, remotePos) {
		t.Fatalf("mirror sync with a bad file: exit %d\n%s", code, errs)
	}
}

// A verb waits, bounded, for its own deliveries at its end: when pr merge
// returns, the mirror already holds the landing and its pr.merged and the
// webhook has it; a black-holed webhook is reported as undelivered once
// the wait ($GITPLUS_DELIVERY_WAIT) is over, and the verb still succeeds.
func TestDeliveryVerbWaits(t *testing.T) {
	t.Parallel()
	w := newE2E(t, map[string][]string{"dev": {"hub.pr", "source.push"}})
	t.Cleanup(func() { stopWorker(t, w.origin) })
	var mu sync.Mutex
	var types []string
	srv := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var d delivery.Delivery
		_ = json.Unmarshal(body, &d)
		mu.Lock()
		defer mu.Unlock()
		for _, e := range d.Events {
			types = append(types, e.Type)
		}
	}))
	t.Cleanup(srv.Close)
	dir := t.TempDir()
	mirror := filepath.Join(dir, "mirror.git")
	w.git(dir, "init", "-q", "--bare", mirror)
	writeJSONFile(t, filepath.Join(w.origin, config.RemotesFile), delivery.RemotesConfig{Remotes: []delivery.Remote{{Name: "m", URL: mirror}}})
	writeJSONFile(t, filepath.Join(w.origin, config.WebhooksFile), delivery.WebhooksConfig{Hooks: []delivery.Webhook{{Name: "good", URL: srv.URL, Secret: "k"}}})
	// The clone names its server by a relative path, as `git clone
	// ../srv.git` records it: relative to the work tree, where git resolves
	// it (before, the verbs resolved it from .git, found no server on this
	// machine and waited for nothing).
	rel, err := filepath.Rel(w.work, w.origin)
	if err != nil {
		t.Fatal(err)
	}
	w.git(w.work, "config", "remote.origin.url", rel)
	c1 := w.commit(nil, map[string]string{"a": "1"}, "c1")
	if out, err := w.push("origin", c1+":refs/heads/main"); err != nil {
		t.Fatalf("push: %v\n%s", err, out)
	}
	c2 := w.commit([]string{c1}, map[string]string{"a": "2"}, "c2")
	w.git(w.work, "push", "-q", "origin", c2+":refs/heads/feature")
	id := e2eLastLine(w.mustGP("dev", w.work, "", "pr", "open", "--base", "main", "--head", c2, "--title", "A"))
	out := w.mustGP("dev", w.work, "", "pr", "merge", id, "--remote", "origin")
	if strings.Contains(out, "undelivered") {
		t.Fatalf("pr merge reports undelivered deliveries to healthy receivers:\n%s", out)
	}
	// No waiting here: the verb did.
	if a, b := hubAndHeads(w, w.origin), hubAndHeads(w, mirror); a != b {
		t.Fatalf("pr merge returned before its mirror sync:\norigin:\n%s\nmirror:\n%s", a, b)
	}
	mu.Lock()
	if len(types) == 0 || types[len(types)-1] != "pr.merged" {
		t.Fatalf("pr merge returned before its webhook delivery (event types so far %v)", types)
	}
	mu.Unlock()

	// A black-holed webhook: reported, bounded, not a failure.
	writeJSONFile(t, filepath.Join(w.origin, config.WebhooksFile), delivery.WebhooksConfig{Hooks: []delivery.Webhook{
		{Name: "hole", URL: "http://" + blackHole(t) + "/hook", Secret: "k", TimeoutSeconds: 60}}})
	c3 := w.commit([]string{c2}, map[string]string{"a": "3"}, "c3")
	w.git(w.work, "push", "-q", "origin", c3+":refs/heads/feature3")
	id3 := e2eLastLine(w.mustGP("dev", w.work, "", "pr", "open", "--base", "main", "--head", c3, "--title", "B"))
	w.env = append(w.env, "GITPLUS_DELIVERY_WAIT=1s")
	out, errs, code := w.gp("dev", w.work, "", "pr", "merge", id3, "--remote", "origin", "--json")
	var rep struct {
		Result      string   `json:"result"`
		Undelivered []string `json:"undelivered"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil || code != 0 {
		t.Fatalf("pr merge --json: exit %d, %v\n%s\n%s", code, err, out, errs)
	}
	if rep.Result != "merged" || len(rep.Undelivered) == 0 || !strings.HasPrefix(rep.Undelivered[0], "webhook hole delivery ") || !strings.Contains(strings.Join(rep.Undelivered, "\n"), "pending") {
		t.Fatalf("pr merge with a black-holed webhook: %+v", rep)
	}
}

// The worker killed (SIGKILL) in the middle of a delivery: the record is
// whole and still pending, the lock died with the worker, and the next push
// starts a worker that delivers it (at least once: every request carries
// the same delivery id), in order before the next push's delivery.
func TestDeliveryWorkerKilled(t *testing.T) {
	t.Parallel()
	w := newE2E(t, nil)
	entered := make(chan struct{}, 16)
	block := true
	var mu sync.Mutex
	var seen []string // delivery ids, in the order answered 200
	srv := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		mu.Lock()
		b := block
		mu.Unlock()
		if b {
			_, _ = io.ReadAll(r.Body) // the server notices a client gone only once the body is read
			entered <- struct{}{}
			<-r.Context().Done() // held until the client goes away
			return
		}
		mu.Lock()
		defer mu.Unlock()
		seen = append(seen, r.Header.Get("X-GitPlus-Delivery"))
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(func() { stopWorker(t, w.origin) }) // before srv.Close: a held request ends with its worker
	writeJSONFile(t, filepath.Join(w.origin, config.WebhooksFile), delivery.WebhooksConfig{Hooks: []delivery.Webhook{
		{Name: "h", URL: srv.URL, Secret: "k", TimeoutSeconds: 120}}})
	c1 := w.commit(nil, map[string]string{"a": "1"}, "c1")
	if out, err := w.push("origin", c1+":refs/heads/main"); err != nil {
		t.Fatalf("push: %v\n%s", err, out)
	}
	select {
	case <-entered:
	case <-time.After(30 * time.Second):
		t.Fatalf("the worker never reached the receiver")
	}
	pid := delivery.WorkerPID(w.origin)
	if pid <= 0 {
		t.Fatalf("no worker pid while a delivery is in flight")
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	if !waitFor(10*time.Second, func() bool { return !delivery.WorkerRunning(w.origin) }) {
		t.Fatalf("the worker lock outlived the killed worker")
	}
	d := w.deliveries()
	if len(d.Deliveries) != 1 || d.Deliveries[0].State != delivery.StatePending {
		t.Fatalf("after the kill: %+v", d)
	}
	first := d.Deliveries[0].ID
	mu.Lock()
	block = false
	mu.Unlock()
	if out, err := w.push("origin", c1+":refs/heads/second"); err != nil {
		t.Fatalf("push: %v\n%s", err, out)
	}
	if !waitFor(30*time.Second, func() bool {
		d = w.deliveries()
		return len(d.Deliveries) == 2 && d.Deliveries[0].State == delivery.StateDelivered && d.Deliveries[1].State == delivery.StateDelivered
	}) {
		t.Fatalf("not delivered after a new worker started: %+v", d)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(seen) != 2 || seen[0] != first || seen[1] != d.Deliveries[1].ID {
		t.Fatalf("receiver answered %v, want [%s %s]", seen, first, d.Deliveries[1].ID)
	}
}
