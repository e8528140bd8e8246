package delivery

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gitplus/gitplus/fixtures"
	"github.com/gitplus/gitplus/hooks/config"
	"github.com/gitplus/gitplus/hooks/wake"
)

// testSend is a Sender for these tests (the real one is
// Via(webhookpost.Post)).
func testSend(ctx context.Context, h Webhook, id string, body []byte) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, h.URL, strings.NewReader(string(body)))
	if err != nil {
		return "", err
	}
	req.Header.Set("X-GitPlus-Delivery", id)
	req.Header.Set(SignatureHeader, Sign(h.Secret, body))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return resp.Status, errors.New("answered " + resp.Status)
	}
	return resp.Status, nil
}

func TestConfigErrorPositions(t *testing.T) {
	for _, tc := range []struct {
		name, file, text, want string
	}{
		{"syntax", config.WebhooksFile, "{\"hooks\": [\n  {\"url\": \"http://x\",,}\n]}", config.WebhooksFile + ":2:22: invalid character ','"},
		{"unknown field", config.WebhooksFile, "{\"hooks\": [{\"url\": \"http://x\", \"secret\": \"s\",\n\t\"attempt\": 2}]}", config.WebhooksFile + ":2:2: json: unknown field \"attempt\""},
		{"unknown field also a value", config.RemotesFile, "{\"remotes\": [{\"url\": \"nam\",\n \"nam\": 1}]}", config.RemotesFile + ":2:2: json: unknown field \"nam\""},
		{"type", config.RemotesFile, "{\"remotes\": [{\"url\": 5}]}", config.RemotesFile + ":1:22: json: cannot unmarshal number"},
		{"webhook scheme", config.WebhooksFile, "{\"hooks\": [\n {\"url\": \"ftp://x/y\", \"secret\": \"s\"}]}", config.WebhooksFile + ":2:10: hook 0: url \"ftp://x/y\" is not an http:// or https:// URL with a host"},
		{"webhook no host", config.WebhooksFile, "{\"hooks\": [{\"url\": \"http:///y\", \"secret\": \"s\"}]}", config.WebhooksFile + ":1:20: hook 0: url"},
		{"no secret", config.WebhooksFile, "{\"hooks\": [{\"url\": \"http://h/y\"}]}", "has no secret"},
		{"mirror option", config.RemotesFile, "{\"remotes\": [{\"url\": \"-oProxy\"}]}", config.RemotesFile + ":1:22: remote 0: url \"-oProxy\" starts with '-'"},
		{"duplicate mirror", config.RemotesFile, "{\"remotes\": [{\"name\": \"a\", \"url\": \"/x\"}, {\"name\": \"a\", \"url\": \"/y\"}]}", "two remotes are named \"a\""},
		{"two values", config.WakeFile, "{\"rules\": []} {}", config.WakeFile + ":1:15: more than one JSON value"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			fixtures.WriteFile(t, dir, tc.file, tc.text)
			var err error
			switch tc.file {
			case config.WebhooksFile:
				_, err = LoadWebhooks(dir)
			case config.RemotesFile:
				_, err = LoadRemotes(dir)
			default:
				_, err = wake.LoadWake(dir)
			}
			if err == nil || !errors.Is(err, config.ErrConfig) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v\nwant an ErrConfig containing %q", err, tc.want)
			}
		})
	}
}

func TestBackoff(t *testing.T) {
	s, m := time.Second, 10*time.Second
	for _, tc := range []struct {
		n    int
		want time.Duration
	}{{1, s}, {2, 2 * s}, {3, 4 * s}, {4, 8 * s}, {5, m}, {60, m}} {
		if got := Backoff(tc.n, s, m); got != tc.want {
			t.Errorf("Backoff(%d) = %v, want %v", tc.n, got, tc.want)
		}
	}
}

