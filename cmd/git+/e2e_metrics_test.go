package main

// End-to-end tests of git+ serve's /metrics (docs/operating.md, "Metrics"):
// the exposition against `git+ queue stats --json` and the hooks' own
// refusals, promtool on it and on docs/alerts.yml, --private, and Debian's
// prometheus scraping a server while a queue lands. With CI set, a missing
// prometheus or promtool fails the tests (.ci/run installs the package);
// elsewhere it skips them.

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gitplus/gitplus/fixtures"
	"github.com/gitplus/gitplus/hooks/metrics"
	"github.com/gitplus/gitplus/hubrefs/queue"
	"github.com/gitplus/gitplus/receive/hookrec"
)

// needTool is the path of Debian prometheus's tool name, or skips (fails
// in CI) when it is not installed.
func needTool(t *testing.T, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("%s is not installed (CI must have it: .ci/run installs Debian's prometheus): %v", name, err)
		}
		t.Skipf("%s is not installed (apt-get install prometheus): %v", name, err)
	}
	return p
}

// scrape GETs /metrics with basic credentials (user "" for none).
func scrape(t *testing.T, base, user, pass string) (int, string) {
	t.Helper()
	req, err := http.NewRequest("GET", base+"/metrics", nil)
	if err != nil {
		t.Fatal(err)
	}
	if user != "" {
		req.SetBasicAuth(user, pass)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// sample is the value of the series name with exactly the labels given
// (k, v pairs), and whether the exposition has it.
func sample(expo, name string, labels ...string) (float64, bool) {
	var want []string
	for i := 0; i+1 < len(labels); i += 2 {
		want = append(want, fmt.Sprintf("%s=%q", labels[i], labels[i+1]))
	}
	re := regexp.MustCompile(`^` + regexp.QuoteMeta(name) + `\{([^}]*)\} (\S+)$`)
	for _, line := range strings.Split(expo, "\n") {
		m := re.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		got := strings.Split(m[1], ",")
		slices.Sort(got)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			continue
		}
		v, err := strconv.ParseFloat(m[2], 64)
		return v, err == nil
	}
	return 0, false
}

func mustSample(t *testing.T, expo, name string, labels ...string) float64 {
	t.Helper()
	v, ok := sample(expo, name, labels...)
	if !ok {
		t.Fatalf("the exposition has no %s %v:\n%s", name, labels, expo)
	}
	return v
}

// refusedPush pushes the clone's current branch to main directly (main
// takes landings only through its rules) and returns the refusal's code.
func refusedPush(t *testing.T, e *hubEnv, bare string) string {
	t.Helper()
	clone := filepath.Join(filepath.Dir(bare), "clone")
	cmd := exec.Command("git", "-C", clone, "push", "--force", "origin", "HEAD:refs/heads/main")
	cmd.Env = fixtures.GitEnv(e.home)
	out, err := cmd.CombinedOutput()
	m := regexp.MustCompile(`git\+: refused refs/heads/main: \[([a-z-]+)\]`).FindStringSubmatch(string(out))
	if err == nil || m == nil {
		t.Fatalf("a direct push to main was not refused by the hook: %v\n%s", err, out)
	}
	return m[1]
}

func TestMetrics(t *testing.T) {
	t.Parallel()
	e := newHubEnv(t, "admin", "dev", "rev", "ci", "q")
	bare, _ := pageScenario(t, e)
	code := refusedPush(t, e, bare)
	var st queue.Stats
	if err := json.Unmarshal([]byte(e.ok(bare, "", "queue", "stats", "--target", "main", "--json")), &st); err != nil {
		t.Fatal(err)
	}
	s := startServe(t, e.bin, fixtures.GitEnv(e.home), filepath.Dir(bare))
	status, expo := scrape(t, s.URL, "", "")
	if status != 200 {
		t.Fatalf("GET /metrics: %d\n%s", status, expo)
	}
	repo, main := filepath.Base(bare), "refs/heads/main"
	rt := []string{"repository", repo, "target", main, "partition", ""} // a target without partitions: partition ""
	// The queue's figures are queue stats'.
	if v := mustSample(t, expo, "gitplus_landings_total", rt...); v != float64(st.Landed) || st.Landed != 1 {
		t.Fatalf("gitplus_landings_total %v, queue stats landed %d (want 1)", v, st.Landed)
	}
	if v := mustSample(t, expo, "gitplus_queue_depth", rt...); v != float64(st.Depth) || st.Depth != 3 {
		t.Fatalf("gitplus_queue_depth %v, queue stats depth %d (want 3: c, d, e)", v, st.Depth)
	}
	for _, reason := range []string{"failed", "conflict", "stale", "withdrawn"} {
		if v := mustSample(t, expo, "gitplus_evictions_total", append(rt, "reason", reason)...); v != float64(st.EvictedByReason[reason]) {
			t.Fatalf("gitplus_evictions_total{reason=%q} %v, queue stats %d", reason, v, st.EvictedByReason[reason])
		}
	}
	if st.EvictedByReason["failed"] != 1 || len(st.CheckRunsByConclusion) == 0 {
		t.Fatalf("queue stats: %+v", st)
	}
	for concl, n := range st.CheckRunsByConclusion {
		if v := mustSample(t, expo, "gitplus_check_runs_total", append(rt, "conclusion", concl)...); v != float64(n) {
			t.Fatalf("gitplus_check_runs_total{conclusion=%q} %v, queue stats %d", concl, v, n)
		}
	}
	var sum float64
	for _, l := range st.Landings {
		sum += float64(l.Seconds)
	}
	if v := mustSample(t, expo, "gitplus_queue_time_to_land_seconds_count", rt...); v != float64(len(st.Landings)) {
		t.Fatalf("time to land count %v, queue stats landings %d", v, len(st.Landings))
	}
	if v := mustSample(t, expo, "gitplus_queue_time_to_land_seconds_sum", rt...); v != sum {
		t.Fatalf("time to land sum %v, queue stats %v", v, sum)
	}
	if v := mustSample(t, expo, "gitplus_bypasses_total", rt...); v != 0 {
		t.Fatalf("gitplus_bypasses_total %v", v)
	}
	// The hooks' figures: every push of the scenario ran pre-receive here.
	if v := mustSample(t, expo, "gitplus_hook_duration_seconds_count", "repository", repo, "verdict", "accepted"); v < 10 {
		t.Fatalf("accepted pre-receive runs: %v, want the scenario's pushes", v)
	}
	if v := mustSample(t, expo, "gitplus_hook_duration_seconds_count", "repository", repo, "verdict", "refused"); v != 1 {
		t.Fatalf("refused pre-receive runs: %v, want 1", v)
	}
	if v := mustSample(t, expo, "gitplus_hook_refusals_total", "repository", repo, "code", code); v != 1 {
		t.Fatalf("gitplus_hook_refusals_total{code=%q} %v, want 1", code, v)
	}
	if v := mustSample(t, expo, "gitplus_delivery_pending", "repository", repo); v != 0 {
		t.Fatalf("gitplus_delivery_pending %v", v)
	}
	mustSample(t, expo, "gitplus_delivery_failures_total", "repository", repo)
	// A second refusal is counted once more: the server reads on from
	// where the last scrape stopped.
	// (The second push may be refused for another reason, such as its
	// push certificate's nonce: the code is whatever the hook printed.)
	code2 := refusedPush(t, e, bare)
	_, expo2 := scrape(t, s.URL, "", "")
	want := 1.0
	if code2 == code {
		want = 2
	}
	if v := mustSample(t, expo2, "gitplus_hook_refusals_total", "repository", repo, "code", code2); v != want {
		t.Fatalf("after a second refusal gitplus_hook_refusals_total{code=%q} is %v, want %v; the records:\n%s", code2, v, want, hookRecords(t, bare))
	}
	if v := mustSample(t, expo2, "gitplus_hook_duration_seconds_count", "repository", repo, "verdict", "refused"); v != 2 {
		t.Fatalf("after a second refusal, refused pre-receive runs: %v, want 2", v)
	}

	promtool := needTool(t, "promtool")
	cmd := exec.Command(promtool, "check", "metrics")
	cmd.Stdin = strings.NewReader(expo)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("promtool check metrics: %v\n%s\n%s", err, out, expo)
	}
	if out, err := exec.Command(promtool, "check", "rules", filepath.Join("..", "..", "docs", "alerts.yml")).CombinedOutput(); err != nil {
		t.Fatalf("promtool check rules docs/alerts.yml: %v\n%s", err, out)
	}
}

