package metrics

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/gitplus/gitplus/hubrefs/trust"
	"github.com/gitplus/gitplus/receive/hookrec"
)

func total(h *hookSums) uint64 {
	var n uint64
	for _, hh := range h.byVerdict {
		n += hh.count
	}
	return n
}

// TestHookRecordsAcrossRotation: the server counts every record once,
// across the rotation of the record file between two scrapes, and the
// files stay bounded.
func TestHookRecordsAcrossRotation(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, filepath.FromSlash(hookrec.File))
	add := func(n int, code string) {
		for i := 0; i < n; i++ {
			r := hookrec.Record{Verdict: hookrec.Accepted, Duration: time.Duration(i%50) * time.Millisecond, End: time.Now()}
			if code != "" {
				r.Verdict, r.Code = hookrec.Refused, code
			}
			if err := hookrec.Append(dir, r); err != nil {
				t.Fatal(err)
			}
		}
	}
	h := &hookSums{byVerdict: map[string]*hookHist{}, refusals: map[string]uint64{}}
	add(10, "")
	add(3, "not-approved")
	h.read(dir)
	if total(h) != 13 || h.refusals["not-approved"] != 3 || h.byVerdict[hookrec.Refused].count != 3 {
		t.Fatalf("after 13 records: %d counted, refusals %v", total(h), h.refusals)
	}
	h.read(dir)
	if total(h) != 13 {
		t.Fatalf("a second read with nothing new counted %d", total(h))
	}
	perFile := hookrec.MaxBytes / hookrec.Size
	add(perFile, "") // crosses MaxBytes: the file rotates
	if _, err := os.Stat(p + ".1"); err != nil {
		t.Fatalf("no rotated file after %d records: %v", 13+perFile, err)
	}
	add(7, "ref-moved")
	h.read(dir)
	if want := uint64(13 + perFile + 7); total(h) != want || h.refusals["ref-moved"] != 7 {
		t.Fatalf("across a rotation: %d counted, want %d; refusals %v", total(h), want, h.refusals)
	}
	for _, f := range []string{p, p + ".1"} {
		if fi, err := os.Stat(f); err != nil || fi.Size() > hookrec.MaxBytes+hookrec.Size {
			t.Fatalf("%s: %v %v: not bounded", f, fi, err)
		}
	}
	// A new server (a fresh reader) counts what both files hold.
	h2 := &hookSums{byVerdict: map[string]*hookHist{}, refusals: map[string]uint64{}}
	h2.read(dir)
	a, _ := os.Stat(p)
	b, _ := os.Stat(p + ".1")
	if want := uint64((a.Size() + b.Size()) / hookrec.Size); total(h2) != want {
		t.Fatalf("a fresh reader counted %d, the files hold %d", total(h2), want)
	}
}

func TestHookRecordRoundTrip(t *testing.T) {
	r := hookrec.Record{Verdict: hookrec.Refused, Code: "merged-wrong-branch", Duration: 1234 * time.Microsecond, End: time.Unix(0, 1700000000123456789)}
	b := r.Encode()
	got, err := hookrec.Decode(b[:])
	if err != nil || got.Verdict != r.Verdict || got.Code != r.Code || got.Duration != r.Duration || !got.End.Equal(r.End) {
		t.Fatalf("round trip: %+v %v, want %+v", got, err, r)
	}
	b[0] = 9
	if _, err := hookrec.Decode(b[:]); err == nil {
		t.Fatal("a record of another version decoded")
	}
}

func TestHistogram(t *testing.T) {
	n, sum, b := histogram([]float64{30, 60, 61, 100000}, LandBuckets)
	if n != 4 || sum != 100151 || b[60] != 2 || b[300] != 3 || b[86400] != 3 || len(b) != len(LandBuckets) {
		t.Fatalf("histogram: %d %v %v", n, sum, b)
	}
}

