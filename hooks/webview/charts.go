package webview

// The page's pictures of the queue (docs/cli.md, "The page"): per target,
// server-rendered SVG (no script) of time to land over the last landings
// with the health limits drawn, the queue's depth over time, check runs per
// landing and evictions by reason. Every number drawn is one of `git+ queue
// stats --json` for that target (receive/queuerun.AllStats, the memoised
// figures /metrics reads too): each bar and point carries it as data-v
// (and data-pr, data-at, data-reason), and a test holds the page to the
// command.

import (
	"fmt"
	"html/template"
	"math"
	"sort"
	"strings"
	"time"

	"github.com/gitplus/gitplus/hubrefs/queue"
	"github.com/gitplus/gitplus/hubrefs/trust"
	"github.com/gitplus/gitplus/receive/queuerun"
)

// Chart sizes (SVG user units) and how much history each draws.
const (
	chartW, chartH   = 520, 200
	padL, padR       = 44, 12
	padT, padB       = 24, 30
	ChartLandings    = 40  // landings drawn (the most recent)
	ChartDepthPoints = 200 // depth points drawn (the most recent)
)

// chartsOf is the pictures of every target of the repository at gitDir
// whose trust state is t, in target order.
func chartsOf(gitDir string, t *trust.State) ([]TargetCharts, error) {
	all, err := queuerun.AllStats(gitDir, func() (*trust.State, error) { return t, nil })
	if err != nil {
		return nil, err
	}
	out := make([]TargetCharts, 0, len(all))
	for _, st := range all {
		out = append(out, ChartsOf(st))
	}
	return out, nil
}

// TargetCharts is the pictures of one target.
type TargetCharts struct {
	Target  string
	Summary string // the figures in words, as queue stats prints them
	Charts  []Chart
}

// Chart is one picture.
type Chart struct {
	ID    string // time-to-land, depth, check-runs, evictions
	Title string
	SVG   template.HTML
}

// ChartsOf draws st.
func ChartsOf(st queue.Stats) TargetCharts {
	tc := TargetCharts{Target: st.Target,
		Summary: fmt.Sprintf("%d landed, %d evicted of %d entries; time to land median %.1f min, p95 %.1f min; %d queued now",
			st.Landed, st.Evicted, st.Entered, st.MedianMinutes, st.P95Minutes, st.Depth)}
	lands := st.Landings
	if len(lands) > ChartLandings {
		lands = lands[len(lands)-ChartLandings:]
	}
	tc.Charts = append(tc.Charts,
		Chart{"time-to-land", fmt.Sprintf("Time to land, last %d landings (minutes)", len(lands)), timeToLand(lands)},
		Chart{"depth", "Queue depth over time", depthChart(st.DepthSeries)},
		Chart{"check-runs", fmt.Sprintf("Check runs per landing, last %d", len(lands)), checkRuns(lands)},
		Chart{"evictions", "Evictions by reason", evictions(st.EvictedByReason)})
	return tc
}

// svg is a chart's frame: the axes and a note when there is nothing to draw.
type svg struct {
	b    strings.Builder
	id   string
	ymax float64
}

func newSVG(id, desc string, ymax float64) *svg {
	s := &svg{id: id, ymax: ymax}
	fmt.Fprintf(&s.b, `<svg class="chart" data-chart="%s" role="img" viewBox="0 0 %d %d" width="%d" height="%d" xmlns="http://www.w3.org/2000/svg">`,
		id, chartW, chartH, chartW, chartH)
	fmt.Fprintf(&s.b, `<desc>%s</desc>`, template.HTMLEscapeString(desc))
	fmt.Fprintf(&s.b, `<rect x="0" y="0" width="%d" height="%d" fill="#fff"/>`, chartW, chartH)
	return s
}

func (s *svg) x0() float64 { return padL }
func (s *svg) x1() float64 { return chartW - padR }
func (s *svg) y(v float64) float64 {
	return padT + (chartH-padT-padB)*(1-v/s.ymax)
}

// axes draws the y axis with ticks and the baseline.
func (s *svg) axes(unit string) {
	for _, t := range ticks(s.ymax) {
		y := s.y(t)
		fmt.Fprintf(&s.b, `<line x1="%.1f" x2="%.1f" y1="%.1f" y2="%.1f" stroke="#eaeef2"/>`, s.x0(), s.x1(), y, y)
		fmt.Fprintf(&s.b, `<text x="%.1f" y="%.1f" font-size="10" text-anchor="end" fill="#57606a">%s</text>`, s.x0()-4, y+3, num(t))
	}
	fmt.Fprintf(&s.b, `<line x1="%.1f" x2="%.1f" y1="%.1f" y2="%.1f" stroke="#57606a"/>`, s.x0(), s.x1(), s.y(0), s.y(0))
	if unit != "" {
		fmt.Fprintf(&s.b, `<text x="4" y="%d" font-size="10" fill="#57606a">%s</text>`, padT-12, template.HTMLEscapeString(unit))
	}
}

