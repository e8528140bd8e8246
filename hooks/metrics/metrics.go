// Package metrics is `git+ serve`'s /metrics: the Prometheus text
// exposition of every served repository's queue, hook and delivery figures
// (docs/operating.md, "Metrics"), through the Prometheus Go client.
//
// Decisions:
//   - Nothing is counted as it happens: a Collector computes every figure
//     when it is scraped, from what the repository records. The queue
//     figures are `git+ queue stats` (receive/queuerun.AllStats, memoised
//     in the fold cache under a digest of the hub refs, so a scrape over
//     unchanged refs reads the refs and one cache entry). The hook figures
//     are the records the pre-receive processes append
//     (receive/hookrec), read on from where the last scrape stopped and
//     summed in this process: they count from the server's start, as a
//     Prometheus counter may. The delivery figures are the spool's
//     (hooks/delivery/spool.go).
//   - Each scrape has its own registry (no global state): a scrape sees
//     the repositories its credentials allow (hooks/serve decides), and
//     only those are collected.
//   - Labels: repository (its URL path, "team/app.git") on every series;
//     target (the full branch ref) and partition on the queue's (a series
//     per lane of a target whose rules name partitions, summing to the
//     target's; partition "" otherwise); reason, conclusion,
//     verdict, code and mirror where the figure has them. The eviction
//     reasons are always all exported (0 when none), so an alert can rate
//     them from the first scrape.
//   - gitplus_bypasses_total is 0: no pull request lands around the queue's
//     rules yet; it is exported so that dashboards and alerts need no
//     change when a bypass is added.
package metrics

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/gitplus/gitplus/hooks/delivery"
	"github.com/gitplus/gitplus/hubrefs/queue"
	"github.com/gitplus/gitplus/hubrefs/trust"
	"github.com/gitplus/gitplus/receive/hookrec"
	"github.com/gitplus/gitplus/receive/queuerun"
)

// Buckets of the histograms, in seconds.
var (
	LandBuckets = []float64{60, 300, 600, 900, 1800, 3600, 7200, 14400, 28800, 86400}
	HookBuckets = []float64{0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10}
)

// Eviction reasons exported even when zero.
var evictionReasons = []string{queue.ReasonFailed, queue.ReasonConflict, queue.ReasonStale, queue.ReasonWithdrawn}

// Repo is one repository to collect: its URL path and git directory.
type Repo struct {
	Name   string
	GitDir string
}

// Collector keeps what scrapes carry over: where each repository's hook
// records were read to, and their sums since the server started.
type Collector struct {
	// TrustOf reads a repository's trust state (on a queue stats memo miss).
	TrustOf func(gitDir string) (*trust.State, error)
	// Log gets one line per repository whose figures could not be read.
	Log io.Writer

	mu    sync.Mutex
	hooks map[string]*hookSums
	spool map[string]*spoolSums
}

// New returns a collector reading trust with trustOf.
func New(trustOf func(gitDir string) (*trust.State, error), log io.Writer) *Collector {
	return &Collector{TrustOf: trustOf, Log: log, hooks: map[string]*hookSums{}, spool: map[string]*spoolSums{}}
}

// Handler is the exposition of repos, in Prometheus's text format (or
// what the scraper negotiates).
func (c *Collector) Handler(repos []Repo) http.Handler {
	reg := prometheus.NewRegistry()
	reg.MustRegister(&scrape{c: c, repos: repos})
	return promhttp.HandlerFor(reg, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError})
}

