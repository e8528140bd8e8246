package trust

import (
	"fmt"
	"strings"

	"github.com/gitplus/gitplus/hubrefs"
)

// hub.bypass per branch (docs/trust.md, "An audited bypass"): plain
// hub.bypass lets its holder bypass (pr bypass) and dismiss changes
// requests (pr dismiss) on every branch; hub.bypass:<pattern>, with a
// pattern written as the rules' keys are (a full ref name, '*' within one
// segment: hub.bypass:refs/heads/release/*), only for pull requests based
// on a branch it matches. repo.admin implies both.

// CapBypassPrefix starts a hub.bypass limited to the branches a pattern
// matches.
const CapBypassPrefix = CapBypass + ":"

// BypassCap returns the capability to bypass on the branches pattern
// matches.
func BypassCap(pattern string) string { return CapBypassPrefix + pattern }

// validBypassCap checks the pattern of a hub.bypass:<pattern> (ok false:
// c is not one).
func validBypassCap(c string) (ok bool, err error) {
	p, ok := strings.CutPrefix(c, CapBypassPrefix)
	if !ok {
		return false, nil
	}
	if err := ValidPattern(p); err != nil {
		return true, fmt.Errorf("%w %q: the branch pattern is written as the rules' keys are (hub.bypass:refs/heads/main, hub.bypass:refs/heads/release/*): %w", ErrUnknownCap, c, err)
	}
	return true, nil
}

// CanBypass reports whether m may bypass and dismiss changes requests for
// pull requests based on branch: repo.admin, hub.bypass, or a
// hub.bypass:<pattern> whose pattern matches branch.
func (m *Member) CanBypass(branch string) bool {
	if m.Has(CapBypass) {
		return true
	}
	for _, c := range m.Caps {
		if p, ok := strings.CutPrefix(c, CapBypassPrefix); ok && matchRef(p, branch) {
			return true
		}
	}
	return false
}

// CanBypass reports whether key belongs to a member who may bypass on
// branch (Member.CanBypass).
func (s *State) CanBypass(key hubrefs.PublicKey, branch string) bool {
	m, ok := s.MemberByKey(key)
	return ok && m.CanBypass(branch)
}
