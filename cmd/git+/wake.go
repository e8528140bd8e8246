package main

// git+ wake: run the repository's wake rules (hub/wake.json, docs/operating.md)
// by hand.
//
// Decisions:
//   - `git+ wake --sweep` runs every rule once; `git+ wake --ref R --event T
//     [--event T…]` runs the rules a push of R bringing events of types T
//     would wake (the post-receive matching, hooks.Match). --rule ID limits
//     either to one rule. --dry-run prints the rules and runs nothing.
//   - Rules run in the foreground, one after the other in file order, in the
//     git directory, with this process's standard output and error, and
//     the environment a hook gives them (GITPLUS_WAKE_RULE and the
//     gitplus-wake push option), so a rule run by hand does not wake
//     itself either. Exit 1 if any rule failed; 0 with "no rule matches"
//     when none applies. Per-event rules (placeholders such as {event.pr})
//     are skipped: only a push's events can fill them.

import (
	"fmt"
	"os"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/gitplus/gitplus/hooks"
)

func init() {
	register(&cli.Command{
		Name:  "wake",
		Usage: "run the repository's wake rules by hand (--sweep: all of them; --ref/--event: those a push would wake)",
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "sweep", Usage: "run every rule once"},
			&cli.StringFlag{Name: "ref", Usage: "a ref a push updated (full name, e.g. refs/hub/pr/ID)"},
			&cli.StringSliceFlag{Name: "event", Usage: "a type of event that push brought (repeatable)"},
			&cli.StringFlag{Name: "rule", Usage: "only the rule with this id (its name, or the r… id in the logs)"},
			&cli.BoolFlag{Name: "dry-run", Usage: "print the rules that would run, run nothing"},
		},
		Action: wakeAction,
	})
}

func wakeAction(c *cli.Context) error {
	usage := "usage: git+ wake (--sweep | --ref REF [--event TYPE]...) [--rule ID] [--dry-run]"
	if c.NArg() != 0 || c.Bool("sweep") == (c.String("ref") != "") {
		return usageErr("%s", usage)
	}
	gitDir, _, err := findGitDir(rootString(c, "repo"))
	if err != nil {
		return fail(1, err)
	}
	rules, err := hooks.LoadWake(gitDir)
	if err != nil {
		return fail(1, err)
	}
	if len(rules) == 0 {
		fmt.Fprintf(c.App.Writer, "no wake rules in %s/%s: nothing to do\n", gitDir, hooks.WakeFile)
		return nil
	}
	picked := rules
	if !c.Bool("sweep") {
		picked = hooks.Match(rules, []hooks.RefUpdate{{Ref: c.String("ref"), Types: c.StringSlice("event")}}, nil)
	}
	if id := c.String("rule"); id != "" {
		var one []hooks.WakeRule
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
			return fail(1, fmt.Errorf("no wake rule %q in %s/%s (rules: %s)", id, gitDir, hooks.WakeFile, strings.Join(known, ", ")))
		}
		picked = one
	}
	if len(picked) == 0 {
		fmt.Fprintf(c.App.Writer, "no rule matches: nothing to do\n")
		return nil
	}
	bin, err := hooks.Executable()
	if err != nil {
		return fail(1, err)
	}
	failed := 0
	for _, r := range picked {
		if r.PerEvent() {
			fmt.Fprintf(c.App.Writer, "wake %s: skipped: its run holds event placeholders, so only a push's events can fill them\n", r.ID())
			continue
		}
		fmt.Fprintf(c.App.Writer, "wake %s: %s\n", r.ID(), strings.Join(r.Run, " "))
		if c.Bool("dry-run") {
			continue
		}
		cmd := hooks.WakeCommand(gitDir, bin, r, os.Environ())
		cmd.Stdout, cmd.Stderr = c.App.Writer, c.App.ErrWriter
		if err := cmd.Run(); err != nil {
			failed++
			fmt.Fprintf(c.App.ErrWriter, "git+: wake %s (%s) in %s: %v\n", r.ID(), strings.Join(r.Run, " "), gitDir, err)
		}
	}
	if failed > 0 {
		return fail(1, fmt.Errorf("%d of %d wake rules failed", failed, len(picked)))
	}
	return nil
}
