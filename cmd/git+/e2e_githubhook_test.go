package main

// GitHub-format webhooks (docs/delivery.md "GitHub-style deliveries")
// received by a real GitHub consumer: Debian's `webhook` daemon
// (adnanh/webhook) with a rule on X-Hub-Signature-256.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gitplus/gitplus/hooks/config"
	"github.com/gitplus/gitplus/hooks/delivery"
)

func TestGitHubWebhookToAdnanhWebhook(t *testing.T) {
	bin, err := exec.LookPath("webhook")
	if err != nil {
		t.Skip("SKIP: the webhook daemon (Debian package webhook, adnanh/webhook) is not installed: apt-get install webhook")
	}
	w := newE2E(t, nil)
	t.Cleanup(func() { stopWorker(t, w.origin) })
	dir := t.TempDir()
	got := filepath.Join(dir, "triggered")
	script := filepath.Join(dir, "on-push.sh")
	if err := os.WriteFile(script, []byte("#!/bin/sh\necho \"$1 $2 $3 $4\" >> '"+got+"'\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	const secret = "s3cret"
	cfg := []map[string]any{{
		"id": "gitplus", "execute-command": script, "include-command-output-in-response": true,
		"pass-arguments-to-command": []map[string]string{
			{"source": "header", "name": "X-GitHub-Event"}, {"source": "payload", "name": "ref"},
			{"source": "payload", "name": "after"}, {"source": "payload", "name": "head_commit.id"},
		},
		"trigger-rule": map[string]any{"and": []any{
			map[string]any{"match": map[string]any{"type": "payload-hmac-sha256", "secret": secret,
				"parameter": map[string]string{"source": "header", "name": "X-Hub-Signature-256"}}},
			map[string]any{"match": map[string]any{"type": "value", "value": "push",
				"parameter": map[string]string{"source": "header", "name": "X-GitHub-Event"}}},
			map[string]any{"match": map[string]any{"type": "regex", "regex": "^refs/heads/queue/",
				"parameter": map[string]string{"source": "payload", "name": "ref"}}},
		}},
	}}
	writeJSONFile(t, filepath.Join(dir, "hooks.json"), cfg)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	var log lockedBuffer // written by the daemon's output copier while the test reads it
	daemon := exec.Command(bin, "-hooks", filepath.Join(dir, "hooks.json"), "-ip", "127.0.0.1", "-port", fmt.Sprint(port), "-verbose")
	daemon.Stdout, daemon.Stderr = &log, &log
	if err := daemon.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = daemon.Process.Kill(); _ = daemon.Wait() })
	url := fmt.Sprintf("http://127.0.0.1:%d/hooks/gitplus", port)
	if !waitFor(20*time.Second, func() bool {
		c, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", port))
		if err == nil {
			c.Close()
		}
		return err == nil
	}) {
		t.Fatalf("the webhook daemon did not listen:\n%s", log.String())
	}
	writeJSONFile(t, filepath.Join(w.origin, config.WebhooksFile), delivery.WebhooksConfig{Hooks: []delivery.Webhook{
		{Name: "gh", URL: url, Secret: secret, Format: delivery.FormatGitHub, Events: []string{"push"}},
	}})

	c1 := w.commit(nil, map[string]string{"a": "1"}, "c1")
	c2 := w.commit([]string{c1}, map[string]string{"a": "2"}, "c2")
	if out, err := w.push("origin", c1+":refs/heads/main", c2+":refs/heads/queue/main/1"); err != nil {
		t.Fatalf("push: %v\n%s", err, out)
	}
	want := "push refs/heads/queue/main/1 " + c2 + " " + c2
	if !waitFor(60*time.Second, func() bool { return strings.Contains(readFile(got), want) }) {
		t.Fatalf("the webhook daemon did not run its command with %q; ran:\n%s\ndaemon log:\n%s\ndelivery log:\n%s",
			want, readFile(got), log.String(), readFile(filepath.Join(w.origin, delivery.WorkerLog)))
	}
	// main was delivered too (the daemon answers 200 without running the
	// command: its rule asks for refs/heads/queue/).
	if strings.Contains(readFile(got), "refs/heads/main") {
		t.Fatalf("the rule should not run for main:\n%s", readFile(got))
	}

	// The delivery record holds the exact body sent: replayed unchanged it
	// runs the command again; tampered (a different "after"), the daemon
	// refuses it for its signature and runs nothing.
	// The daemon runs its command before it answers, and the worker marks
	// the delivery done only after the answer: wait for that.
	var body []byte
	var ents []string
	waitFor(60*time.Second, func() bool {
		ents, _ = filepath.Glob(filepath.Join(w.origin, delivery.SpoolDir, "webhooks", "*", "*.json"))
		for _, p := range ents {
			var j delivery.WebhookJob
			if b, err := os.ReadFile(p); err == nil && json.Unmarshal(b, &j) == nil && j.Format == delivery.FormatGitHub &&
				j.Updates[0].Ref == "refs/heads/queue/main/1" && j.State == delivery.StateDelivered {
				body = j.Body
			}
		}
		return body != nil
	})
	if body == nil {
		t.Fatalf("no delivered GitHub delivery for the candidate in the spool: %v", ents)
	}
	var p delivery.GitHubPush
	if err := json.Unmarshal(body, &p); err != nil {
		t.Fatal(err)
	}
	if !p.Created || p.Deleted || p.Forced || p.Before != strings.Repeat("0", 40) || p.After != c2 ||
		len(p.Commits) != 1 || p.Commits[0].ID != c2 || p.HeadCommit == nil || p.HeadCommit.ID != c2 ||
		len(p.HeadCommit.Modified) != 1 || p.HeadCommit.Modified[0] != "a" || p.Repository.Name != "origin.git" {
		t.Fatalf("push payload: %s", body)
	}
	send := func(b []byte, sig string) int {
		req, _ := http.NewRequest(http.MethodPost, url, bytes.NewReader(b))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set(delivery.GitHubEventHeader, "push")
		req.Header.Set(delivery.GitHubDeliveryHeader, "replay")
		req.Header.Set(delivery.GitHubSignatureHeader, sig)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	before := strings.Count(readFile(got), "\n")
	if code := send(body, delivery.Sign(secret, body)); code != http.StatusOK {
		t.Fatalf("replaying the delivery: %d\n%s", code, log.String())
	}
	if n := strings.Count(readFile(got), "\n"); n != before+1 {
		t.Fatalf("the replay did not run the command (%d lines, had %d)", n, before)
	}
	tampered := bytes.Replace(body, []byte(`"after":"`+c2), []byte(`"after":"`+c1), 1)
	if bytes.Equal(tampered, body) {
		t.Fatal("tampering changed nothing")
	}
	send(tampered, delivery.Sign(secret, body))
	// The daemon logs a request's outcome as it goes, not before answering.
	if !waitFor(20*time.Second, func() bool { return strings.Contains(log.String(), "invalid payload signature") }) {
		t.Errorf("the daemon did not report the tampered body's signature:\n%s", log.String())
	}
	if n := strings.Count(readFile(got), "\n"); n != before+1 || strings.Contains(readFile(got), c1) {
		t.Fatalf("the tampered body ran the command:\n%s", readFile(got))
	}
}

// lockedBuffer is a bytes.Buffer safe to write from one goroutine (a
// process's output copier) while another reads it.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
