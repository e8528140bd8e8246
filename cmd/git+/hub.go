package main

// Shared context of the hub verbs (init, member, rules, pr, queue, whoami):
// their command construction, and the repository, key and writers of
// package receive/repo, journalled for --json.
//
// Decisions (see README.md, Reference):
//   - Flags may follow positional arguments (`git+ pr show ID --json`), as
//     for every verb: args.go.
//   - The global --key (or $GITPLUS_KEY, then ssh-agent) signs; `member add
//     --key` names the member's public key, so the signing key goes before the
//     verb or in $GITPLUS_KEY.

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/gitplus/gitplus/hubrefs/trust"
	"github.com/gitplus/gitplus/receive/repo"
	"github.com/gitplus/gitplus/receive/termtext"
)

// ---- command construction -------------------------------------------------

// remoteFlag names where hub events are fetched from and pushed to.
func remoteFlag() cli.Flag {
	return &cli.StringFlag{Name: "remote", Usage: "remote holding the hub refs (default: . in a bare repository; in a clone the current branch's upstream remote, then origin)"}
}

// hubVerb makes cmd accept flags after its positional arguments: the outer
// command skips urfave/cli's parsing, reorders the arguments (flags first)
// and runs cmd on them.
func hubVerb(cmd *cli.Command) *cli.Command {
	withJSON(cmd, cmd.Name) // here, not in runLeaf, so that normalizeArgs sees --json
	w := &cli.Command{
		Name:            cmd.Name,
		Usage:           cmd.Usage,
		ArgsUsage:       cmd.ArgsUsage,
		Description:     cmd.Description + flagHelp(cmd),
		SkipFlagParsing: true,
		Action: func(c *cli.Context) error {
			parent := cli.NewContext(c.App, nil, c)
			parent.Command = &cli.Command{Name: cmd.Name, Subcommands: []*cli.Command{cmd}, HelpName: "git+"}
			return runLeaf(parent, cmd, c.Args().Slice())
		},
	}
	hubVerbInner[w] = cmd
	return w
}

// hubGroup makes a verb with subcommands (member, rules, pr) whose
// subcommands accept flags after their positional arguments.
func hubGroup(name, usage string, subs ...*cli.Command) *cli.Command {
	var desc strings.Builder
	fmt.Fprintf(&desc, "Subcommands (git+ %s SUBCOMMAND --help for their flags):\n", name)
	for _, s := range subs {
		fmt.Fprintf(&desc, "   %-16s %s\n", strings.TrimSpace(s.Name+" "+s.ArgsUsage), s.Usage)
	}
	for _, s := range subs {
		withJSON(s, name+" "+s.Name) // here, not in runLeaf, so that normalizeArgs sees --json
	}
	group := &cli.Command{Name: name, Usage: usage, Description: desc.String(), SkipFlagParsing: true}
	hubGroupSubs[group] = subs
	group.Action = func(c *cli.Context) error {
		args := c.Args().Slice()
		if len(args) == 0 || args[0] == "help" || args[0] == "--help" || args[0] == "-h" {
			fmt.Fprintf(c.App.Writer, "usage: git+ %s SUBCOMMAND [ARGS] [FLAGS]\n\n%s", name, desc.String())
			if len(args) == 0 {
				return fail(2, errors.New(""))
			}
			return nil
		}
		for _, s := range subs {
			if s.HasName(args[0]) {
				// A parent context whose command lists the subcommands, so
				// `--help` on a subcommand finds its topic.
				parent := cli.NewContext(c.App, nil, c)
				parent.Command = &cli.Command{Name: name, Subcommands: subs, HelpName: "git+ " + name}
				return runLeaf(parent, s, args[1:])
			}
		}
		return usageErr("git+ %s: unknown subcommand %q; run `git+ %s help`", name, args[0], name)
	}
	return group
}

func runLeaf(parent *cli.Context, cmd *cli.Command, args []string) error {
	if cmd.OnUsageError == nil {
		cmd.OnUsageError = func(c *cli.Context, err error, _ bool) error { return fail(2, err) }
	}
	if cmd.HelpName == "" {
		cmd.HelpName = parent.Command.HelpName + " " + cmd.Name
	}
	withJSON(cmd, strings.TrimPrefix(cmd.HelpName, "git+ "))
	ctx := cli.NewContext(parent.App, nil, parent)
	ctx.Command = cmd
	flags, subs := argLevel(cmd)
	return cmd.Run(ctx, append([]string{cmd.Name}, normalizeArgs(flags, subs, args)...)...)
}

