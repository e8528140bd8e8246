package trust

import (
	"encoding/json"
	"fmt"
)

// How a protected branch takes its landings (docs/queue.md, "Step
// shapes"): the rules fields "mergeMethod", "requireLinearHistory" and
// "deleteSourceBranch".
const (
	// MergeMethodMerge: a queue step is a merge commit [C_{i-1}, H_i] (the
	// default).
	MergeMethodMerge = "merge"
	// MergeMethodSquash: a queue step is one commit on S_{i-1} with the
	// tree of mergeTree(S_{i-1}, H_i), bound to its pull request by
	// trailers.
	MergeMethodSquash = "squash"
)

// landingFields are the branch fields of this file, known to the strict
// decoder beside branchFields.
var landingFields = []string{"mergeMethod", "requireLinearHistory", "deleteSourceBranch"}

// Landing is how a protected branch takes its landings. Branch embeds it.
type Landing struct {
	// MergeMethod (rules "mergeMethod"): MergeMethodSquash, or "" for the
	// default, merge. Held normalized: "merge" is held as "" so rules
	// without the field compare equal to rules that spell it out; read it
	// with Method.
	MergeMethod string
	// RequireLinearHistory (rules "requireLinearHistory"): every commit a
	// landing adds has at most one parent. It needs mergeMethod "squash".
	RequireLinearHistory bool
	// DeleteSourceBranch (rules "deleteSourceBranch"): once a pull request
	// has landed on the branch (its pr.merged recorded), the verb that
	// landed it (`git+ queue run`, `git+ pr merge`) deletes the branch the
	// pull request came from (pr.opened's source) when it still holds the
	// landed head and no rule protects it (docs/queue.md, "Deleting the
	// source branch"). The boundary does not judge it: a deletion of an
	// unprotected branch is an ordinary push.
	DeleteSourceBranch bool
}

// Method is the branch's merge method: MergeMethodMerge or
// MergeMethodSquash.
func (l Landing) Method() string {
	if l.MergeMethod == "" {
		return MergeMethodMerge
	}
	return l.MergeMethod
}

// Squash reports whether queue steps on the branch are squash steps.
func (l Landing) Squash() bool { return l.MergeMethod == MergeMethodSquash }

// parseLanding decodes the landing fields of branch object m at path.
func parseLanding(m map[string]json.RawMessage, path string, l *Landing) error {
	if err := field(m, "requireLinearHistory", path, &l.RequireLinearHistory); err != nil {
		return err
	}
	if err := field(m, "deleteSourceBranch", path, &l.DeleteSourceBranch); err != nil {
		return err
	}
	var method string
	if err := field(m, "mergeMethod", path, &method); err != nil {
		return err
	}
	switch method {
	case "", MergeMethodMerge:
		l.MergeMethod = ""
	case MergeMethodSquash:
		l.MergeMethod = MergeMethodSquash
	default:
		return fmt.Errorf("%w: %s.mergeMethod %q: use %q (the default) or %q", ErrInvalidRules, path, method, MergeMethodMerge, MergeMethodSquash)
	}
	return nil
}

// validLanding checks the landing fields of the branch at path.
func (l Landing) validLanding(path string) error {
	switch l.MergeMethod {
	case "", MergeMethodSquash:
	default:
		return fmt.Errorf("%w: %s.mergeMethod %q: use %q (the default) or %q", ErrInvalidRules, path, l.MergeMethod, MergeMethodMerge, MergeMethodSquash)
	}
	if l.RequireLinearHistory && !l.Squash() {
		return fmt.Errorf("%w: %s.requireLinearHistory is true but %s.mergeMethod is %q: a merge step has two parents, so the two settings conflict; set mergeMethod to %q or drop requireLinearHistory", ErrInvalidRules, path, path, l.Method(), MergeMethodSquash)
	}
	return nil
}

// landingJSON is how MarshalJSON writes the landing fields (every one, its
// default filled in, as `rules show` promises).
type landingJSON struct {
	MergeMethod          string `json:"mergeMethod"`
	RequireLinearHistory bool   `json:"requireLinearHistory"`
	DeleteSourceBranch   bool   `json:"deleteSourceBranch"`
}

func (l Landing) json() landingJSON {
	m := l.MergeMethod
	if m == "" {
		m = MergeMethodMerge
	}
	return landingJSON{MergeMethod: m, RequireLinearHistory: l.RequireLinearHistory, DeleteSourceBranch: l.DeleteSourceBranch}
}