// TestDocsQuoteAlertsAndDashboard: docs/operating.md quotes docs/alerts.yml
// whole, and every metric the alert rules and the Grafana dashboard name is
// one this package exports.
func TestDocsQuoteAlertsAndDashboard(t *testing.T) {
	read := func(name string) string {
		b, err := os.ReadFile(filepath.Join("..", "..", "docs", name))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	alerts, ops, dash := read("alerts.yml"), read("operating.md"), read("grafana-dashboard.json")
	if !strings.Contains(ops, "```yaml\n"+alerts+"```") {
		t.Fatal("docs/operating.md does not quote docs/alerts.yml as it is: copy the file into its yaml block")
	}
	var d struct {
		Panels []struct {
			Targets []struct{ Expr string } `json:"targets"`
		} `json:"panels"`
	}
	if err := json.Unmarshal([]byte(dash), &d); err != nil || len(d.Panels) == 0 {
		t.Fatalf("docs/grafana-dashboard.json: %v", err)
	}
	exported := map[string]bool{}
	for _, desc := range []*prometheus.Desc{descDepth, descTimeToLand, descLandings, descEvictions, descCheckRuns, descBypasses,
		descHook, descRefusals, descPending, descFailures, descBehind, descWakeFailures, descUnjudged} {
		name := regexp.MustCompile(`fqName: "([a-z_]+)"`).FindStringSubmatch(desc.String())[1]
		exported[name] = true
		for _, suffix := range []string{"_bucket", "_sum", "_count"} {
			exported[name+suffix] = true
		}
	}
	for _, name := range regexp.MustCompile(`gitplus_[a-z_]+`).FindAllString(alerts+dash, -1) {
		if !exported[name] {
			t.Errorf("%s names %s, which /metrics does not export", "docs", name)
		}
	}
}

// scrapeText scrapes c's handler for repos once, through promhttp as
// `git+ serve` does, and returns the exposition; a scrape that does not
// answer within a minute fails the test (a wedged collector hangs every
// scrape after the first).
func scrapeText(t *testing.T, c *Collector, repos []Repo) string {
	t.Helper()
	srv := httptest.NewServer(c.Handler(repos))
	defer func() {
		if !t.Failed() {
			srv.Close() // a wedged handler would block Close for good
		}
	}()
	client := &http.Client{Timeout: time.Minute}
	resp, err := client.Get(srv.URL)
	if err != nil {
		t.Fatalf("scrape: %v (a wedged collector?)", err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func sample(t *testing.T, expo, series string) float64 {
	t.Helper()
	for _, line := range strings.Split(expo, "\n") {
		if name, val, ok := strings.Cut(line, " "); ok && name == series {
			var v float64
			if _, err := fmt.Sscan(val, &v); err != nil {
				t.Fatalf("%s: %v", line, err)
			}
			return v
		}
	}
	t.Fatalf("no %s in:\n%s", series, expo)
	return 0
}

// TestScrapeBesideDamagedRecords: garbage, a record cut short (the first
// bytes of one, as a full disk leaves it), a record whose code is not
// UTF-8 and one whose code is no refusal code are appended among good
// records; two scrapes in a row both answer, with every good record
// counted once, the odd codes under code="invalid", and nothing misread
// after the damage.
func TestScrapeBesideDamagedRecords(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, filepath.FromSlash(hookrec.File))
	appendRaw := func(b []byte) {
		t.Helper()
		f, err := os.OpenFile(p, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if _, err := f.Write(b); err != nil {
			t.Fatal(err)
		}
	}
	good := func(n int, code string) {
		t.Helper()
		for i := 0; i < n; i++ {
			r := hookrec.Record{Verdict: hookrec.Accepted, Duration: time.Millisecond, End: time.Now()}
			if code != "" {
				r.Verdict, r.Code = hookrec.Refused, code
			}
			if err := hookrec.Append(dir, r); err != nil {
				t.Fatal(err)
			}
		}
	}
	good(3, "")
	good(2, "not-approved")
	appendRaw([]byte("garbage that is no record at all, g+ and \x01 and \x02 among it\n"))
	torn := hookrec.Record{Verdict: hookrec.Refused, Code: "ref-moved", Duration: time.Millisecond, End: time.Now()}.Encode()
	appendRaw(torn[:20]) // a write a full disk cut short
	good(4, "")
	bad := hookrec.Record{Verdict: hookrec.Refused, Code: "\xff\xfe not utf-8", End: time.Now()}.Encode()
	appendRaw(bad[:])
	odd := hookrec.Record{Verdict: hookrec.Refused, Code: "Not A Code", End: time.Now()}.Encode()
	appendRaw(odd[:])
	good(1, "not-approved")
	appendRaw(torn[:33]) // a torn record last: the scrape waits there

	var log strings.Builder
	c := New(func(string) (*trust.State, error) { return nil, errors.New("no trust log here") }, &log)
	repos := []Repo{{Name: "r.git", GitDir: dir}}
	check := func(expo string, accepted, refused, notApproved, invalid float64) {
		t.Helper()
		for series, want := range map[string]float64{
			`gitplus_hook_duration_seconds_count{repository="r.git",verdict="accepted"}`: accepted,
			`gitplus_hook_duration_seconds_count{repository="r.git",verdict="refused"}`:  refused,
			`gitplus_hook_refusals_total{code="not-approved",repository="r.git"}`:        notApproved,
			`gitplus_hook_refusals_total{code="invalid",repository="r.git"}`:             invalid,
		} {
			if got := sample(t, expo, series); got != want {
				t.Errorf("%s = %v, want %v", series, got, want)
			}
		}
		if refused == 5 && strings.Contains(expo, `code="ref-moved"`) {
			t.Errorf("the torn record was counted:\n%s", expo)
		}
	}
	check(scrapeText(t, c, repos), 7, 5, 3, 2)
	check(scrapeText(t, c, repos), 7, 5, 3, 2) // the second scrape answers, and counts nothing twice
	good(2, "ref-moved")                       // after the torn tail: found again
	expo := scrapeText(t, c, repos)
	check(expo, 7, 7, 3, 2)
	if got := sample(t, expo, `gitplus_hook_refusals_total{code="ref-moved",repository="r.git"}`); got != 2 {
		t.Errorf("after the torn tail, ref-moved = %v, want 2", got)
	}
	if !strings.Contains(log.String(), "no hook record") {
		t.Errorf("the skipped bytes were not logged: %q", log.String())
	}
}

// TestScrapeNotWedged: one record whose code is not UTF-8 (written whole,
// checks and all) neither fails the scrape nor leaves the collector's lock
// held: the next scrapes answer too.
func TestScrapeNotWedged(t *testing.T) {
	dir := t.TempDir()
	for _, code := range []string{"not-approved", "\xc3\x28", "not-approved"} {
		if err := hookrec.Append(dir, hookrec.Record{Verdict: hookrec.Refused, Code: code, End: time.Now()}); err != nil {
			t.Fatal(err)
		}
	}
	c := New(func(string) (*trust.State, error) { return nil, errors.New("no trust log here") }, nil)
	repos := []Repo{{Name: "r.git", GitDir: dir}}
	var expos []string
	for i := 0; i < 3; i++ {
		expos = append(expos, scrapeText(t, c, repos)) // each answers
	}
	for i, expo := range expos {
		if got := sample(t, expo, `gitplus_hook_refusals_total{code="invalid",repository="r.git"}`); got != 1 {
			t.Fatalf("scrape %d: invalid = %v, want 1", i+1, got)
		}
		if got := sample(t, expo, `gitplus_hook_refusals_total{code="not-approved",repository="r.git"}`); got != 2 {
			t.Fatalf("scrape %d: not-approved = %v, want 2", i+1, got)
		}
	}
}