// hookRecords lists the pre-receive records of bare, for a failure's
// message.
func hookRecords(t *testing.T, bare string) string {
	b, err := os.ReadFile(filepath.Join(bare, filepath.FromSlash(hookrec.File)))
	if err != nil {
		return err.Error()
	}
	var out strings.Builder
	_, skipped := hookrec.Parse(b, func(r hookrec.Record) { fmt.Fprintf(&out, "%+v\n", r) })
	fmt.Fprintf(&out, "(%d bytes that are no record)\n", skipped)
	return out.String()
}

// TestMetricsPrivate: on a private server /metrics needs a member's token
// and shows the repositories it authenticates for.
func TestMetricsPrivate(t *testing.T) {
	t.Parallel()
	e := newHubEnv(t, "admin", "dev", "rev", "ci", "q")
	bare, _ := cliSetup(t, e)
	token := strings.TrimSpace(e.ok(bare, "", "member", "token", "issue", "dev"))
	s := startServe(t, e.bin, fixtures.GitEnv(e.home), filepath.Dir(bare), "--private")
	if status, body := scrape(t, s.URL, "", ""); status != 401 || strings.Contains(body, "gitplus_") {
		t.Fatalf("anonymous scrape of a private server: %d\n%s", status, body)
	}
	if status, body := scrape(t, s.URL, "dev", "not-a-token"); status != 401 || strings.Contains(body, "gitplus_") {
		t.Fatalf("a scrape with a bad token: %d\n%s", status, body)
	}
	status, body := scrape(t, s.URL, "dev", token)
	if status != 200 || !strings.Contains(body, `repository="`+filepath.Base(bare)+`"`) {
		t.Fatalf("a scrape with dev's token: %d\n%s", status, body)
	}
}

