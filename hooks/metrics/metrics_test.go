package metrics

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

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
