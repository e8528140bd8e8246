package repo

// Teams: team.set and the view of `git+ team list` (docs/trust.md,
// "Teams").

import (
	"fmt"
	"slices"
	"strings"

	"github.com/gitplus/gitplus/hubrefs"
	"github.com/gitplus/gitplus/hubrefs/trust"
)

// SetTeam records team name with exactly members (none: the team stays
// defined, with nobody in it). Every member must be a member now.
func (s *Signing) SetTeam(name string, members []string) (string, error) {
	for _, m := range members {
		if _, ok := s.Trust.Members[m]; !ok {
			return "", fmt.Errorf("no member %q in %s to put in team %q (see `git+ member list`); nothing was written", m, hubrefs.TrustRef, name)
		}
	}
	if members == nil {
		members = []string{}
	}
	return s.AppendTrust(hubrefs.TeamSet{Base: s.base(hubrefs.TypeTeamSet), Team: name, Members: members})
}

// TeamView is a team as `git+ team list --json` prints it.
type TeamView struct {
	Team    string   `json:"team"`
	Members []string `json:"members"` // sorted
}

// Teams lists t's teams by name.
func Teams(t *trust.State) []TeamView {
	out := []TeamView{}
	for _, n := range t.TeamNames() {
		out = append(out, TeamView{Team: n, Members: append([]string{}, t.Teams[n]...)})
	}
	return out
}

// Line is the team's line in `git+ team list`.
func (v TeamView) Line() string {
	members := slices.Clone(v.Members)
	if len(members) == 0 {
		members = []string{"(nobody)"}
	}
	return fmt.Sprintf("%-16s %s", v.Team, strings.Join(members, ","))
}
