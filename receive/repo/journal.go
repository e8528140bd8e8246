package repo

import (
	"encoding/json"
	"io"
	"strings"
)

// Journal records what a program wrote through a Repo: the events appended
// (Repo.OnAppend) and the refs moved (appends, pushes, checkouts). The CLI
// prints it as a writing verb's --json document (docs/cli.md); a Go program
// may keep one the same way.
type Journal struct {
	Events []WrittenEvent
	Refs   []MovedRef
	// Details are a verb's own facts (member change: the capability sets
	// before and after).
	Details map[string]any
}

// WrittenEvent is one event appended.
type WrittenEvent struct {
	Ref    string `json:"ref"`
	Type   string `json:"type"`
	ID     string `json:"id"`
	Parent string `json:"parent,omitempty"`
}

// MovedRef is one ref moved (Old is "" when it was created).
type MovedRef struct {
	Ref    string `json:"ref"`
	Old    string `json:"old,omitempty"`
	New    string `json:"new"`
	Remote string `json:"remote"`
}

// Append records an append reported by Repo.OnAppend: the event, and its
// ref moved from the parent.
func (j *Journal) Append(w Written) {
	ev := WrittenEvent{Ref: w.Ref, Type: w.Type, ID: w.ID.String()}
	if !w.Parent.IsZero() {
		ev.Parent = w.Parent.String()
	}
	j.Events = append(j.Events, ev)
	j.Refs = append(j.Refs, MovedRef{Ref: w.Ref, Old: ev.Parent, New: ev.ID, Remote: w.Remote})
}

// Moved records a ref moved by other means than an append.
func (j *Journal) Moved(ref, old, new, remote string) {
	j.Refs = append(j.Refs, MovedRef{Ref: ref, Old: old, New: new, Remote: remote})
}

// WriterJSON is a writing verb's --json document.
type WriterJSON struct {
	Verb    string         `json:"verb"`
	Result  string         `json:"result"` // what the verb prints alone: an id
	Output  []string       `json:"output"` // every line it prints alone
	Events  []WrittenEvent `json:"events"`
	Refs    []MovedRef     `json:"refs"`
	Details map[string]any `json:"details,omitempty"`
}

// WriteJSON writes the document of verb, whose standard output was text,
// indented, to w.
func (j *Journal) WriteJSON(w io.Writer, verb, text string) error {
	d := WriterJSON{Verb: verb, Output: []string{}, Events: j.Events, Refs: j.Refs, Details: j.Details}
	for _, l := range strings.Split(strings.TrimRight(text, "\n"), "\n") {
		if l != "" {
			d.Output = append(d.Output, l)
		}
	}
	if len(d.Output) > 0 {
		d.Result = d.Output[len(d.Output)-1]
	}
	if d.Events == nil {
		d.Events = []WrittenEvent{}
	}
	if d.Refs == nil {
		d.Refs = []MovedRef{}
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(d)
}
