package main

// member change --add-cap/--remove-cap (docs/cli.md, "Members"): the edit
// is trust.CapEdit; this file reads the flags and prints the sets.

import (
	"errors"
	"fmt"
	"slices"

	"github.com/urfave/cli/v2"

	"github.com/gitplus/gitplus/hubrefs/trust"
)

// capEditFlags reads and checks --add-cap and --remove-cap; with --cap
// they are a usage error (replace and edit at once is ambiguous).
func capEditFlags(c *cli.Context) (trust.CapEdit, error) {
	e := trust.CapEdit{Add: c.StringSlice("add-cap"), Remove: c.StringSlice("remove-cap")}
	if e.Empty() {
		return e, nil
	}
	if c.IsSet("cap") {
		return e, usageErr("git+ member change: --cap replaces every capability; give it alone, or use --add-cap/--remove-cap")
	}
	var ce *trust.CapEditError
	if err := e.Validate(); errors.As(err, &ce) {
		return e, usageErr("git+ member change: %v", err)
	} else if err != nil {
		return e, fail(1, err)
	}
	return e, nil
}

// reportCaps prints the set before and after a member change (standard
// error; with --json, in the writer's details).
func reportCaps(c *cli.Context, name string, before, after []string) {
	fmt.Fprintf(c.App.ErrWriter, "capabilities of %s: was %s\n", name, trust.CapList(before))
	fmt.Fprintf(c.App.ErrWriter, "capabilities of %s: now %s\n", name, trust.CapList(after))
	b, a := append([]string{}, before...), append([]string{}, after...)
	slices.Sort(b)
	slices.Sort(a)
	journal.Details = map[string]any{"member": name, "capsBefore": b, "capsAfter": a}
}
