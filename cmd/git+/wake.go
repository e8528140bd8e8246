package main

// git+ wake: run the repository's wake rules by hand (wake.WakeByHand,
// docs/operating.md).

import (
	"os"

	"github.com/urfave/cli/v2"

	"github.com/gitplus/gitplus/hooks/wake"
	"github.com/gitplus/gitplus/receive/termtext"
)

const wakeUsage = "usage: git+ wake (--sweep | --ref REF [--event TYPE]...) [--rule ID] [--dry-run]"

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
		Action: inGitDir(wakeUsage, 0, 0, wakeAction),
	})
}

func wakeAction(c *cli.Context, gitDir string) error {
	if c.Bool("sweep") == (c.String("ref") != "") {
		return usageErr("%s", wakeUsage)
	}
	// The rules' commands are the operator's (hub/wake.json), run here as
	// if typed: they get the terminal itself, not git+'s text filter
	// (docs/cli.md "Text on a terminal"); git+ verbs among them escape
	// their own text.
	w := wake.WakeByHand{Sweep: c.Bool("sweep"), Ref: c.String("ref"), Events: c.StringSlice("event"), Rule: c.String("rule"),
		DryRun: c.Bool("dry-run"), Environ: os.Environ(), Stdout: termtext.Raw(c.App.Writer), Stderr: termtext.Raw(c.App.ErrWriter)}
	return w.Run(gitDir)
}
