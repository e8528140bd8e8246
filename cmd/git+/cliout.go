package main

// What every hub verb shares for a git user's expectations (docs/cli.md):
// abbreviated pull request and queue ids, and --json on writers (the events
// written with their ids and the refs moved).

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/urfave/cli/v2"

	"github.com/gitplus/gitplus/hubrefs"
	"github.com/gitplus/gitplus/hubrefs/trust"
)

// Sentinel errors of id resolution.
var (
	ErrAmbiguousID = errors.New("ambiguous id")
	ErrUnknownID   = errors.New("no such id")
)

// minPrefix is the shortest abbreviation accepted, as git's shortest
// abbreviated object name.
const minPrefix = 4

// validPrefix reports whether s may abbreviate a UUID: 4 to 36 characters,
// lower-case hex digits and dashes.
func validPrefix(s string) error {
	if len(s) < minPrefix || len(s) > 36 {
		return fmt.Errorf("%q is not an id or an abbreviation of one (at least %d characters of it)", clipArg(s), minPrefix)
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F' || c == '-') {
			return fmt.Errorf("%q is not an id: only hex digits and dashes", clipArg(s))
		}
	}
	return nil
}

// resolveID expands arg, a full id or an unambiguous prefix of one, against
// the refs under prefix (refs/hub/pr/ or refs/hub/queue/). kind names the
// record in messages ("pull request", "queue").
func (h *hubRepo) resolveID(prefix, kind, arg string) (string, error) {
	if trust.ValidUUID(arg) == nil {
		return arg, nil
	}
	if err := validPrefix(arg); err != nil {
		return "", fmt.Errorf("%s id: %w", kind, err)
	}
	ids, err := h.refIDs(prefix)
	if err != nil {
		return "", err
	}
	return matchPrefix(ids, strings.ToLower(arg), kind, h.where())
}

// matchPrefix picks the one id in ids starting with p.
func matchPrefix(ids []string, p, kind, where string) (string, error) {
	var matches []string
	for _, id := range ids {
		if strings.HasPrefix(id, p) {
			matches = append(matches, id)
		}
	}
	switch len(matches) {
	case 1:
		return matches[0], nil
	case 0:
		return "", fmt.Errorf("%w: no %s id in %s starts with %s", ErrUnknownID, kind, where, p)
	}
	return "", fmt.Errorf("%w: %s is the start of %d %s ids in %s; give more of it:\n  %s",
		ErrAmbiguousID, p, len(matches), kind, where, strings.Join(matches, "\n  "))
}

// resolveArgID expands a verb's id argument; opening the repository here
// fetches the remote's hub refs once for the whole verb (openedHubs).
func resolveArgID(c *cli.Context, prefix, kind, arg string) (string, error) {
	if trust.ValidUUID(arg) == nil {
		return arg, nil
	}
	if err := validPrefix(arg); err != nil {
		return "", usageErr("%s id: %v", kind, err)
	}
	h, err := openHub(c)
	if err != nil {
		return "", fail(1, err)
	}
	id, err := h.resolveID(prefix, kind, arg)
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

// noteEvent records an appended event and the hub ref it moved.
func (h *hubRepo) noteEvent(ref string, payload any, id plumbing.Hash) {
	typ, _, _ := hubrefs.MarshalPayload(payload)
	ev := writtenEvent{Ref: ref, Type: typ, ID: id.String()}
	if e, err := hubrefs.ReadEvent(h.objs, id, trustCeilings); err == nil && len(e.Parents) > 0 {
		ev.Parent = e.Parents[0].String()
	}
	journal.events = append(journal.events, ev)
	journal.refs = append(journal.refs, movedRef{Ref: ref, Old: ev.Parent, New: ev.ID, Remote: h.Remote})
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