var (
	descDepth      = prometheus.NewDesc("gitplus_queue_depth", "Pull requests queued for the target now.", []string{"repository", "target", "partition"}, nil)
	descTimeToLand = prometheus.NewDesc("gitplus_queue_time_to_land_seconds", "Time from a pull request's first entry in the target's queue to its landing.", []string{"repository", "target", "partition"}, nil)
	descLandings   = prometheus.NewDesc("gitplus_landings_total", "Pull requests the queue landed on the target.", []string{"repository", "target", "partition"}, nil)
	descEvictions  = prometheus.NewDesc("gitplus_evictions_total", "Queue entries that left without landing, by reason.", []string{"repository", "target", "partition", "reason"}, nil)
	descCheckRuns  = prometheus.NewDesc("gitplus_check_runs_total", "check.completed events of pull requests queued for the target, by conclusion.", []string{"repository", "target", "partition", "conclusion"}, nil)
	descBypasses   = prometheus.NewDesc("gitplus_bypasses_total", "Landings around the queue's rules (none exist yet: always 0).", []string{"repository", "target", "partition"}, nil)
	descHook       = prometheus.NewDesc("gitplus_hook_duration_seconds", "Duration of the pre-receive hook, by verdict, since the server started.", []string{"repository", "verdict"}, nil)
	descRefusals   = prometheus.NewDesc("gitplus_hook_refusals_total", "Pushes the pre-receive hook refused, by the code of the first refusal, since the server started.", []string{"repository", "code"}, nil)
	descPending    = prometheus.NewDesc("gitplus_delivery_pending", "Webhook deliveries not settled yet.", []string{"repository"}, nil)
	descFailures   = prometheus.NewDesc("gitplus_delivery_failures_total", "Webhook deliveries that failed for good (settled as failed in the spool).", []string{"repository"}, nil)
	descBehind     = prometheus.NewDesc("gitplus_mirror_behind", "Changes recorded for a mirror and not synced to it yet (at least 1 while its refs differ from those it last received).", []string{"repository", "mirror"}, nil)
)

// scrape is the collector of one request.
type scrape struct {
	c     *Collector
	repos []Repo
}

func (s *scrape) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descDepth, descTimeToLand, descLandings, descEvictions, descCheckRuns, descBypasses,
		descHook, descRefusals, descPending, descFailures, descBehind, descWakeFailures, descUnjudged} {
		ch <- d
	}
}

func (s *scrape) Collect(ch chan<- prometheus.Metric) {
	for _, r := range s.repos {
		s.c.collectQueue(ch, r)
		s.c.collectHook(ch, r)
		s.c.collectDelivery(ch, r)
		s.c.collectOperator(ch, r) // operator.go
	}
}

func (c *Collector) logf(format string, a ...any) {
	if c.Log != nil {
		fmt.Fprintf(c.Log, "git+ serve: /metrics: "+format+"\n", a...)
	}
}

func (c *Collector) collectQueue(ch chan<- prometheus.Metric, r Repo) {
	all, err := queuerun.AllStats(r.GitDir, func() (*trust.State, error) { return c.TrustOf(r.GitDir) })
	if err != nil {
		c.logf("%s: %v", r.Name, err)
		return
	}
	for _, whole := range all {
		// A target with partitions: a series per lane, labelled with it
		// (their sum is the target's); else one, partition "".
		lanes := whole.Partitions
		if len(lanes) == 0 {
			lanes = []queue.Stats{whole}
		}
		for _, st := range lanes {
			t, part := whole.Target, st.Partition
			ch <- prometheus.MustNewConstMetric(descDepth, prometheus.GaugeValue, float64(st.Depth), r.Name, t, part)
			ch <- prometheus.MustNewConstMetric(descLandings, prometheus.CounterValue, float64(st.Landed), r.Name, t, part)
			ch <- prometheus.MustNewConstMetric(descBypasses, prometheus.CounterValue, 0, r.Name, t, part)
			secs := make([]float64, len(st.Landings))
			for i, l := range st.Landings {
				secs[i] = float64(l.Seconds)
			}
			count, sum, buckets := histogram(secs, LandBuckets)
			ch <- prometheus.MustNewConstHistogram(descTimeToLand, count, sum, buckets, r.Name, t, part)
			for _, reason := range reasons(st.EvictedByReason) {
				ch <- prometheus.MustNewConstMetric(descEvictions, prometheus.CounterValue, float64(st.EvictedByReason[reason]), r.Name, t, part, reason)
			}
			for _, concl := range sortedKeys(st.CheckRunsByConclusion) {
				ch <- prometheus.MustNewConstMetric(descCheckRuns, prometheus.CounterValue, float64(st.CheckRunsByConclusion[concl]), r.Name, t, part, concl)
			}
		}
	}
}

// reasons is evictionReasons and any other reason in by, sorted.
func reasons(by map[string]int) []string {
	set := map[string]int{}
	for _, r := range evictionReasons {
		set[r] = 0
	}
	for r := range by {
		set[r] = 0
	}
	return sortedKeys(set)
}

