package trust

import (
	"fmt"
	"slices"
	"sort"
	"strings"
)

// Teams (docs/trust.md, "Teams"): team.set names a team and its whole
// membership; rules name a team as a principal "team:NAME". A team is
// defined once any team.set names it, and stays defined (an empty member
// list keeps it, with nobody in it). Only current members may be listed;
// member.removed takes the member out of every team. Team names follow
// the member name rules (ValidName).

// TeamPrefix starts a principal that names a team ("team:docs").
const TeamPrefix = "team:"

// TeamsOf returns the teams member name belongs to, sorted.
func (s *State) TeamsOf(name string) []string {
	var out []string
	for team, members := range s.Teams {
		if slices.Contains(members, name) {
			out = append(out, team)
		}
	}
	sort.Strings(out)
	return out
}

// TeamNames returns the defined teams, sorted.
func (s *State) TeamNames() []string {
	out := make([]string, 0, len(s.Teams))
	for t := range s.Teams {
		out = append(out, t)
	}
	sort.Strings(out)
	return out
}

// ValidPrincipal reports whether p names a member ("alice") or a team
// ("team:docs") as rules write them.
func ValidPrincipal(p string) error {
	if team, ok := strings.CutPrefix(p, TeamPrefix); ok {
		if err := ValidName(team); err != nil {
			return fmt.Errorf("team %q: %w", team, err)
		}
		return nil
	}
	return ValidName(p)
}

// Counts reports whether member, who belongs to teams, is one of the
// principals (a member name, or "team:NAME" of a team it belongs to). Nil
// principals count everybody: a branch without "approvers".
func Counts(principals []string, member string, teams []string) bool {
	if principals == nil {
		return true
	}
	for _, p := range principals {
		if team, ok := strings.CutPrefix(p, TeamPrefix); ok {
			if slices.Contains(teams, team) {
				return true
			}
		} else if p == member {
			return true
		}
	}
	return false
}

// checkPrincipals reports whether every principal the rules name exists in
// s: a member that is one now, a team some team.set defined. Checked when
// rules.set is written, so a typo is refused rather than counting nobody;
// a member removed or a team emptied later simply counts nobody.
func checkPrincipals(s *State, r Rules) error {
	keys := make([]string, 0, len(r.Protected))
	for k := range r.Protected {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		for _, p := range r.Protected[k].Approvers {
			if team, ok := strings.CutPrefix(p, TeamPrefix); ok {
				if _, ok := s.Teams[team]; !ok {
					return fmt.Errorf("%w %q: rules.protected[%q].approvers names %q; define it first with git+ team set %s MEMBER...", ErrNoTeam, team, k, p, team)
				}
			} else if _, ok := s.Members[p]; !ok {
				return fmt.Errorf("%w %q: rules.protected[%q].approvers names a member that does not exist; add it with git+ member add, or drop it from approvers", ErrNoMember, p, k)
			}
		}
		if err := checkOwnerPrincipals(s, k, r.Protected[k].Owners); err != nil {
			return err
		}
	}
	return nil
}

// withoutMember returns teams with name taken out of every team (a new map
// when it changes anything; teams is never mutated).
func withoutMember(teams map[string][]string, name string) map[string][]string {
	var out map[string][]string
	for t, members := range teams {
		if i := slices.Index(members, name); i >= 0 {
			if out == nil {
				out = cloneTeams(teams)
			}
			out[t] = slices.Delete(slices.Clone(members), i, i+1)
		}
	}
	if out == nil {
		return teams
	}
	return out
}

func cloneTeams(teams map[string][]string) map[string][]string {
	if teams == nil {
		return nil
	}
	out := make(map[string][]string, len(teams))
	for t, m := range teams {
		out[t] = slices.Clone(m)
	}
	return out
}
