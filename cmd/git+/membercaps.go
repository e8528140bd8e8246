package main

// member change --add-cap/--remove-cap (docs/cli.md, "Members"): edit the
// capability set instead of replacing it; --cap keeps meaning "replace".
// Every change prints the set before and after.

import (
	"fmt"
	"slices"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/gitplus/gitplus/hubrefs/trust"
)

// capEdit is the --add-cap and --remove-cap of one member change.
type capEdit struct{ add, remove []string }

// capEditFlags reads and checks --add-cap and --remove-cap; with --cap
// they are a usage error (replace and edit at once is ambiguous).
func capEditFlags(c *cli.Context) (capEdit, error) {
	e := capEdit{add: c.StringSlice("add-cap"), remove: c.StringSlice("remove-cap")}
	if len(e.add)+len(e.remove) == 0 {
		return e, nil
	}
	if c.IsSet("cap") {
		return e, usageErr("git+ member change: --cap replaces every capability; give it alone, or use --add-cap/--remove-cap")
	}
	for _, cp := range append(append([]string{}, e.add...), e.remove...) {
		if err := trust.ValidCap(cp); err != nil {
			return e, fail(1, fmt.Errorf("capability %q: %w", cp, err))
		}
	}
	for _, cp := range e.add {
		if slices.Contains(e.remove, cp) {
			return e, usageErr("git+ member change: %s is both added and removed", cp)
		}
	}
	return e, nil
}

// apply edits caps (the member's current set): a removed capability the
// member does not hold is an error (a typo would otherwise pass silently);
// an added one already held is kept once.
func (e capEdit) apply(name string, caps []string) ([]string, error) {
	out := append([]string(nil), caps...)
	for _, cp := range e.remove {
		i := slices.Index(out, cp)
		if i < 0 {
			return nil, fmt.Errorf("member %s does not hold %s (holds: %s); nothing written", name, cp, capList(caps))
		}
		out = slices.Delete(out, i, i+1)
	}
	for _, cp := range e.add {
		if !slices.Contains(out, cp) {
			out = append(out, cp)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("member %s would hold no capability: remove the member with `git+ member remove %s` instead; nothing written", name, name)
	}
	return out, nil
}

func capList(caps []string) string {
	if len(caps) == 0 {
		return "none"
	}
	s := append([]string(nil), caps...)
	slices.Sort(s)
	return strings.Join(s, " ")
}

// reportCaps prints the set before and after a member change (standard
// error; with --json, in the writer's details).
func reportCaps(c *cli.Context, name string, before, after []string) {
	fmt.Fprintf(c.App.ErrWriter, "capabilities of %s: was %s\n", name, capList(before))
	fmt.Fprintf(c.App.ErrWriter, "capabilities of %s: now %s\n", name, capList(after))
	b, a := append([]string{}, before...), append([]string{}, after...)
	slices.Sort(b)
	slices.Sort(a)
	journal.details = map[string]any{"member": name, "capsBefore": b, "capsAfter": a}
}
