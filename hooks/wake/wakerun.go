package wake

// A wake rule's run supervised (docs/operating.md "When a wake rule
// fails"): `git+ hook wake-run` runs the rule's command, keeps its last
// line and records how it ended (hooks/opstatus/wakeoutcome.go).

import (
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"sync"
	"time"

	"github.com/gitplus/gitplus/hooks/opstatus"
)

// tailWriter passes writes on and keeps the last non-empty line.
type tailWriter struct {
	w    io.Writer
	mu   sync.Mutex
	cur  []byte // the line being written
	last string
}

func (t *tailWriter) Write(p []byte) (int, error) {
	t.mu.Lock()
	for _, c := range p {
		if c == '\n' || c == '\r' {
			if s := strings.TrimSpace(string(t.cur)); s != "" {
				t.last = s
			}
			t.cur = t.cur[:0]
			continue
		}
		if len(t.cur) < 4*opstatus.MaxWakeLine {
			t.cur = append(t.cur, c)
		}
	}
	t.mu.Unlock()
	if t.w == nil {
		return len(p), nil
	}
	return t.w.Write(p)
}

func (t *tailWriter) Last() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	if s := strings.TrimSpace(string(t.cur)); s != "" {
		return s
	}
	return t.last
}

// outcomeOf is the outcome of a finished (or never started) command.
func outcomeOf(rule string, err error, line string, started bool) opstatus.WakeOutcome {
	o := opstatus.WakeOutcome{Rule: rule, Time: time.Now().UTC(), OK: err == nil, Line: line}
	var ee *exec.ExitError
	switch {
	case err == nil:
	case !started:
		o.Exit, o.Error = -1, "cannot start: "+err.Error()
	case errors.As(err, &ee):
		o.Exit = ee.ExitCode()
		if o.Exit < 0 {
			o.Error = err.Error() // "signal: killed"
		}
	default:
		o.Exit, o.Error = -1, err.Error()
	}
	return o
}

// SuperviseWake is `git+ hook wake-run`: it runs argv (with this process's
// environment, in gitDir) for rule, its output to out (the rule's log),
// then writes the "=== <time> exit <status>" line and records the outcome.
// It returns the outcome.
func SuperviseWake(gitDir, rule string, argv []string, out io.Writer) opstatus.WakeOutcome {
	tw := &tailWriter{w: out}
	var o opstatus.WakeOutcome
	if len(argv) == 0 {
		o = outcomeOf(rule, errors.New("the rule has no command"), "", false)
	} else {
		cmd := exec.Command(argv[0], argv[1:]...)
		cmd.Dir = gitDir
		cmd.Stdout, cmd.Stderr = tw, tw
		if err := cmd.Start(); err != nil {
			fmt.Fprintf(out, "=== could not start: %v\n", err)
			o = outcomeOf(rule, err, "", false)
		} else {
			o = outcomeOf(rule, cmd.Wait(), tw.Last(), true)
		}
	}
	fmt.Fprintf(out, "=== %s exit %d\n", o.Time.Format(time.RFC3339), o.Exit)
	if err := opstatus.RecordWake(gitDir, o); err != nil {
		fmt.Fprintf(out, "=== %v\n", err)
	}
	if err := opstatus.PublishStatus(gitDir); err != nil { // hooks/opstatus/opstatus.go
		fmt.Fprintf(out, "=== %v\n", err)
	}
	return o
}