func flagHelp(cmd *cli.Command) string {
	var b strings.Builder
	if len(cmd.Flags) > 0 {
		b.WriteString("\n\nFlags:\n")
		for _, f := range cmd.Flags {
			fmt.Fprintf(&b, "   %s\n", f.String())
		}
	}
	return b.String()
}

// wantJSON reports whether --json was given before or after the verb.
// Every JSON output asks it first, so it is also where standard output
// takes JSON's escapes instead of text's (termtext): a verb prints either.
func wantJSON(c *cli.Context) bool {
	for _, x := range c.Lineage() {
		if x.Bool("json") {
			if t, ok := c.App.Writer.(*termtext.Writer); ok {
				t.SetJSON(true)
			}
			return true
		}
	}
	return false
}

// rootString reads a global flag (before the verb), even when the verb has
// a flag of the same name (member add --key).
func rootString(c *cli.Context, name string) string {
	// The root context is the outermost one with a command (urfave/cli
	// puts an empty context above it).
	l := c.Lineage()
	for i := len(l) - 1; i >= 0; i-- {
		if l[i].Command != nil {
			return l[i].String(name)
		}
	}
	return ""
}

// printView prints v as JSON (--json) or as its text.
func printView(c *cli.Context, v interface{ WriteText(io.Writer) }) error {
	if wantJSON(c) {
		return printJSON(c, v)
	}
	// Buffered: a pass over a long queue prints a line per entry, each a
	// system call when written straight to stdout (docs/scale.md). Write
	// errors are ignored, as before.
	w := bufio.NewWriter(c.App.Writer)
	v.WriteText(w)
	_ = w.Flush()
	return nil
}

// printLines prints list as JSON (--json), or each element's line.
func printLines[T interface{ Line() string }](c *cli.Context, list []T) error {
	if wantJSON(c) {
		return printJSON(c, list)
	}
	for _, v := range list {
		fmt.Fprintln(c.App.Writer, v.Line())
	}
	return nil
}

// printJSON prints v as JSON, with JSON's escapes also where a text
// output shows a JSON document (rules show).
func printJSON(c *cli.Context, v any) error {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return err
	}
	return termtext.WriteJSON(c.App.Writer, b.Bytes())
}

// ---- repository -----------------------------------------------------------

// openHub opens the repository named by --repo (or the current one) with
// --remote (repo.Open fetches the remote's hub refs), once per process:
// resolving an abbreviated id opens (and fetches) the repository before
// the verb does, and the verb must not fetch a second time. Its writes are
// journalled for --json.
func openHub(c *cli.Context) (*repo.Repo, error) {
	key := rootString(c, "repo") + "\x00" + c.String("remote")
	if h, ok := openedHubs[key]; ok {
		return h, nil
	}
	h, err := repo.Open(rootString(c, "repo"), c.String("remote"))
	if err != nil {
		return nil, err
	}
	h.OnAppend = journal.Append
	h.OnPush = func(ref, old, new string) {
		journal.Moved(ref, old, new, h.Remote)
		fmt.Fprintf(c.App.ErrWriter, "pushed %s to %s on %s\n", repo.Short(new), ref, h.Remote)
	}
	openedHubs[key] = h
	return h, nil
}

var openedHubs = map[string]*repo.Repo{}

// loadKey loads the signing key: --key (or $GITPLUS_KEY), else the first key
// in ssh-agent.
func loadKey(c *cli.Context) (*repo.Key, error) { return repo.LoadKey(rootString(c, "key")) }

// openSigning loads the signing key, opens the repository, folds trust and
// finds the key's member; with caps, the member must hold each of them.
func openSigning(c *cli.Context, caps ...string) (*repo.Signing, error) {
	key, err := loadKey(c)
	if err != nil {
		return nil, err
	}
	h, err := openHub(c)
	if err != nil {
		return nil, err
	}
	return repo.OpenSigning(h, key, caps...)
}

// readTrust opens the repository and folds its trust log.
func readTrust(c *cli.Context) (*repo.Repo, *trust.State, error) {
	h, err := openHub(c)
	if err != nil {
		return nil, nil, err
	}
	t, err := h.Trust()
	return h, t, err
}

// failed is err as the verb's exit: 2 for a usage mistake, else 1.
func failed(err error) error {
	if errors.Is(err, repo.ErrUsage) {
		return fail(2, err)
	}
	return fail(1, err)
}