func (s *svg) empty(msg string) {
	fmt.Fprintf(&s.b, `<text x="%d" y="%d" font-size="13" text-anchor="middle" fill="#57606a">%s</text>`, chartW/2, chartH/2, template.HTMLEscapeString(msg))
}

// limit draws a horizontal health limit at v, labelled.
func (s *svg) limit(v float64, label, color string) {
	y := s.y(v)
	fmt.Fprintf(&s.b, `<line class="limit" data-v="%s" x1="%.1f" x2="%.1f" y1="%.1f" y2="%.1f" stroke="%s" stroke-dasharray="5 3" stroke-width="1.5"/>`,
		num(v), s.x0(), s.x1(), y, y, color)
	fmt.Fprintf(&s.b, `<text x="%.1f" y="%.1f" font-size="10" text-anchor="end" fill="%s">%s</text>`, s.x1(), y-3, color, template.HTMLEscapeString(label))
}

// bars draws one bar per value, evenly spaced; attrs gives each bar's data
// attributes and tip its tooltip.
func (s *svg) bars(vals []float64, color func(float64) string, attrs func(int) string, tip func(int) string) {
	n := len(vals)
	slot := (s.x1() - s.x0()) / float64(max(n, 1))
	w := math.Max(1, math.Min(28, slot*0.7))
	for i, v := range vals {
		x := s.x0() + slot*float64(i) + (slot-w)/2
		y := s.y(v)
		h := s.y(0) - y
		if h < 2 && v > 0 {
			y, h = s.y(0)-2, 2 // seen, however short
		}
		fmt.Fprintf(&s.b, `<rect class="bar" %s data-v="%s" x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s"><title>%s</title></rect>`,
			attrs(i), num(v), x, y, w, h, color(v), template.HTMLEscapeString(tip(i)))
	}
}

func (s *svg) done() template.HTML {
	s.b.WriteString(`</svg>`)
	return template.HTML(s.b.String()) // built here from numbers and escaped text only
}

func timeToLand(lands []queue.StatsLanding) template.HTML {
	vals := make([]float64, len(lands))
	top := float64(queue.HealthP95Minutes) * 1.15
	for i, l := range lands {
		vals[i] = float64(l.Seconds) / 60
		top = math.Max(top, vals[i]*1.05)
	}
	s := newSVG("time-to-land", "minutes from first entry to landing, per landing, with the health limits", niceMax(top))
	s.axes("min")
	if len(lands) == 0 {
		s.empty("nothing landed yet")
	}
	s.bars(vals, func(v float64) string {
		switch {
		case v <= queue.HealthMedianMinutes:
			return "#2da44e"
		case v <= queue.HealthP95Minutes:
			return "#d4a72c"
		}
		return "#cf222e"
	}, func(i int) string {
		return fmt.Sprintf(`data-pr="%s" data-at="%d" data-seconds="%d"`, template.HTMLEscapeString(lands[i].PR), lands[i].At, lands[i].Seconds)
	}, func(i int) string {
		return fmt.Sprintf("%s landed %s after %s", short(lands[i].PR), time.Unix(lands[i].At, 0).UTC().Format("2006-01-02 15:04 UTC"),
			time.Duration(lands[i].Seconds)*time.Second)
	})
	s.limit(queue.HealthMedianMinutes, fmt.Sprintf("median limit %d min", queue.HealthMedianMinutes), "#9a6700")
	s.limit(queue.HealthP95Minutes, fmt.Sprintf("p95 limit %d min", queue.HealthP95Minutes), "#cf222e")
	return s.done()
}

