package repo

// The document `git+ rules set` records (docs/trust.md): checked whole
// before anything is written, and what its rules mean for branches that do
// not exist yet.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/gitplus/gitplus/hubrefs/trust"
	"github.com/gitplus/gitplus/receive/jsonpos"
)

// RulesDocument checks the rules document data, read from src (a file, or
// "standard input"), as the hook will: JSON (a syntax error at its line and
// column), then rules trust.ParseRulesStrict accepts; and returns it
// compacted, as SetRules records it. Every error says nothing was written.
func RulesDocument(data []byte, src string) ([]byte, error) {
	var syntax any
	if err := json.Unmarshal(data, &syntax); err != nil {
		return nil, fmt.Errorf("rules in %s: %w; nothing was written", src, jsonpos.LocateJSONError(data, err))
	}
	if _, err := trust.ParseRulesStrict(data); err != nil {
		return nil, fmt.Errorf("rules in %s: %w; nothing was written", src, err)
	}
	var compact bytes.Buffer
	if err := json.Compact(&compact, data); err != nil {
		return nil, fmt.Errorf("rules in %s: %w; nothing was written", src, err)
	}
	return compact.Bytes(), nil
}

// PristineNotes are the notes `git+ rules set` prints after recording the
// rules document data: one for each branch it protects with
// requirePullRequest that the remote does not have yet, saying how its
// first commit comes in (docs/boundary.md "The first commit of a protected
// branch"; the README's team guide sets the rules before anything is
// pushed).
func (s *Signing) PristineNotes(data []byte) []string {
	rules, err := trust.ParseRulesStrict(data)
	if err != nil {
		return nil
	}
	var names []string
	for name, b := range rules.Protected {
		if b.RequirePullRequest && !strings.ContainsAny(name, "*?[") {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	var out []string
	for _, name := range names {
		if tip, err := s.Repo.RemoteRef(name); err != nil || !tip.IsZero() {
			continue
		}
		b := strings.TrimPrefix(name, "refs/heads/")
		out = append(out, fmt.Sprintf("note: %s does not exist yet; protected, its first commit lands like any other: on a branch of its own with a pull request onto it (git+ pr open --base %s --source BRANCH --push), approved, then git+ pr merge creates it (to start it from an existing history, push that before protecting it)", name, b))
	}
	return out
}
