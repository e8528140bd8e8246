package trust

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

// Path owners (docs/trust.md, "Path owners"): rules "owners" per protected
// branch, a list of entries {"paths": [...], "approvers": [...],
// "approvals": N}. Every entry whose paths match a file a landing changes
// needs N approvals of the pull request's current head from distinct
// members among its approvers (pr.State.OwnersAt is the rule).

// Owner is one entry of a branch's "owners".
type Owner struct {
	Paths     []string // gitignore-style globs (CompilePathGlob)
	Approvers []string // member names and "team:NAME"
	Approvals int      // at least 1
	globs     []PathGlob
}

// NewOwner builds an owners entry, compiling its paths.
func NewOwner(paths, approvers []string, approvals int) (Owner, error) {
	o := Owner{Paths: paths, Approvers: approvers, Approvals: approvals}
	for _, p := range paths {
		g, err := CompilePathGlob(p)
		if err != nil {
			return Owner{}, err
		}
		o.globs = append(o.globs, g)
	}
	return o, nil
}

// Name names the entry in messages: its paths as the rules write them.
func (o Owner) Name() string { return strings.Join(o.Paths, ", ") }

// Matches reports whether the entry's paths match the file at path.
func (o Owner) Matches(path string) bool {
	if len(o.globs) != len(o.Paths) { // built without NewOwner
		for _, p := range o.Paths {
			if g, err := CompilePathGlob(p); err == nil && g.Match(path) {
				return true
			}
		}
		return false
	}
	return MatchAny(o.globs, path)
}

// MatchesSplit is Matches of a path already split at its slashes.
func (o Owner) MatchesSplit(comps []string) bool {
	if len(o.globs) != len(o.Paths) {
		return o.Matches(strings.Join(comps, "/"))
	}
	return matchAnySplit(o.globs, comps)
}

// Triggered reports whether any of the changed files matches the entry.
func (o Owner) Triggered(changed []string) bool {
	for _, p := range changed {
		if o.Matches(p) {
			return true
		}
	}
	return false
}

// parseOwners decodes a branch's "owners" (null or absent: none).
func parseOwners(m map[string]json.RawMessage, path string, strict bool) ([]Owner, error) {
	raw, ok := m["owners"]
	if !ok || string(bytes.TrimSpace(raw)) == "null" {
		return nil, nil
	}
	var list []json.RawMessage
	if err := json.Unmarshal(raw, &list); err != nil {
		return nil, fmt.Errorf("%w: %s.owners: want a list of {\"paths\", \"approvers\", \"approvals\"}: %w", ErrInvalidRules, path, err)
	}
	var out []Owner
	for i, e := range list {
		epath := fmt.Sprintf("%s.owners[%d]", path, i)
		em, ok, err := object(e, epath, ownerFields, strict)
		if err != nil {
			return nil, err
		}
		if !ok {
			return nil, fmt.Errorf("%w: %s must be an object", ErrInvalidRules, epath)
		}
		var paths, approvers []string
		approvals := 1
		if err := field(em, "paths", epath, &paths); err != nil {
			return nil, err
		}
		if err := field(em, "approvers", epath, &approvers); err != nil {
			return nil, err
		}
		if err := field(em, "approvals", epath, &approvals); err != nil {
			return nil, err
		}
		o := Owner{Paths: paths, Approvers: approvers, Approvals: approvals}
		if err := o.validate(epath); err != nil {
			return nil, err
		}
		o, _ = NewOwner(paths, approvers, approvals)
		out = append(out, o)
	}
	return out, nil
}

var ownerFields = []string{"paths", "approvers", "approvals"}

// validate checks one entry as Rules.Validate does (epath names it).
func (o Owner) validate(epath string) error {
	if len(o.Paths) == 0 {
		return fmt.Errorf("%w: %s.paths is empty; name the files it owns, such as [\"docs/**\", \"*.md\"]", ErrInvalidRules, epath)
	}
	seen := map[string]bool{}
	for _, p := range o.Paths {
		if _, err := CompilePathGlob(p); err != nil {
			return fmt.Errorf("%w: %s.paths: %w", ErrInvalidRules, epath, err)
		}
		if seen[p] {
			return fmt.Errorf("%w: %s.paths names %q twice", ErrInvalidRules, epath, p)
		}
		seen[p] = true
	}
	if len(o.Approvers) == 0 {
		return fmt.Errorf("%w: %s.approvers is empty; name the members or team:NAME whose approvals count for these paths", ErrInvalidRules, epath)
	}
	seen = map[string]bool{}
	for _, p := range o.Approvers {
		if err := ValidPrincipal(p); err != nil {
			return fmt.Errorf("%w: %s.approvers: %w (write a member name or team:NAME)", ErrInvalidRules, epath, err)
		}
		if seen[p] {
			return fmt.Errorf("%w: %s.approvers names %q twice", ErrInvalidRules, epath, p)
		}
		seen[p] = true
	}
	if o.Approvals < 1 {
		return fmt.Errorf("%w: %s.approvals is %d; use 1 or more (leave the entry out to require nobody)", ErrInvalidRules, epath, o.Approvals)
	}
	return nil
}

// validateOwners checks a branch's owners (Rules.Validate).
func validateOwners(owners []Owner, path string) error {
	for i, o := range owners {
		if err := o.validate(fmt.Sprintf("%s.owners[%d]", path, i)); err != nil {
			return err
		}
	}
	return nil
}

// ownerJSON is how MarshalJSON writes an entry.
type ownerJSON struct {
	Paths     []string `json:"paths"`
	Approvers []string `json:"approvers"`
	Approvals int      `json:"approvals"`
}

func ownersJSON(owners []Owner) ownerSet {
	if owners == nil {
		return nil
	}
	out := make([]ownerJSON, len(owners))
	for i, o := range owners {
		out[i] = ownerJSON{o.Paths, o.Approvers, o.Approvals}
	}
	return out
}

// checkOwnerPrincipals is checkPrincipals for the owners of branch key k.
func checkOwnerPrincipals(s *State, k string, owners []Owner) error {
	for i, o := range owners {
		for _, p := range o.Approvers {
			if team, ok := strings.CutPrefix(p, TeamPrefix); ok {
				if _, ok := s.Teams[team]; !ok {
					return fmt.Errorf("%w %q: rules.protected[%q].owners[%d].approvers names %q; define it first with git+ team set %s MEMBER...", ErrNoTeam, team, k, i, p, team)
				}
			} else if _, ok := s.Members[p]; !ok {
				return fmt.Errorf("%w %q: rules.protected[%q].owners[%d].approvers names a member that does not exist; add it with git+ member add, or drop it", ErrNoMember, p, k, i)
			}
		}
	}
	return nil
}

// ownerSet is the JSON of a branch's owners.
type ownerSet = []ownerJSON
