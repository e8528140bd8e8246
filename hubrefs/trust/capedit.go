package trust

// Editing a member's capability set (`git+ member change --add-cap
// --remove-cap`, docs/cli.md "Members"): the set is edited instead of
// replaced, and an edit that would change nothing it names, or leave the
// member with nothing, is refused.

import (
	"errors"
	"fmt"
	"slices"
	"strings"
)

// ErrCapEdit: a capability edit does not apply to the member's set (a
// removed capability is not held, or nothing would be left), or adds and
// removes the same capability. Errors of CapEdit wrap it or ErrUnknownCap.
var ErrCapEdit = errors.New("capability edit does not apply")

// CapEditError is an ErrCapEdit; Conflict names a capability both added
// and removed (a usage mistake), empty for an edit that does not apply.
type CapEditError struct {
	Conflict string
	msg      string
}

func (e *CapEditError) Error() string { return e.msg }
func (e *CapEditError) Unwrap() error { return ErrCapEdit }

// CapEdit is the capabilities one member change adds and removes.
type CapEdit struct{ Add, Remove []string }

// Empty reports whether the edit names no capability.
func (e CapEdit) Empty() bool { return len(e.Add)+len(e.Remove) == 0 }

// Validate checks every named capability (ErrUnknownCap) and that none is
// both added and removed (a *CapEditError with Conflict set).
func (e CapEdit) Validate() error {
	for _, cp := range append(append([]string{}, e.Add...), e.Remove...) {
		if err := ValidCap(cp); err != nil {
			return fmt.Errorf("capability %q: %w", cp, err)
		}
	}
	for _, cp := range e.Add {
		if slices.Contains(e.Remove, cp) {
			return &CapEditError{Conflict: cp, msg: cp + " is both added and removed"}
		}
	}
	return nil
}

// Apply edits caps (member name's current set): a removed capability the
// member does not hold is an error (a typo would otherwise pass silently);
// an added one already held is kept once; an empty result is an error.
func (e CapEdit) Apply(name string, caps []string) ([]string, error) {
	out := append([]string(nil), caps...)
	for _, cp := range e.Remove {
		i := slices.Index(out, cp)
		if i < 0 {
			return nil, &CapEditError{msg: fmt.Sprintf("member %s does not hold %s (holds: %s); nothing written", name, cp, CapList(caps))}
		}
		out = slices.Delete(out, i, i+1)
	}
	for _, cp := range e.Add {
		if !slices.Contains(out, cp) {
			out = append(out, cp)
		}
	}
	if len(out) == 0 {
		return nil, &CapEditError{msg: fmt.Sprintf("member %s would hold no capability: remove the member with `git+ member remove %s` instead; nothing written", name, name)}
	}
	return out, nil
}

// CapList is caps sorted and joined by spaces, or "none".
func CapList(caps []string) string {
	if len(caps) == 0 {
		return "none"
	}
	s := append([]string(nil), caps...)
	slices.Sort(s)
	return strings.Join(s, " ")
}