// FuzzLoadConfig: any bytes in the two delivery files load or fail with an
// ErrConfig naming a position inside the file, never panic.
func FuzzLoadConfig(f *testing.F) {
	f.Add([]byte(`{"hooks":[{"url":"http://h/x","secret":"s"}]}`))
	f.Add([]byte(`{"remotes":[{"name":"m","url":"/srv/m.git"}]}`))
	f.Add([]byte("{\n\"hooks\": [{\"x\": 1}]}"))
	f.Add([]byte(`{"remotes":[{"url":"-x"}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		dir := t.TempDir()
		for _, name := range []string{config.WebhooksFile, config.RemotesFile} {
			fixtures.WriteFile(t, dir, name, string(data))
		}
		check := func(err error, name string) {
			if err == nil {
				return
			}
			if !errors.Is(err, config.ErrConfig) {
				t.Fatalf("%s: error without ErrConfig: %v", name, err)
			}
			if !strings.Contains(err.Error(), filepath.Join(dir, name)+":") {
				t.Fatalf("%s: error does not name the file and position: %v", name, err)
			}
		}
		_, err := LoadWebhooks(dir)
		check(err, config.WebhooksFile)
		_, err = LoadRemotes(dir)
		check(err, config.RemotesFile)
	})
}

func TestSpoolRecords(t *testing.T) {
	dir := t.TempDir()
	now := time.Now()
	var ids []string
	for i := 0; i < 5; i++ {
		j := &WebhookJob{ID: newJobID(now.Add(time.Duration(i))), Hook: "h", Created: now, State: StatePending, Body: json.RawMessage(`{"n":1}`)}
		if err := spoolJob(dir, j); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, j.ID)
	}
	// Debris of a crash: a temporary file and a record settled but not yet
	// removed from pending.
	if err := os.WriteFile(spoolPath(dir, "webhooks", "pending", ".tmp-123"), []byte("{"), 0o644); err != nil {
		t.Fatal(err)
	}
	j, err := FindDelivery(dir, ids[2])
	if err != nil {
		t.Fatal(err)
	}
	j.State = StateFailed
	b, _ := json.Marshal(j)
	if err := writeAtomicSync(spoolPath(dir, "webhooks", "done", j.ID+".json"), b); err != nil {
		t.Fatal(err)
	}
	all, errs := Deliveries(dir)
	if len(errs) != 0 || len(all) != 5 {
		t.Fatalf("deliveries %d, errors %v", len(all), errs)
	}
	for i, j := range all {
		if j.ID != ids[i] {
			t.Fatalf("order: %d is %s, want %s", i, j.ID, ids[i])
		}
		if want := map[bool]string{true: StateFailed, false: StatePending}[i == 2]; j.State != want {
			t.Fatalf("%s: state %s, want %s", j.ID, j.State, want)
		}
	}
	if string(all[0].Body) != `{"n":1}` {
		t.Fatalf("body %s", all[0].Body)
	}
	if _, err := FindDelivery(dir, "zz"); !errors.Is(err, ErrNoDelivery) {
		t.Fatalf("FindDelivery(zz): %v", err)
	}
	if _, err := FindDelivery(dir, strings.Repeat("0", 22)); !errors.Is(err, ErrNoDelivery) {
		t.Fatalf("FindDelivery(000…): %v", err)
	}
}

// The worker, in this process: each hook's deliveries in order even when
// the first is retried, the hooks independent of each other, an orphan
// delivery failed, then the worker exits with nothing left.
func TestWorkerOrderAndRetry(t *testing.T) {
	dir := t.TempDir()
	var mu sync.Mutex
	var seq []string
	fails := 2
	srv := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		defer mu.Unlock()
		if !VerifySignature("k-"+r.URL.Path[1:], body, r.Header.Get(SignatureHeader)) {
			http.Error(rw, "bad signature", 400)
			return
		}
		if r.URL.Path == "/a" && fails > 0 {
			fails--
			http.Error(rw, "later", 500)
			return
		}
		seq = append(seq, r.URL.Path+":"+string(body))
	}))
	defer srv.Close()
	fixtures.WriteFile(t, dir, config.WebhooksFile, `{"hooks":[
		{"name":"a","url":"`+srv.URL+`/a","secret":"k-a","backoff_seconds":0.02,"backoff_max_seconds":0.05},
		{"name":"b","url":"`+srv.URL+`/b","secret":"k-b"}]}`)
	now := time.Now()
	for i, hook := range []string{"a", "b", "a", "gone", "b", "a"} {
		j := &WebhookJob{ID: newJobID(now.Add(time.Duration(i))), Hook: hook, Created: now, State: StatePending,
			Body: json.RawMessage(`"` + hook + string(rune('0'+i)) + `"`)}
		if err := spoolJob(dir, j); err != nil {
			t.Fatal(err)
		}
	}
	w := &Worker{GitDir: dir, Tick: 10 * time.Millisecond, Send: testSend}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := w.Run(ctx); err != nil {
		t.Fatal(err)
	}
	var a, b []string
	for _, s := range seq {
		if strings.HasPrefix(s, "/a") {
			a = append(a, s)
		} else {
			b = append(b, s)
		}
	}
	if strings.Join(a, " ") != `/a:"a0" /a:"a2" /a:"a5"` || strings.Join(b, " ") != `/b:"b1" /b:"b4"` {
		t.Fatalf("order: a %v, b %v", a, b)
	}
	all, _ := Deliveries(dir)
	for _, j := range all {
		want, attempts := StateDelivered, 1
		switch {
		case j.Hook == "gone":
			want, attempts = StateFailed, 0
		case string(j.Body) == `"a0"`:
			attempts = 3
		}
		if j.State != want || j.Attempts != attempts {
			t.Errorf("%s (%s): %s after %d attempts, want %s after %d", j.ID, j.Hook, j.State, j.Attempts, want, attempts)
		}
	}
	if WorkerRunning(dir) {
		t.Fatalf("the worker lock is still held after Run returned")
	}
}

// A second worker returns at once while one holds the lock.
func TestWorkerSingle(t *testing.T) {
	dir := t.TempDir()
	f, err := lockFile(workerLockPath(dir), false)
	if err != nil || f == nil {
		t.Fatalf("lock: %v", err)
	}
	defer f.Close()
	spoolJob(dir, &WebhookJob{ID: newJobID(time.Now()), Hook: "h", State: StatePending, Body: json.RawMessage(`1`)})
	if err := (&Worker{GitDir: dir}).Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	if js, _ := listJobs(dir, StatePending); len(js) != 1 {
		t.Fatalf("a second worker touched the spool: %d pending", len(js))
	}
	if !WorkerRunning(dir) {
		t.Fatalf("WorkerRunning is false while the lock is held")
	}
}

func gitT(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

// Mirrors coalesce: changes recorded while a sync runs are not marked
// synced by it; a sync that starts after them covers all of them; one
// that finds nothing behind does nothing. Changes recorded from several
// goroutines at once are all counted.
func TestMirrorCoalesce(t *testing.T) {
	root := t.TempDir()
	src, dst := filepath.Join(root, "src.git"), filepath.Join(root, "dst.git")
	gitT(t, root, "init", "-q", "--bare", src)
	gitT(t, root, "init", "-q", "--bare", dst)
	work := filepath.Join(root, "w")
	gitT(t, root, "init", "-q", work)
	gitT(t, work, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "--allow-empty", "-m", "x")
	gitT(t, work, "push", "-q", src, "HEAD:refs/heads/main")
	r := Remote{Name: "m", URL: dst}
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() { defer wg.Done(); _ = RequestMirror(src, r, time.Now()) }()
	}
	wg.Wait()
	st, _ := ReadMirror(src, r)
	if st.Requested != 8 || !st.Behind() {
		t.Fatalf("after 8 changes: %+v", st)
	}
	st, err := SyncMirror(context.Background(), src, r, os.Environ(), false)
	if err != nil || st.Behind() || st.Synced != 8 || st.Syncs != 1 {
		t.Fatalf("sync: %+v, %v", st, err)
	}
	if gitT(t, dst, "rev-parse", "refs/heads/main") != gitT(t, src, "rev-parse", "refs/heads/main") {
		t.Fatalf("mirror does not hold main")
	}
	st, _ = SyncMirror(context.Background(), src, r, os.Environ(), false)
	if st.Syncs != 1 {
		t.Fatalf("a sync with nothing behind ran: %+v", st)
	}
	// A failing sync records the error and a backoff, and stays behind.
	_ = RequestMirror(src, r, time.Now())
	bad := Remote{Name: "m", URL: filepath.Join(root, "absent.git"), BackoffSeconds: 30}
	st, err = SyncMirror(context.Background(), src, bad, os.Environ(), false)
	if err == nil || !errors.Is(err, ErrMirror) || !st.Behind() || st.Failures != 1 || st.LastError == "" || time.Until(st.NextAttempt) < 20*time.Second {
		t.Fatalf("failing sync: %+v, %v", st, err)
	}
}

// DeliveriesSince reads only what was recorded from its time on.
func TestDeliveriesSince(t *testing.T) {
	dir := t.TempDir()
	t0 := time.Now()
	for i := 0; i < 4; i++ {
		at := t0.Add(time.Duration(i) * time.Second)
		if err := spoolJob(dir, &WebhookJob{ID: newJobID(at), Hook: "h", Created: at, State: StatePending, Body: json.RawMessage(`1`)}); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		since time.Time
		want  int
	}{{time.Time{}, 4}, {t0, 4}, {t0.Add(1500 * time.Millisecond), 2}, {t0.Add(time.Hour), 0}} {
		if got, _ := DeliveriesSince(dir, tc.since); len(got) != tc.want {
			t.Errorf("since %v: %d deliveries, want %d", tc.since, len(got), tc.want)
		}
	}
}
