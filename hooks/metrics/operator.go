package metrics

// The operator's alarms in /metrics (docs/operating.md "Metrics"): wake
// rule failures and updates of protected refs git+ did not judge, counted
// on scrape from the records the hooks keep (hooks/opstatus/wakeoutcome.go,
// hooks/opstatus/unjudged.go). Like the queue figures they count what is recorded,
// so deleting or rotating the records resets them (a counter reset). Every
// wake rule of wake.json and every protected branch pattern is exported,
// 0 until it counts, so that an alert's increase() sees the first one.

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/gitplus/gitplus/hooks/opstatus"
	"github.com/gitplus/gitplus/hooks/wake"
)

var (
	descWakeFailures = prometheus.NewDesc("gitplus_wake_failures_total", "Runs of a wake rule that exited non-zero or could not start, as recorded.", []string{"repository", "rule"}, nil)
	descUnjudged     = prometheus.NewDesc("gitplus_unjudged_updates_total", "Updates of protected refs (protected branches, hub refs) that git+'s pre-receive did not judge, as recorded by post-receive.", []string{"repository", "ref"}, nil)
)

func (c *Collector) collectOperator(ch chan<- prometheus.Metric, r Repo) {
	outcomes, err := opstatus.ReadWakeOutcomes(r.GitDir)
	if err != nil {
		c.logf("%s: %v", r.Name, err)
	}
	totals := opstatus.WakeFailureTotals(outcomes)
	if rules, err := wake.LoadWake(r.GitDir); err == nil { // every rule, 0 until it fails
		for _, w := range rules {
			totals[w.ID()] += 0
		}
	}
	for _, rule := range sortedKeys(totals) {
		ch <- prometheus.MustNewConstMetric(descWakeFailures, prometheus.CounterValue, float64(totals[rule]), r.Name, rule)
	}
	alarms, err := opstatus.ReadUnjudged(r.GitDir)
	if err != nil {
		c.logf("%s: %v", r.Name, err)
	}
	byRef := map[string]int{}
	if c.TrustOf != nil { // every protected branch, 0 until it moves unjudged
		if st, err := c.TrustOf(r.GitDir); err == nil && st != nil {
			for ref := range st.Rules.Protected {
				byRef[ref] += 0
			}
		}
	}
	for _, a := range alarms {
		byRef[opstatus.UnjudgedLabel(a.Ref)]++
	}
	for _, ref := range sortedKeys(byRef) {
		ch <- prometheus.MustNewConstMetric(descUnjudged, prometheus.CounterValue, float64(byRef[ref]), r.Name, ref)
	}
}
