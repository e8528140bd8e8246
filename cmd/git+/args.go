package main

// Flags after positional arguments, for every verb (README.md "Reference":
// `git+ member token revoke NAME --id ID`, `git+ pr show ID --json`).
//
// Decisions:
//   - urfave/cli v2 stops parsing a command's flags at its first positional
//     argument. So run() rewrites the command line once, before the app
//     parses anything (normalizeArgs): along the command path — the global
//     flags, the verb, its subcommands — each flag (with its value) goes to
//     the level that defines it, before the name of the next level; at the
//     last level the positional arguments follow, after a "--" so that one
//     starting with '-' stays a positional.
//   - A flag goes to the deepest level of the path that defines it (the
//     verb's own --key before the global one, as for `member add`); a flag
//     only a level above defines (--json, --repo, --key after the verb)
//     goes up there; a flag no level defines stays at the deepest level,
//     where urfave/cli reports it.
//   - Whether a flag takes a value comes from its definition (a BoolFlag
//     does not); --name=value is one argument; an unknown flag takes none.
//     -h/--help belong to the deepest level.
//   - "--" ends the flags: everything after it is positional, verbatim, as
//     given (the command of `check run`, the options `pr diff` passes to
//     git diff).
//   - The first positional that does not name a subcommand ends the path:
//     every later word is a positional of that level, even one that happens
//     to spell a subcommand.
//   - The hub verbs (hubVerb, hubGroup in hub.go) skip urfave/cli's parsing
//     and run their leaf themselves (runLeaf). The rewrite sees through them
//     (hubVerbInner, hubGroupSubs); runLeaf rewrites its part again, which
//     changes nothing on a line already rewritten.

import (
	"strings"

	"github.com/urfave/cli/v2"
)

// hubVerbInner maps a hubVerb wrapper to the command it runs on its
// arguments; hubGroupSubs maps a hubGroup wrapper to its subcommands.
var (
	hubVerbInner = map[*cli.Command]*cli.Command{}
	hubGroupSubs = map[*cli.Command][]*cli.Command{}
)

// argLevel returns the flags and subcommands c takes on its command line,
// seen through the hub wrappers.
func argLevel(c *cli.Command) (flags []cli.Flag, subs []*cli.Command) {
	if in, ok := hubVerbInner[c]; ok {
		return argLevel(in)
	}
	if s, ok := hubGroupSubs[c]; ok {
		return nil, s
	}
	return c.Flags, c.Subcommands
}

// takesValue reports whether flag f reads the next argument as its value.
func takesValue(f cli.Flag) bool {
	if v, ok := f.(interface{ TakesValue() bool }); ok {
		return v.TakesValue()
	}
	return false
}

func findFlag(flags []cli.Flag, name string) cli.Flag {
	for _, f := range flags {
		for _, n := range f.Names() {
			if n == name {
				return f
			}
		}
	}
	return nil
}

func findSub(subs []*cli.Command, name string) *cli.Command {
	for _, s := range subs {
		if s.HasName(name) {
			return s
		}
	}
	return nil
}

// isFlagArg reports whether a is written as a flag ("-x", "--name",
// "--name=v"); "-" and "--" are not.
func isFlagArg(a string) bool { return len(a) >= 2 && a[0] == '-' && a != "--" }

// normalizeArgs rewrites args, the arguments after a command whose flags
// are flags and whose subcommands are subs, so that urfave/cli reads every
// flag wherever it was written (see the file's comment).
func normalizeArgs(flags []cli.Flag, subs []*cli.Command, args []string) []string {
	type level struct {
		name  string // "" for the first level
		flags []cli.Flag
		out   []string
	}
	levels := []*level{{flags: flags}}
	var pos []string
	inPath := true // no positional seen yet: a word may name a subcommand
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			pos = append(pos, args[i+1:]...)
			break
		}
		if !isFlagArg(a) {
			if inPath {
				if s := findSub(subs, a); s != nil {
					f, ss := argLevel(s)
					levels = append(levels, &level{name: a, flags: f})
					subs = ss
					continue
				}
			}
			inPath = false
			pos = append(pos, a)
			continue
		}
		name, _, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		target := levels[len(levels)-1]
		var def cli.Flag
		if name != "help" && name != "h" {
			for j := len(levels) - 1; j >= 0; j-- {
				if f := findFlag(levels[j].flags, name); f != nil {
					target, def = levels[j], f
					break
				}
			}
		}
		target.out = append(target.out, a)
		if !hasValue && def != nil && takesValue(def) && i+1 < len(args) {
			i++
			target.out = append(target.out, args[i])
		}
	}
	var out []string
	for _, l := range levels {
		if l.name != "" {
			out = append(out, l.name)
		}
		out = append(out, l.out...)
	}
	if len(pos) == 0 {
		return out
	}
	if len(subs) > 0 {
		// The path ends at a command with subcommands and a word that names
		// none: left as written, for that command to report.
		return append(out, pos...)
	}
	return append(append(out, "--"), pos...)
}
