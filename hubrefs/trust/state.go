package trust

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"sort"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/gitplus/gitplus/hubrefs"
)

// Member is one member of the repository.
type Member struct {
	Name    string
	Key     hubrefs.PublicKey
	KeyLine string   // normalised authorized_keys line, "<type> <base64>"
	Caps    []string // sorted, no duplicates

	wire string // Key.Marshal(), cached by the fold; treat a Member as read-only
}

// NewMember returns a member as the fold builds it: for a decoder of a
// state the fold produced (policy's fold cache). keyLine is key's
// normalised authorized_keys line, caps sorted without duplicates.
func NewMember(name string, key hubrefs.PublicKey, keyLine string, caps []string) *Member {
	return &Member{Name: name, Key: key, KeyLine: keyLine, Caps: caps, wire: string(key.Marshal())}
}

func (m *Member) keyWire() string {
	if m.wire != "" {
		return m.wire
	}
	if m.Key == nil {
		return ""
	}
	return string(m.Key.Marshal())
}

// Has reports whether m holds capability c (repo.admin implies every one).
func (m *Member) Has(c string) bool {
	return slices.Contains(m.Caps, CapAdmin) || slices.Contains(m.Caps, c)
}

// Skip records a stored event the fold admitted but whose effect it did not
// apply. Since hub logs are linear (docs/trust.md) the fold never skips; the
// type stays for the fold cache's encoding of State.
type Skip struct {
	ID     plumbing.Hash
	Type   string
	Reason string
}

// State is the trust state: who the members are, what they may do, and the
// rules in force.
type State struct {
	RepoID  string
	Name    string // the repository's name from repo.created
	Members map[string]*Member
	// Teams is every team team.set defined, by name: its members' names,
	// sorted (docs/trust.md, "Teams"). Treat as read-only: the fold
	// replaces a team's slice, never writes into it.
	Teams   map[string][]string
	Rules   Rules         // latest rules.set in causal order; DefaultRules() when none
	RulesID plumbing.Hash // the rules.set in force; zero when none
	Tip     plumbing.Hash // the last event folded (the log's tip)
	Skipped []Skip        // always empty: the log is linear (docs/trust.md); kept for cached states' format
}

func sameKey(a, b hubrefs.PublicKey) bool {
	if a == nil || b == nil {
		return false
	}
	return bytes.Equal(a.Marshal(), b.Marshal())
}

// MemberByKey returns the member holding key.
func (s *State) MemberByKey(key hubrefs.PublicKey) (*Member, bool) {
	if s == nil || key == nil {
		return nil, false
	}
	wire := string(key.Marshal())
	for _, m := range s.Members {
		if m.keyWire() == wire {
			return m, true
		}
	}
	return nil, false
}

// Has reports whether key belongs to a member holding capability c.
func (s *State) Has(key hubrefs.PublicKey, c string) bool {
	m, ok := s.MemberByKey(key)
	return ok && m.Has(c)
}

func (s *State) admins() int {
	n := 0
	for _, m := range s.Members {
		if slices.Contains(m.Caps, CapAdmin) {
			n++
		}
	}
	return n
}

// Clone returns a deep copy.
func (s *State) Clone() *State {
	c := s.shallow()
	for name, m := range c.Members {
		mm := *m
		mm.Caps = slices.Clone(m.Caps)
		c.Members[name] = &mm
	}
	c.Teams = cloneTeams(s.Teams)
	c.Rules.Protected = make(map[string]Branch, len(s.Rules.Protected))
	for k, b := range s.Rules.Protected {
		b.RequiredChecks = slices.Clone(b.RequiredChecks)
		b.Approvers = slices.Clone(b.Approvers)
		c.Rules.Protected[k] = b
	}
	return c
}

// shallow copies the maps but shares the (never mutated) members and rules.
func (s *State) shallow() *State {
	c := *s
	c.Members = make(map[string]*Member, len(s.Members))
	for k, v := range s.Members {
		c.Members[k] = v
	}
	c.Skipped = slices.Clone(s.Skipped)
	return &c
}

