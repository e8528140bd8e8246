package main

// What every hub verb shares for a git user's expectations (docs/cli.md):
// abbreviated pull request and queue ids, and --json on writers (the events
// written with their ids and the refs moved).

import (
	"bytes"

	"github.com/urfave/cli/v2"

	"github.com/gitplus/gitplus/hubrefs/trust"
	"github.com/gitplus/gitplus/receive/repo"
)

// resolveArgID expands a verb's id argument; opening the repository here
// fetches the remote's hub refs once for the whole verb (openedHubs).
func resolveArgID(c *cli.Context, prefix, kind, arg string) (string, error) {
	if trust.ValidUUID(arg) == nil {
		return arg, nil
	}
	if err := repo.ValidPrefix(arg); err != nil {
		return "", usageErr("%s id: %v", kind, err)
	}
	h, err := openHub(c)
	if err != nil {
		return "", fail(1, err)
	}
	id, err := h.ResolveID(prefix, kind, arg)
	if err != nil {
		return "", fail(1, err)
	}
	return id, nil
}

// ---- --json on writers ------------------------------------------------------

// journal records what this process wrote, for --json.
var journal repo.Journal

// withJSON gives cmd a --json flag when it has none of its own: its text
// output is captured and printed as writerJSON, with the journal.
func withJSON(cmd *cli.Command, name string) {
	for _, f := range cmd.Flags {
		for _, n := range f.Names() {
			if n == "json" {
				return
			}
		}
	}
	cmd.Flags = append(cmd.Flags, jsonFlag())
	action := cmd.Action
	if action == nil {
		return
	}
	cmd.Action = func(c *cli.Context) error {
		if !wantJSON(c) {
			return action(c)
		}
		out := c.App.Writer
		var buf bytes.Buffer
		c.App.Writer = &buf
		err := action(c)
		c.App.Writer = out
		if err != nil {
			return err
		}
		return journal.WriteJSON(out, name, buf.String())
	}
}
