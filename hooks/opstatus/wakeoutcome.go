package opstatus

// Wake rule outcomes (docs/operating.md "Wake rules", "When a wake rule
// fails"): every run of a wake rule leaves one record of how it ended, so
// that a rule that fails is shown where people look (`git+ queue show`,
// the page, /metrics' gitplus_wake_failures_total) and not only in its log.
//
// Decisions:
//   - A detached run is supervised by `git+ hook wake-run` (SuperviseWake):
//     it starts the rule's command with the environment it was given, its
//     output appended to the rule's log as before and its last non-empty
//     line kept, waits, and appends the outcome. A command that cannot be
//     started is a failure ("cannot start: ..."); so is a supervisor the
//     post-receive cannot start (recorded by the post-receive itself), and
//     a run by hand (`git+ wake`) that fails.
//   - The records are JSON lines in <gitdir>/gitplus/wake/outcomes.log, one
//     write(2) each on a file opened O_APPEND (concurrent runs never
//     interleave), the line cut to 400 bytes. The file rotates to
//     outcomes.log.1 at 1 MiB; readers read both, so at most about 2 MiB
//     are kept.
//   - A rule is failing when its latest outcome is a failure: it "failed N
//     times since T" counts the failures after its last success (T the
//     first of them). gitplus_wake_failures_total counts every failure
//     kept in the files (so it resets when they rotate away or are
//     deleted, which Prometheus reads as a counter reset).

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"time"
)

// WakeOutcomesFile holds the outcome records, relative to the git directory.
const WakeOutcomesFile = "gitplus/wake/outcomes.log"

// wakeOutcomesMax is the size at which the records rotate.
const wakeOutcomesMax = 1 << 20

// MaxWakeLine bounds the last output line a record keeps.
const MaxWakeLine = 400

// WakeOutcome is how one run of a wake rule ended.
type WakeOutcome struct {
	Rule  string    `json:"rule"`
	Time  time.Time `json:"time"` // when it ended
	OK    bool      `json:"ok"`
	Exit  int       `json:"exit"`            // exit status (-1: killed by a signal or never started)
	Error string    `json:"error,omitempty"` // why it could not start, or how it ended
	Line  string    `json:"line,omitempty"`  // its last non-empty output line
}

// WakeFailure is a rule whose latest run failed.
type WakeFailure struct {
	Rule     string    `json:"rule"`
	Failures int       `json:"failures"` // since its last success
	Since    time.Time `json:"since"`    // the first of them
	Last     time.Time `json:"last"`
	Exit     int       `json:"exit"`
	Error    string    `json:"error,omitempty"`
	Line     string    `json:"line,omitempty"`
}

// String is the line queue show and the page print.
func (f WakeFailure) String() string {
	times := "once"
	if f.Failures != 1 {
		times = fmt.Sprintf("%d times", f.Failures)
	}
	why := f.Line
	if why == "" {
		why = f.Error
	}
	if why == "" {
		why = fmt.Sprintf("exit %d", f.Exit)
	}
	return fmt.Sprintf("wake rule %s failed %s since %s: %s", f.Rule, times, f.Since.UTC().Format(time.RFC3339), why)
}

// RecordWake appends o to gitDir's outcome records.
func RecordWake(gitDir string, o WakeOutcome) error {
	o.Line = cutLine(o.Line)
	o.Error = cutLine(o.Error)
	b, err := json.Marshal(o)
	if err != nil {
		return err
	}
	return appendRecords(gitDir, WakeOutcomesFile, wakeOutcomesMax, append(b, '\n'), "the outcome of wake rule "+o.Rule)
}

func cutLine(s string) string {
	s = strings.TrimSpace(strings.ToValidUTF8(s, "?"))
	if len(s) > MaxWakeLine {
		s = strings.ToValidUTF8(s[:MaxWakeLine], "") + "…"
	}
	return s
}

// ReadWakeOutcomes returns gitDir's outcome records, oldest first (lines
// that do not decode, such as a torn last line, are skipped). No records is
// no error.
func ReadWakeOutcomes(gitDir string) ([]WakeOutcome, error) {
	return readRecords(gitDir, WakeOutcomesFile, "the wake outcomes", func(o WakeOutcome) bool { return o.Rule != "" },
		func(o WakeOutcome) time.Time { return o.Time })
}

// WakeFailing returns the rules whose latest outcome is a failure, by rule
// id, with the failures since their last success.
func WakeFailing(outcomes []WakeOutcome) []WakeFailure {
	by := map[string]*WakeFailure{}
	for _, o := range outcomes {
		if o.OK {
			delete(by, o.Rule)
			continue
		}
		f := by[o.Rule]
		if f == nil {
			f = &WakeFailure{Rule: o.Rule, Since: o.Time}
			by[o.Rule] = f
		}
		f.Failures++
		f.Last, f.Exit, f.Error, f.Line = o.Time, o.Exit, o.Error, o.Line
	}
	out := make([]WakeFailure, 0, len(by))
	for _, f := range by {
		out = append(out, *f)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Rule < out[j].Rule })
	return out
}

// WakeFailingIn is WakeFailing over gitDir's records.
func WakeFailingIn(gitDir string) ([]WakeFailure, error) {
	all, err := ReadWakeOutcomes(gitDir)
	return WakeFailing(all), err
}

// WakeFailureTotals counts the failures of every rule in outcomes.
func WakeFailureTotals(outcomes []WakeOutcome) map[string]int {
	n := map[string]int{}
	for _, o := range outcomes {
		if !o.OK {
			n[o.Rule] += 1
		} else if _, ok := n[o.Rule]; !ok {
			n[o.Rule] = 0
		}
	}
	return n
}
