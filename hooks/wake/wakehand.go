package wake

// Wake rules run by hand (`git+ wake`, docs/operating.md).
//
// Decisions:
//   - Sweep runs every rule once; otherwise the rules a push of Ref bringing
//     events of types Events would wake (the post-receive matching, Match).
//     Rule limits either to one rule. DryRun prints the rules and runs
//     nothing.
//   - Rules run in the foreground, one after the other in file order, in
//     the git directory, with the caller's standard output and error, and
//     the environment a hook gives them (GITPLUS_WAKE_RULE and the
//     gitplus-wake push option), so a rule run by hand does not wake itself
//     either. It fails if any rule failed; "no rule matches" when none
//     applies is no failure. Each run's outcome is recorded as a detached
//     run's is (wakerun.go, hooks/opstatus). Per-event rules (placeholders
//     such as {event.pr}) are skipped: only a push's events can fill them.

import (
	"fmt"
	"io"
	"strings"

	"github.com/gitplus/gitplus/hooks/config"
	"github.com/gitplus/gitplus/hooks/opstatus"
)

// WakeByHand is one `git+ wake`.
type WakeByHand struct {
	Sweep   bool     // every rule
	Ref     string   // else: the rules a push of Ref ...
	Events  []string // ... bringing events of these types would wake
	Rule    string   // only the rule with this id ("": any)
	DryRun  bool     // print, run nothing
	Environ []string // the environment rules run with (os.Environ())
	Stdout  io.Writer
	Stderr  io.Writer
}

// Run runs the wake rules of gitDir that w picks.
func (w WakeByHand) Run(gitDir string) error {
	rules, err := LoadWake(gitDir)
	if err != nil {
		return err
	}
	if len(rules) == 0 {
		fmt.Fprintf(w.Stdout, "no wake rules in %s/%s: nothing to do\n", gitDir, config.WakeFile)
		return nil
	}
	picked := rules
	if !w.Sweep {
		picked = Match(rules, []RefUpdate{{Ref: w.Ref, Types: w.Events}}, nil)
	}
	if id := w.Rule; id != "" {
		var one []WakeRule
		known := make([]string, 0, len(rules))
		for _, r := range rules {
			known = append(known, r.ID())
		}
		for _, r := range picked {
			if r.ID() == id {
				one = append(one, r)
			}
		}
		if len(one) == 0 && !strings.Contains(" "+strings.Join(known, " ")+" ", " "+id+" ") {
			return fmt.Errorf("no wake rule %q in %s/%s (rules: %s)", id, gitDir, config.WakeFile, strings.Join(known, ", "))
		}
		picked = one
	}
	if len(picked) == 0 {
		fmt.Fprintf(w.Stdout, "no rule matches: nothing to do\n")
		return nil
	}
	bin, err := Executable()
	if err != nil {
		return err
	}
	failed := 0
	for _, r := range picked {
		if r.PerEvent() {
			fmt.Fprintf(w.Stdout, "wake %s: skipped: its run holds event placeholders, so only a push's events can fill them\n", r.ID())
			continue
		}
		fmt.Fprintf(w.Stdout, "wake %s: %s\n", r.ID(), strings.Join(r.Run, " "))
		if w.DryRun {
			continue
		}
		cmd := WakeCommand(gitDir, bin, r, w.Environ)
		out, errw := &tailWriter{w: w.Stdout}, &tailWriter{w: w.Stderr}
		cmd.Stdout, cmd.Stderr = out, errw
		started := false
		err := cmd.Start()
		if err == nil {
			started = true
			err = cmd.Wait()
		}
		last := errw.Last()
		if last == "" {
			last = out.Last()
		}
		_ = opstatus.RecordWake(gitDir, outcomeOf(r.ID(), err, last, started)) // hooks/opstatus/wakeoutcome.go
		_ = opstatus.PublishStatus(gitDir)                                     // hooks/opstatus/opstatus.go
		if err != nil {
			failed++
			fmt.Fprintf(w.Stderr, "git+: wake %s (%s) in %s: %v\n", r.ID(), strings.Join(r.Run, " "), gitDir, err)
		}
	}
	if failed > 0 {
		return fmt.Errorf("%d of %d wake rules failed", failed, len(picked))
	}
	return nil
}