// promQuery asks prometheus at base for an instant vector and returns its
// first value (false when the vector is empty).
func promQuery(t *testing.T, base, q string) (float64, bool) {
	t.Helper()
	resp, err := http.Get(base + "/api/v1/query?query=" + url.QueryEscape(q))
	if err != nil {
		return 0, false
	}
	defer resp.Body.Close()
	var r struct {
		Status string `json:"status"`
		Data   struct {
			Result []struct {
				Value [2]any `json:"value"`
			} `json:"result"`
		} `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&r); err != nil || r.Status != "success" || len(r.Data.Result) == 0 {
		return 0, false
	}
	s, _ := r.Data.Result[0].Value[1].(string)
	v, err := strconv.ParseFloat(s, 64)
	return v, err == nil
}

// TestPrometheusScrapesServe: Debian's prometheus scrapes git+ serve every
// second while a queue lands, and answers for the landings and the median
// time to land.
func TestPrometheusScrapesServe(t *testing.T) {
	t.Parallel()
	prom := needTool(t, "prometheus")
	e := newHubEnv(t, "admin", "dev", "rev", "ci", "q")
	bare, ids := pageScenario(t, e)
	s := startServe(t, e.bin, fixtures.GitEnv(e.home), filepath.Dir(bare))

	dir := t.TempDir()
	target := strings.TrimPrefix(s.URL, "http://")
	cfg := fmt.Sprintf("global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\nscrape_configs:\n  - job_name: gitplus\n    static_configs:\n      - targets: [%q]\n", target)
	if err := os.WriteFile(filepath.Join(dir, "prometheus.yml"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	addr := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	cmd := exec.Command(prom, "--config.file="+filepath.Join(dir, "prometheus.yml"), "--storage.tsdb.path="+filepath.Join(dir, "data"),
		"--web.listen-address="+addr)
	logf, err := os.Create(filepath.Join(dir, "prometheus.log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	base := "http://" + addr
	repo := filepath.Base(bare)
	landed := fmt.Sprintf(`gitplus_landings_total{repository=%q,target="refs/heads/main"}`, repo)
	// waitFor polls prometheus until q answers want (a hang guard of
	// minutes, not a measure).
	waitFor := func(q string, want float64) {
		t.Helper()
		deadline := time.Now().Add(3 * time.Minute)
		for {
			if v, ok := promQuery(t, base, q); ok && v == want {
				return
			}
			if time.Now().After(deadline) {
				log, _ := os.ReadFile(logf.Name())
				v, ok := promQuery(t, base, q)
				t.Fatalf("prometheus never answered %s = %v (last %v %v); its log:\n%s", q, want, v, ok, log)
			}
			time.Sleep(200 * time.Millisecond)
		}
	}
	waitFor(landed, 1)

	// The queue lands one more while prometheus watches: c's red candidate
	// is evicted and e's candidate built, then it passes and lands.
	e.ok(bare, "admin", "queue", "run", "--target", "main")
	cand := fixtures.Git(t, bare, "rev-parse", queue.Branch("refs/heads/main", ids["e"]))
	e.ok(bare, "ci", "pr", "check", ids["e"], "--name", "ci", "--rev", cand, "--conclusion", "success")
	e.ok(bare, "admin", "queue", "run", "--target", "main")
	waitFor(landed, 2)

	var st queue.Stats
	if err := json.Unmarshal([]byte(e.ok(bare, "", "queue", "stats", "--target", "main", "--json")), &st); err != nil {
		t.Fatal(err)
	}
	if st.Landed != 2 {
		t.Fatalf("queue stats landed %d, want 2", st.Landed)
	}
	q := fmt.Sprintf(`histogram_quantile(0.5, sum by (le) (gitplus_queue_time_to_land_seconds_bucket{repository=%q}))`, repo)
	v, ok := promQuery(t, base, q)
	if !ok || v <= 0 {
		t.Fatalf("prometheus: %s = %v %v, want a positive number of seconds", q, v, ok)
	}
	// Prometheus interpolates inside the bucket that holds the median
	// (nearest rank: the shorter of the two landings).
	m := min(st.Landings[0].Seconds, st.Landings[1].Seconds)
	lo, hi := 0.0, 0.0
	for _, ub := range metrics.LandBuckets {
		lo, hi = hi, ub
		if float64(m) <= ub {
			break
		}
	}
	if v < lo || v > hi {
		t.Fatalf("median time to land %v s, outside the bucket (%v, %v] of queue stats' median %d s", v, lo, hi, m)
	}
}
