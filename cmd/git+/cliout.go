package main

// What every hub verb shares for a git user's expectations (docs/cli.md):
// abbreviated pull request and queue ids, and --json on writers (the events
// written with their ids and the refs moved).

import (
	"bytes"
	"encoding/json"
	"io"
	"strings"

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

// writtenEvent is one event a verb appended.
type writtenEvent struct {
	Ref    string `json:"ref"`
	Type   string `json:"type"`
	ID     string `json:"id"`
	Parent string `json:"parent,omitempty"`
}

// movedRef is one ref a verb moved (old is "" when it was created).
type movedRef struct {
	Ref    string `json:"ref"`
	Old    string `json:"old,omitempty"`
	New    string `json:"new"`
	Remote string `json:"remote"`
}

// journal records what this process wrote, for --json.
var journal struct {
	events  []writtenEvent
	refs    []movedRef
	details map[string]any
}

// writerJSON is what a writing verb prints with --json.
type writerJSON struct {
	Verb   string         `json:"verb"`
	Result string         `json:"result"` // what the verb prints alone: an id
	Output []string       `json:"output"` // every line it prints alone
	Events []writtenEvent `json:"events"`
	Refs   []movedRef     `json:"refs"`
	// Details are the verb's own facts (member change: the sets before
	// and after).
	Details map[string]any `json:"details,omitempty"`
}

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
		return printWriterJSON(out, name, buf.String())
	}
}

func printWriterJSON(w io.Writer, verb, text string) error {
	j := writerJSON{Verb: verb, Output: []string{}, Events: journal.events, Refs: journal.refs, Details: journal.details}
	for _, l := range strings.Split(strings.TrimRight(text, "\n"), "\n") {
		if l != "" {
			j.Output = append(j.Output, l)
		}
	}
	if len(j.Output) > 0 {
		j.Result = j.Output[len(j.Output)-1]
	}
	if j.Events == nil {
		j.Events = []writtenEvent{}
	}
	if j.Refs == nil {
		j.Refs = []movedRef{}
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(j)
}