func depthChart(series []queue.StatsDepth) template.HTML {
	if len(series) > ChartDepthPoints {
		series = series[len(series)-ChartDepthPoints:]
	}
	top := 1.0
	for _, p := range series {
		top = math.Max(top, float64(p.Depth))
	}
	s := newSVG("depth", "entries queued after each entry and departure, over time", countMax(top))
	s.axes("queued")
	if len(series) == 0 {
		s.empty("no entries yet")
		return s.done()
	}
	from, until := series[0].At, series[len(series)-1].At
	x := func(at int64) float64 {
		if until == from {
			return (s.x0() + s.x1()) / 2
		}
		return s.x0() + (s.x1()-s.x0())*float64(at-from)/float64(until-from)
	}
	var path strings.Builder
	for i, p := range series {
		if i == 0 {
			fmt.Fprintf(&path, "M%.1f %.1f", x(p.At), s.y(float64(p.Depth)))
		} else {
			fmt.Fprintf(&path, " H%.1f V%.1f", x(p.At), s.y(float64(p.Depth)))
		}
	}
	fmt.Fprintf(&s.b, `<path d="%s" fill="none" stroke="#0969da" stroke-width="1.5"/>`, path.String())
	for _, p := range series {
		fmt.Fprintf(&s.b, `<circle class="point" data-at="%d" data-v="%d" cx="%.1f" cy="%.1f" r="2" fill="#0969da"><title>%d queued at %s</title></circle>`,
			p.At, p.Depth, x(p.At), s.y(float64(p.Depth)), p.Depth, time.Unix(p.At, 0).UTC().Format("2006-01-02 15:04 UTC"))
	}
	fmt.Fprintf(&s.b, `<text x="%.1f" y="%d" font-size="10" fill="#57606a">%s</text>`, s.x0(), chartH-8, time.Unix(from, 0).UTC().Format("01-02 15:04"))
	fmt.Fprintf(&s.b, `<text x="%.1f" y="%d" font-size="10" text-anchor="end" fill="#57606a">%s UTC</text>`, s.x1(), chartH-8, time.Unix(until, 0).UTC().Format("01-02 15:04"))
	return s.done()
}

func checkRuns(lands []queue.StatsLanding) template.HTML {
	vals := make([]float64, len(lands))
	top := 1.0
	for i, l := range lands {
		vals[i] = float64(l.CheckRuns)
		top = math.Max(top, vals[i])
	}
	s := newSVG("check-runs", "check.completed events of each landed pull request", countMax(top))
	s.axes("runs")
	if len(lands) == 0 {
		s.empty("nothing landed yet")
	}
	s.bars(vals, func(float64) string { return "#8250df" }, func(i int) string {
		return fmt.Sprintf(`data-pr="%s" data-at="%d"`, template.HTMLEscapeString(lands[i].PR), lands[i].At)
	}, func(i int) string {
		return fmt.Sprintf("%s: %d check runs", short(lands[i].PR), lands[i].CheckRuns)
	})
	return s.done()
}

func evictions(by map[string]int) template.HTML {
	reasons := []string{queue.ReasonFailed, queue.ReasonConflict, queue.ReasonStale, queue.ReasonWithdrawn}
	var other []string
	for r := range by {
		switch r {
		case queue.ReasonFailed, queue.ReasonConflict, queue.ReasonStale, queue.ReasonWithdrawn:
		default:
			other = append(other, r)
		}
	}
	sort.Strings(other)
	reasons = append(reasons, other...)
	vals := make([]float64, len(reasons))
	top := 1.0
	for i, r := range reasons {
		vals[i] = float64(by[r])
		top = math.Max(top, vals[i])
	}
	s := newSVG("evictions", "departures without landing, by reason", countMax(top))
	s.axes("entries")
	s.bars(vals, func(float64) string { return "#cf222e" }, func(i int) string {
		return fmt.Sprintf(`data-reason="%s"`, template.HTMLEscapeString(reasons[i]))
	}, func(i int) string {
		return fmt.Sprintf("%s: %d", reasons[i], by[reasons[i]])
	})
	slot := (s.x1() - s.x0()) / float64(len(reasons))
	for i, r := range reasons {
		fmt.Fprintf(&s.b, `<text x="%.1f" y="%d" font-size="11" text-anchor="middle" fill="#1f2328">%s</text>`,
			s.x0()+slot*(float64(i)+0.5), chartH-10, template.HTMLEscapeString(r))
	}
	return s.done()
}

// niceMax rounds v up to 1, 2 or 5 times a power of ten.
func niceMax(v float64) float64 {
	if v <= 0 {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(v)))
	for _, m := range []float64{1, 2, 5, 10} {
		if m*p >= v {
			return m * p
		}
	}
	return 10 * p
}

// countMax is the top of a chart of counts up to v: four ticks of a whole
// step of 1, 2 or 5 times a power of ten, above v.
func countMax(v float64) float64 {
	step := niceMax(math.Max(1, math.Ceil(v*1.1/4)))
	return 4 * step
}

// ticks is 0 and four more evenly up to top.
func ticks(top float64) []float64 {
	out := make([]float64, 0, 5)
	for i := 0; i <= 4; i++ {
		out = append(out, top*float64(i)/4)
	}
	return out
}

// num prints a number as the charts' data attributes carry it: an integer
// without a point, else with up to two decimals.
func num(v float64) string {
	if v == math.Trunc(v) {
		return fmt.Sprintf("%d", int64(v))
	}
	return strings.TrimRight(strings.TrimRight(fmt.Sprintf("%.2f", v), "0"), ".")
}