func sortedKeys(m map[string]int) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// histogram is the count, sum and cumulative bucket counts of xs.
func histogram(xs, bounds []float64) (uint64, float64, map[float64]uint64) {
	b := make(map[float64]uint64, len(bounds))
	var sum float64
	for _, x := range xs {
		sum += x
		for _, ub := range bounds {
			if x <= ub {
				b[ub]++
			}
		}
	}
	for _, ub := range bounds {
		b[ub] += 0
	}
	return uint64(len(xs)), sum, b
}

// hookSums is what the hook records of one repository sum to, and where
// reading them stopped.
type hookSums struct {
	started   bool
	ino       uint64 // the record file read last
	off       int64  // how far (whole records)
	byVerdict map[string]*hookHist
	refusals  map[string]uint64
	skipped   uint64 // bytes of the record files that were no record
}

type hookHist struct {
	count   uint64
	sum     float64
	buckets []uint64 // cumulative, per HookBuckets
}

func (h *hookSums) add(rec hookrec.Record) {
	hh := h.byVerdict[rec.Verdict]
	if hh == nil {
		hh = &hookHist{buckets: make([]uint64, len(HookBuckets))}
		h.byVerdict[rec.Verdict] = hh
	}
	d := rec.Duration.Seconds()
	hh.count++
	hh.sum += d
	for i, ub := range HookBuckets {
		if d <= ub {
			hh.buckets[i]++
		}
	}
	if rec.Verdict == hookrec.Refused {
		h.refusals[refusalLabel(rec.Code)]++
	}
}

// InvalidCode is the code label of refusals whose recorded code is no
// refusal code (docs/operating.md, "Metrics").
const InvalidCode = "invalid"

// refusalLabel is the code label of a refusal recorded with code: the code
// itself when it is one (lowercase letters, digits and '-', as every code
// of README.md's refusal table), else InvalidCode — a record written by
// something other than the hook, or damaged in a way its check missed,
// must not become a label (a label that is not UTF-8 fails the scrape).
func refusalLabel(code string) string {
	if code == "" || len(code) > hookrec.CodeBytes {
		return InvalidCode
	}
	for i := 0; i < len(code); i++ {
		if c := code[i]; !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-') {
			return InvalidCode
		}
	}
	return code
}

// consume reads the records of f from off on and returns where it
// stopped: before a record not yet written whole, past any bytes that are
// no record (hookrec.Parse skips them, and they are counted).
func (h *hookSums) consume(f *os.File, off int64) int64 {
	buf := make([]byte, 64*hookrec.Size)
	for {
		n, err := f.ReadAt(buf, off)
		used, skipped := hookrec.Parse(buf[:n], h.add)
		h.skipped += uint64(skipped)
		off += int64(used)
		if err != nil || used == 0 {
			return off
		}
	}
}

func inode(f *os.File) uint64 {
	fi, err := f.Stat()
	if err != nil {
		return 0
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return st.Ino
	}
	return 0
}

// read reads the records appended since the last scrape: the rest of a
// file rotated since (now pre-receive.rec.1), then the current one.
func (h *hookSums) read(gitDir string) {
	p := filepath.Join(gitDir, filepath.FromSlash(hookrec.File))
	cur, err := os.Open(p)
	if err != nil {
		cur = nil
	} else {
		defer cur.Close()
	}
	var curIno uint64
	if cur != nil {
		curIno = inode(cur)
	}
	if !h.started || curIno != h.ino {
		if old, err := os.Open(p + ".1"); err == nil {
			oldIno := inode(old)
			switch {
			case !h.started && oldIno != curIno:
				h.consume(old, 0)
			case h.started && oldIno == h.ino:
				h.consume(old, h.off)
			}
			old.Close()
		}
		h.ino, h.off = curIno, 0
	}
	h.started = true
	if cur != nil {
		h.off = h.consume(cur, h.off)
	}
}