// MemberNames returns the member names, sorted.
func (s *State) MemberNames() []string {
	names := make([]string, 0, len(s.Members))
	for n := range s.Members {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// decoded is a trust event's payload, validated on its own.
type decoded struct {
	repo     string
	repoName string // repo.created only
	name     string // member name (the admin's for repo.created)
	key      hubrefs.PublicKey
	keyLine  string
	caps     []string
	rules    Rules
	team     string   // team.set
	members  []string // team.set, sorted
}

// decode validates ev's payload. repoID is "" for the root, whose payload
// chooses it.
func decode(ev hubrefs.Event, repoID string) (decoded, error) {
	var base hubrefs.Base
	if err := json.Unmarshal(ev.Payload, &base); err != nil {
		return decoded{}, fmt.Errorf("%w: payload is not a JSON object: %w", ErrMalformed, err)
	}
	if base.Type != ev.Type {
		return decoded{}, fmt.Errorf("%w: payload type %q differs from the message's %q", ErrMalformed, base.Type, ev.Type)
	}
	if ev.Repo != "" && ev.Repo != base.Repo {
		return decoded{}, fmt.Errorf("%w: payload repo %q differs from the event's %q", ErrRepoMismatch, base.Repo, ev.Repo)
	}
	if repoID != "" && base.Repo != repoID {
		return decoded{}, fmt.Errorf("%w: repo %q, but this repository is %q", ErrRepoMismatch, base.Repo, repoID)
	}
	var d decoded
	d.repo = base.Repo
	switch ev.Type {
	case hubrefs.TypeRepoCreated:
		var p hubrefs.RepoCreated
		if err := hubrefs.StrictUnmarshal(ev.Payload, &p); err != nil {
			return decoded{}, fmt.Errorf("%w: %w", ErrMalformed, err)
		}
		if err := ValidUUID(p.Repo); err != nil {
			return decoded{}, fmt.Errorf("repo: %w", err)
		}
		if p.Name == "" || len(p.Name) > 200 || bytes.ContainsFunc([]byte(p.Name), func(r rune) bool { return r < 0x20 || r == 0x7f }) {
			return decoded{}, fmt.Errorf("%w: name: the repository name must be 1 to 200 bytes without control characters", ErrMalformed)
		}
		if err := ValidName(p.Admin.Name); err != nil {
			return decoded{}, fmt.Errorf("admin.name: %w", err)
		}
		key, line, err := ParseKey(p.Admin.Key)
		if err != nil {
			return decoded{}, fmt.Errorf("admin.key: %w", err)
		}
		d.repoName, d.name, d.key, d.keyLine, d.caps = p.Name, p.Admin.Name, key, line, []string{CapAdmin}
	case hubrefs.TypeMemberAdded, hubrefs.TypeMemberChanged:
		var p hubrefs.MemberAdded
		if err := hubrefs.StrictUnmarshal(ev.Payload, &p); err != nil {
			return decoded{}, fmt.Errorf("%w: %w", ErrMalformed, err)
		}
		if err := ValidName(p.Name); err != nil {
			return decoded{}, fmt.Errorf("name: %w", err)
		}
		key, line, err := ParseKey(p.Key)
		if err != nil {
			return decoded{}, fmt.Errorf("key: %w", err)
		}
		if err := validCaps(p.Caps); err != nil {
			return decoded{}, fmt.Errorf("caps: %w", err)
		}
		d.name, d.key, d.keyLine = p.Name, key, line
		d.caps = slices.Clone(p.Caps)
		sort.Strings(d.caps)
	case hubrefs.TypeMemberRemoved:
		var p hubrefs.MemberRemoved
		if err := hubrefs.StrictUnmarshal(ev.Payload, &p); err != nil {
			return decoded{}, fmt.Errorf("%w: %w", ErrMalformed, err)
		}
		if err := ValidName(p.Name); err != nil {
			return decoded{}, fmt.Errorf("name: %w", err)
		}
		d.name = p.Name
	case hubrefs.TypeRulesSet:
		var p hubrefs.RulesSet
		if err := hubrefs.StrictUnmarshal(ev.Payload, &p); err != nil {
			return decoded{}, fmt.Errorf("%w: %w", ErrMalformed, err)
		}
		if len(p.Rules) == 0 {
			return decoded{}, fmt.Errorf("%w: rules.set without a rules object", ErrMalformed)
		}
		// Strict, as git+ rules set: a replica that ignored a field it
		// does not know would judge by weaker rules (docs/events.md).
		r, err := ParseRulesStrict(p.Rules)
		if err != nil {
			return decoded{}, fmt.Errorf("%w: %w", ErrMalformed, err)
		}
		d.rules = r
	case hubrefs.TypeTeamSet:
		var p hubrefs.TeamSet
		if err := hubrefs.StrictUnmarshal(ev.Payload, &p); err != nil {
			return decoded{}, fmt.Errorf("%w: %w", ErrMalformed, err)
		}
		if err := ValidName(p.Team); err != nil {
			return decoded{}, fmt.Errorf("team: %w", err)
		}
		if p.Members == nil {
			return decoded{}, fmt.Errorf("%w: members: team.set lists the team's members ([] for none)", ErrMalformed)
		}
		d.members = slices.Clone(p.Members)
		sort.Strings(d.members)
		for i, m := range d.members {
			if err := ValidName(m); err != nil {
				return decoded{}, fmt.Errorf("members: %w", err)
			}
			if i > 0 && d.members[i-1] == m {
				return decoded{}, fmt.Errorf("%w: members: %q listed twice", ErrMalformed, m)
			}
		}
		d.team = p.Team
	default:
		return decoded{}, fmt.Errorf("%w %q in refs/hub/trust: expected repo.created, member.added, member.changed, member.removed, rules.set or team.set", ErrUnknownType, ev.Type)
	}
	return d, nil
}
