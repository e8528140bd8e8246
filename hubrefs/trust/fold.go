package trust

import (
	"fmt"
	"slices"

	"github.com/gitplus/gitplus/hubrefs"
)

// Authorize judges a new trust event against parents, the trust state
// folded from the event's own parents (nil for a root). It checks the
// payload, the repository, the signer's authority and that the effect is
// possible (no duplicate member, no shared key, at least one admin left).
// The error is an *EventError naming ev.
func Authorize(ev hubrefs.Event, parents *State) error {
	_, err := authorize(ev, parents)
	return err
}

func authorize(ev hubrefs.Event, parents *State) (decoded, error) {
	wrap := func(err error) error { return eventErr(ev, err) }
	if ev.Signer == nil {
		return decoded{}, wrap(fmt.Errorf("%w: sign trust events with a member's SSH key", ErrUnsigned))
	}
	if ev.Type == hubrefs.TypeRepoCreated {
		if parents != nil || len(ev.Parents) > 0 {
			return decoded{}, wrap(fmt.Errorf("%w: repo.created is written once, as the root of refs/hub/trust", ErrOrder))
		}
		d, err := decode(ev, "")
		if err != nil {
			return decoded{}, wrap(err)
		}
		if !sameKey(ev.Signer, d.key) {
			return decoded{}, wrap(fmt.Errorf("%w: repo.created must be signed by the admin key it names (%s)", ErrUnauthorized, d.keyLine))
		}
		return d, nil
	}
	if parents == nil || len(ev.Parents) == 0 {
		return decoded{}, wrap(fmt.Errorf("%w: the root of refs/hub/trust must be repo.created, not %s", ErrOrder, ev.Type))
	}
	d, err := decode(ev, parents.RepoID)
	if err != nil {
		return decoded{}, wrap(err)
	}
	signer, ok := parents.MemberByKey(ev.Signer)
	if !ok {
		return decoded{}, wrap(fmt.Errorf("%w: the signing key is not a member's (%s)", ErrUnauthorized, keyLine(ev)))
	}
	if !signer.Has(CapAdmin) {
		return decoded{}, wrap(fmt.Errorf("%w: member %q does not hold repo.admin", ErrUnauthorized, signer.Name))
	}
	if err := checkEffect(parents, ev.Type, d); err != nil {
		return decoded{}, wrap(err)
	}
	return d, nil
}

func keyLine(ev hubrefs.Event) string {
	if ev.Signer == nil {
		return "unsigned"
	}
	return ev.Signer.Type() + " key"
}

// checkEffect reports whether d can be applied to s.
func checkEffect(s *State, typ string, d decoded) error {
	switch typ {
	case hubrefs.TypeMemberAdded, hubrefs.TypeMemberChanged:
		old, exists := s.Members[d.name]
		if typ == hubrefs.TypeMemberAdded && exists {
			return fmt.Errorf("%w: %q; change it with member.changed", ErrMemberExists, d.name)
		}
		if typ == hubrefs.TypeMemberChanged && !exists {
			return fmt.Errorf("%w %q to change; add it with member.added", ErrNoMember, d.name)
		}
		if other, ok := s.MemberByKey(d.key); ok && other.Name != d.name {
			return fmt.Errorf("%w %q; every member needs a key of their own", ErrKeyInUse, other.Name)
		}
		if exists && old.Has(CapAdmin) && !slices.Contains(d.caps, CapAdmin) && s.admins() == 1 {
			return fmt.Errorf("%w: %q is the last admin; grant repo.admin to another member first", ErrLastAdmin, d.name)
		}
	case hubrefs.TypeMemberRemoved:
		old, exists := s.Members[d.name]
		if !exists {
			return fmt.Errorf("%w %q to remove", ErrNoMember, d.name)
		}
		if slices.Contains(old.Caps, CapAdmin) && s.admins() == 1 {
			return fmt.Errorf("%w: %q is the last admin; grant repo.admin to another member first", ErrLastAdmin, d.name)
		}
	case hubrefs.TypeTeamSet:
		for _, m := range d.members {
			if _, ok := s.Members[m]; !ok {
				return fmt.Errorf("%w %q to put in team %q; add it with git+ member add first", ErrNoMember, m, d.team)
			}
		}
	case hubrefs.TypeRulesSet:
		return checkPrincipals(s, d.rules)
	}
	return nil
}

// apply mutates s (its Members map must be its own).
func apply(s *State, ev hubrefs.Event, d decoded) {
	switch ev.Type {
	case hubrefs.TypeMemberAdded, hubrefs.TypeMemberChanged:
		s.Members[d.name] = NewMember(d.name, d.key, d.keyLine, d.caps)
	case hubrefs.TypeMemberRemoved:
		delete(s.Members, d.name)
		s.Teams = withoutMember(s.Teams, d.name)
	case hubrefs.TypeTeamSet:
		teams := make(map[string][]string, len(s.Teams)+1)
		for t, m := range s.Teams {
			teams[t] = m
		}
		teams[d.team] = d.members
		s.Teams = teams
	case hubrefs.TypeRulesSet:
		s.Rules, s.RulesID = d.rules, ev.ID
	}
	s.Tip = ev.ID
}

func rootState(ev hubrefs.Event, d decoded) *State {
	return &State{
		RepoID:  d.repo,
		Name:    d.repoName,
		Members: map[string]*Member{d.name: NewMember(d.name, d.key, d.keyLine, []string{CapAdmin})},
		Rules:   DefaultRules(),
		Tip:     ev.ID,
	}
}

// Apply judges ev against s (as Authorize does) and, if it is admitted,
// applies it in place. The trust log is linear (docs/trust.md): ev must have
// exactly one parent, s.Tip. On error s is unchanged.
func (s *State) Apply(ev hubrefs.Event) error {
	if err := hubrefs.CheckNext(s.Tip, ev); err != nil {
		return eventErr(ev, fmt.Errorf("%w: %w", ErrOrder, err))
	}
	d, err := authorize(ev, s)
	if err != nil {
		return err
	}
	apply(s, ev, d)
	return nil
}

// Fold folds the events of refs/hub/trust, given in log order (root first),
// into the trust state. The log is linear (docs/trust.md): each event's only
// parent is the event before it; a fork or a join is refused
// (hubrefs.ErrNotLinear), as the boundary refuses to store one. Every event
// is judged against the state before it; one the boundary would have refused
// makes Fold fail (ErrInvalidStored and the reason, naming the event).
func Fold(events []hubrefs.Event) (*State, error) {
	if len(events) == 0 {
		return nil, fmt.Errorf("%w: refs/hub/trust has no events; run git+ init", ErrOrder)
	}
	root := events[0]
	d, err := authorize(root, nil)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidStored, err)
	}
	st := rootState(root, d)
	for _, ev := range events[1:] {
		if err := hubrefs.CheckNext(st.Tip, ev); err != nil {
			return nil, eventErr(ev, fmt.Errorf("%w: %w", ErrOrder, err))
		}
		d, err := authorize(ev, st)
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrInvalidStored, err)
		}
		apply(st, ev, d)
	}
	return st, nil
}