func (c *Collector) collectHook(ch chan<- prometheus.Metric, r Repo) {
	// The figures are made under the lock and sent after it is released:
	// a scrape that stops reading (or anything that panics) never leaves
	// the lock held for the next scrape.
	var out []prometheus.Metric
	func() {
		c.mu.Lock()
		defer c.mu.Unlock()
		h := c.hooks[r.GitDir]
		if h == nil {
			h = &hookSums{byVerdict: map[string]*hookHist{}, refusals: map[string]uint64{}}
			c.hooks[r.GitDir] = h
		}
		before := h.skipped
		h.read(r.GitDir)
		if h.skipped > before {
			c.logf("%s: skipped %d bytes of %s that are no hook record (a record cut short by a full disk, or damage)", r.Name, h.skipped-before, hookrec.File)
		}
		for _, v := range []string{hookrec.Accepted, hookrec.Refused} {
			hh := h.byVerdict[v]
			if hh == nil {
				hh = &hookHist{buckets: make([]uint64, len(HookBuckets))}
			}
			b := make(map[float64]uint64, len(HookBuckets))
			for i, ub := range HookBuckets {
				b[ub] = hh.buckets[i]
			}
			out = append(out, constHistogram(descHook, hh.count, hh.sum, b, r.Name, v))
		}
		codes := make([]string, 0, len(h.refusals))
		for code := range h.refusals {
			codes = append(codes, code)
		}
		sort.Strings(codes)
		for _, code := range codes {
			out = append(out, constMetric(descRefusals, prometheus.CounterValue, float64(h.refusals[code]), r.Name, code))
		}
	}()
	for _, m := range out {
		ch <- m
	}
}

// constMetric is prometheus.NewConstMetric with its error (a label that
// is not UTF-8: a repository's directory name may be anything) reported
// as an invalid metric of its own rather than a panic.
func constMetric(d *prometheus.Desc, t prometheus.ValueType, v float64, labels ...string) prometheus.Metric {
	m, err := prometheus.NewConstMetric(d, t, v, labels...)
	if err != nil {
		return prometheus.NewInvalidMetric(d, err)
	}
	return m
}

// constHistogram is constMetric's prometheus.NewConstHistogram.
func constHistogram(d *prometheus.Desc, count uint64, sum float64, buckets map[float64]uint64, labels ...string) prometheus.Metric {
	m, err := prometheus.NewConstHistogram(d, count, sum, buckets, labels...)
	if err != nil {
		return prometheus.NewInvalidMetric(d, err)
	}
	return m
}

// spoolSums is the settled webhook deliveries of one repository already
// read (a settled record never changes) and how many of them failed.
type spoolSums struct {
	seen   map[string]bool
	failed int
}

func jobIDs(dir string) []string {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var ids []string
	for _, e := range ents {
		if id, ok := strings.CutSuffix(e.Name(), ".json"); ok && !strings.HasPrefix(id, ".") {
			ids = append(ids, id)
		}
	}
	return ids
}

func (c *Collector) collectDelivery(ch chan<- prometheus.Metric, r Repo) {
	base := filepath.Join(r.GitDir, filepath.FromSlash(delivery.SpoolDir), "webhooks")
	done := jobIDs(filepath.Join(base, "done"))
	isDone := make(map[string]bool, len(done))
	failed := func() int {
		c.mu.Lock()
		defer c.mu.Unlock()
		s := c.spool[r.GitDir]
		if s == nil {
			s = &spoolSums{seen: map[string]bool{}}
			c.spool[r.GitDir] = s
		}
		for _, id := range done {
			isDone[id] = true
			if s.seen[id] {
				continue
			}
			j, err := delivery.FindDelivery(r.GitDir, id)
			if err != nil {
				continue // not written whole yet, or not a delivery: read it next time
			}
			s.seen[id] = true
			if j.State == delivery.StateFailed {
				s.failed++
			}
		}
		return s.failed
	}()
	pending := 0
	for _, id := range jobIDs(filepath.Join(base, "pending")) {
		if !isDone[id] {
			pending++
		}
	}
	ch <- prometheus.MustNewConstMetric(descPending, prometheus.GaugeValue, float64(pending), r.Name)
	ch <- prometheus.MustNewConstMetric(descFailures, prometheus.CounterValue, float64(failed), r.Name)
	remotes, err := delivery.LoadRemotes(r.GitDir)
	if err != nil {
		c.logf("%s: %v", r.Name, err)
	}
	for _, rem := range remotes {
		ms, err := delivery.ReadMirror(r.GitDir, rem)
		if err != nil {
			c.logf("%s: %v", r.Name, err)
			continue
		}
		behind := ms.Requested - ms.Synced
		if behind < 0 {
			behind = 0
		}
		if behind == 0 && ms.RefsBehind() {
			behind = 1 // a change whose record was lost (a full disk): the refs say it
		}
		ch <- prometheus.MustNewConstMetric(descBehind, prometheus.GaugeValue, float64(behind), r.Name, rem.Name)
	}
}
