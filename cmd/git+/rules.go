package main

// git+ rules {set,show}: the rules object of refs/hub/trust (docs/trust.md).

import (
	"fmt"
	"io"
	"os"

	"github.com/urfave/cli/v2"

	"github.com/gitplus/gitplus/receive/repo"
)

func init() {
	register(hubGroup("rules", "set and show the rules protecting branches",
		&cli.Command{
			Name:      "set",
			Usage:     "replace the rules with a JSON document (FILE, or - for standard input); unknown fields are refused",
			ArgsUsage: "FILE|-",
			Flags:     []cli.Flag{remoteFlag()},
			Action:    nargs(1, 1, "usage: git+ rules set FILE|-", rulesSet),
		},
		&cli.Command{
			Name:   "show",
			Usage:  "print the rules in force, every default filled in",
			Flags:  []cli.Flag{jsonFlag(), remoteFlag()},
			Action: nargs(0, 0, "usage: git+ rules show [--json]", rulesShow),
		},
	))
}

func rulesSet(c *cli.Context) error {
	src := c.Args().First()
	var data []byte
	var err error
	if src == "-" {
		data, err = io.ReadAll(c.App.Reader)
		src = "standard input"
	} else {
		data, err = os.ReadFile(src)
	}
	if err != nil {
		return fail(1, fmt.Errorf("reading rules from %s: %w", src, err))
	}
	doc, err := repo.RulesDocument(data, src)
	if err != nil {
		return fail(1, err)
	}
	s, err := adminContext(c)
	if err != nil {
		return fail(1, err)
	}
	id, carried, err := s.SetRules(doc, src)
	if carried {
		fmt.Fprintf(c.App.ErrWriter, "kept requireKnownPusher: %t from the rules in force (name it in the document to change it)\n", *s.Trust.Rules.RequireKnownPusher)
	}
	if err != nil {
		return fail(1, err)
	}
	fmt.Fprintln(c.App.ErrWriter, "rules.set")
	for _, note := range s.PristineNotes(data) {
		fmt.Fprintln(c.App.ErrWriter, note)
	}
	fmt.Fprintln(c.App.Writer, id)
	return nil
}

func rulesShow(c *cli.Context) error {
	_, t, err := readTrust(c)
	if err != nil {
		return fail(1, err)
	}
	if wantJSON(c) {
		return printJSON(c, t.Rules)
	}
	if t.RulesID.IsZero() {
		fmt.Fprintln(c.App.Writer, "# no rules.set yet: nothing is protected")
	} else {
		fmt.Fprintf(c.App.Writer, "# rules.set %s\n", t.RulesID)
	}
	return printJSON(c, t.Rules)
}
