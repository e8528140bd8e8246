package main

// The page's charts (hooks/webview/charts.go) against `git+ queue stats
// --json` on the same repository: every bar, point and limit drawn is a
// figure of the command.

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/gitplus/gitplus/fixtures"
	"github.com/gitplus/gitplus/hubrefs/queue"
)

// svgOf is the SVG of chart name inside the charts of target on page.
func svgOf(t *testing.T, page, target, name string) string {
	t.Helper()
	i := strings.Index(page, `<div class="charts" data-target="`+target+`">`)
	if i < 0 {
		t.Fatalf("the page has no charts for %s:\n%s", target, page)
	}
	rest := page[i:]
	j := strings.Index(rest, `data-chart="`+name+`"`)
	if j < 0 {
		t.Fatalf("the charts of %s have no %s chart", target, name)
	}
	rest = rest[j:]
	return rest[:strings.Index(rest, "</svg>")]
}

// marks is the attributes of every element of class in svg, in order.
func marks(svg, class string) []map[string]string {
	var out []map[string]string
	attr := regexp.MustCompile(`([a-z-]+)="([^"]*)"`)
	for _, el := range regexp.MustCompile(`<[a-z]+ class="`+class+`"[^>]*>`).FindAllString(svg, -1) {
		m := map[string]string{}
		for _, a := range attr.FindAllStringSubmatch(el, -1) {
			m[a[1]] = a[2]
		}
		out = append(out, m)
	}
	return out
}

func TestPageChartsAreQueueStats(t *testing.T) {
	t.Parallel()
	e := newHubEnv(t, "admin", "dev", "rev", "ci", "q")
	bare, ids := pageScenario(t, e)
	// c's red candidate is evicted, e's built, checked and landed.
	e.ok(bare, "admin", "queue", "run", "--target", "main")
	cand := fixtures.Git(t, bare, "rev-parse", queue.Branch("refs/heads/main", ids["e"]))
	e.ok(bare, "ci", "pr", "check", ids["e"], "--name", "ci", "--rev", cand, "--conclusion", "success")
	e.ok(bare, "admin", "queue", "run", "--target", "main")
	var st queue.Stats
	if err := json.Unmarshal([]byte(e.ok(bare, "", "queue", "stats", "--target", "main", "--json")), &st); err != nil {
		t.Fatal(err)
	}
	if st.Landed != 2 || st.Evicted != 2 || len(st.DepthSeries) < 6 {
		t.Fatalf("queue stats: %+v", st)
	}
	s := startServe(t, e.bin, fixtures.GitEnv(e.home), filepath.Dir(bare))
	code, hdr, page := httpGet(t, "GET", s.URL+"/"+filepath.Base(bare)+"/")
	if code != 200 || !strings.Contains(hdr.Get("Content-Security-Policy"), "default-src 'none'") || strings.Contains(strings.ToLower(page), "<script") {
		t.Fatalf("GET the page: %d %v\n%s", code, hdr, page)
	}
	main := "refs/heads/main"

	// Time to land: one bar per landing, its pull request, time and
	// seconds; the limits are queue stats' thresholds.
	ttl := svgOf(t, page, main, "time-to-land")
	bars := marks(ttl, "bar")
	if len(bars) != len(st.Landings) {
		t.Fatalf("time to land: %d bars, queue stats has %d landings", len(bars), len(st.Landings))
	}
	for i, l := range st.Landings {
		b := bars[i]
		if b["data-pr"] != l.PR || b["data-at"] != fmt.Sprint(l.At) || b["data-seconds"] != fmt.Sprint(l.Seconds) {
			t.Fatalf("time to land bar %d: %v, queue stats %+v", i, b, l)
		}
	}
	var limits []string
	for _, m := range marks(ttl, "limit") {
		limits = append(limits, m["data-v"])
	}
	var want []string
	for _, th := range st.Thresholds[:2] { // median and p95, "≤ N"
		want = append(want, strings.TrimPrefix(th.Limit, "≤ "))
	}
	if strings.Join(limits, ",") != strings.Join(want, ",") {
		t.Fatalf("time to land limits drawn %v, queue stats thresholds %v", limits, want)
	}
	// Depth: one point per entry and departure.
	pts := marks(svgOf(t, page, main, "depth"), "point")
	if len(pts) != len(st.DepthSeries) {
		t.Fatalf("depth: %d points, queue stats %d", len(pts), len(st.DepthSeries))
	}
	for i, p := range st.DepthSeries {
		if pts[i]["data-at"] != fmt.Sprint(p.At) || pts[i]["data-v"] != strconv.Itoa(p.Depth) {
			t.Fatalf("depth point %d: %v, queue stats %+v", i, pts[i], p)
		}
	}
	if last := st.DepthSeries[len(st.DepthSeries)-1].Depth; last != st.Depth || st.Depth != 1 {
		t.Fatalf("depth now %d, the series ends at %d; want 1 (d waits for review)", st.Depth, last)
	}
	// Check runs per landing.
	runs := marks(svgOf(t, page, main, "check-runs"), "bar")
	if len(runs) != len(st.Landings) {
		t.Fatalf("check runs: %d bars, %d landings", len(runs), len(st.Landings))
	}
	for i, l := range st.Landings {
		if runs[i]["data-pr"] != l.PR || runs[i]["data-v"] != strconv.Itoa(l.CheckRuns) || l.CheckRuns == 0 {
			t.Fatalf("check runs bar %d: %v, queue stats %+v", i, runs[i], l)
		}
	}
	// Evictions by reason: every reason queue stats counts, the others 0.
	ev := marks(svgOf(t, page, main, "evictions"), "bar")
	seen := map[string]bool{}
	for _, b := range ev {
		seen[b["data-reason"]] = true
		if b["data-v"] != strconv.Itoa(st.EvictedByReason[b["data-reason"]]) {
			t.Fatalf("evictions bar %v, queue stats %v", b, st.EvictedByReason)
		}
	}
	for r := range st.EvictedByReason {
		if !seen[r] {
			t.Fatalf("evictions: no bar for %q (queue stats %v)", r, st.EvictedByReason)
		}
	}
	if st.EvictedByReason["failed"] != 2 {
		t.Fatalf("queue stats evictions %v, want failed 2 (b and c)", st.EvictedByReason)
	}
	summary := fmt.Sprintf("%d landed, %d evicted of %d entries; time to land median %.1f min, p95 %.1f min; %d queued now",
		st.Landed, st.Evicted, st.Entered, st.MedianMinutes, st.P95Minutes, st.Depth)
	if !strings.Contains(page, summary) {
		t.Fatalf("the page lacks queue stats' summary %q", summary)
	}
}
