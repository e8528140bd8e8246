package main

// git+ rules {set,show}: the rules object of refs/hub/trust (docs/trust.md).

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/gitplus/gitplus/hubrefs/trust"
	"github.com/gitplus/gitplus/receive/jsonpos"
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
	var syntax any
	if err := json.Unmarshal(data, &syntax); err != nil {
		return fail(1, fmt.Errorf("rules in %s: %w; nothing was written", src, jsonpos.LocateJSONError(data, err)))
	}
	if _, err := trust.ParseRulesStrict(data); err != nil {
		return fail(1, fmt.Errorf("rules in %s: %w; nothing was written", src, err))
	}
	var compact bytes.Buffer
	if err := json.Compact(&compact, data); err != nil {
		return fail(1, fmt.Errorf("rules in %s: %w; nothing was written", src, err))
	}
	s, err := adminContext(c)
	if err != nil {
		return fail(1, err)
	}
	id, carried, err := s.SetRules(compact.Bytes(), src)
	if carried {
		fmt.Fprintf(c.App.ErrWriter, "kept requireKnownPusher: %t from the rules in force (name it in the document to change it)\n", *s.Trust.Rules.RequireKnownPusher)
	}
	if err != nil {
		return fail(1, err)
	}
	fmt.Fprintln(c.App.ErrWriter, "rules.set")
	notePristineBranches(c, s, data)
	fmt.Fprintln(c.App.Writer, id)
	return nil
}

// notePristineBranches tells, on standard error, which branches the rules
// protect that do not exist yet, and how their first commit comes in
// (docs/boundary.md "The first commit of a protected branch"): the README
// team guide sets the rules before anything is pushed.
func notePristineBranches(c *cli.Context, s *repo.Signing, data []byte) {
	rules, err := trust.ParseRulesStrict(data)
	if err != nil {
		return
	}
	var names []string
	for name, b := range rules.Protected {
		if b.RequirePullRequest && !strings.ContainsAny(name, "*?[") {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	for _, name := range names {
		if tip, err := s.Repo.RemoteRef(name); err != nil || !tip.IsZero() {
			continue
		}
		b := strings.TrimPrefix(name, "refs/heads/")
		fmt.Fprintf(c.App.ErrWriter, "note: %s does not exist yet; protected, its first commit lands like any other: on a branch of its own with a pull request onto it (git+ pr open --base %s --source BRANCH --push), approved, then git+ pr merge creates it (to start it from an existing history, push that before protecting it)\n", name, b)
	}
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
