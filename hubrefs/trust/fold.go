package trust

import (
	"fmt"
	"slices"

	"github.com/go-git/go-git/v5/plumbing"

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

// revokes reports the member whose admin authority ev takes away, if any.
func revokes(s *State, typ string, d decoded) string {
	old, ok := s.Members[d.name]
	if !ok || !old.Has(CapAdmin) {
		return ""
	}
	switch typ {
	case hubrefs.TypeMemberRemoved:
		return d.name
	case hubrefs.TypeMemberChanged:
		if !slices.Contains(d.caps, CapAdmin) || !sameKey(old.Key, d.key) {
			return d.name
		}
	}
	return ""
}

// Apply judges ev against s (as Authorize does) and, if it is admitted,
// applies it in place. It is for linear appends: ev must have exactly one
// parent, s.Tip. On error s is unchanged. Use Fold for joins.
func (s *State) Apply(ev hubrefs.Event) error {
	if len(ev.Parents) != 1 || ev.Parents[0] != s.Tip {
		return eventErr(ev, fmt.Errorf("%w: Apply needs an event whose only parent is the folded tip %s; fold joins with Fold", ErrOrder, s.Tip))
	}
	d, err := authorize(ev, s)
	if err != nil {
		return err
	}
	apply(s, ev, d)
	return nil
}

// Fold folds the events of refs/hub/trust, given parents before children
// (causal order, docs/events.md), into the trust state. Every event is judged
// against the state folded from its own parents; one the boundary would have
// refused makes Fold fail (ErrInvalidStored and the reason, naming the event).
// See the package doc for concurrent branches.
func Fold(events []hubrefs.Event) (*State, error) {
	if len(events) == 0 {
		return nil, fmt.Errorf("%w: refs/hub/trust has no events; run git+ init", ErrOrder)
	}
	f := &folder{events: events, pos: make(map[plumbing.Hash]int, len(events))}
	if err := f.index(); err != nil {
		return nil, err
	}
	for i := range events {
		if err := f.admit(i); err != nil {
			return nil, err
		}
	}
	all := make([]int, len(events))
	for i := range all {
		all[i] = i
	}
	return f.run(all), nil
}

type folder struct {
	events   []hubrefs.Event
	pos      map[plumbing.Hash]int
	parents  [][]int
	children [][]int
	left     []int // children not yet admitted
	dec      []decoded
	signer   []string // the member who signed each event, per its parents' state
	revoked  []string // the admin each event revokes, or ""
	after    []*State // state folded from each event's ancestors and itself, while children need it
	anc      [][]bool // ancestor sets, computed on demand
	desc     map[int][]bool
	linear   bool // each event's only parent is the one before it: nothing is concurrent
}

func (f *folder) index() error {
	n := len(f.events)
	f.parents, f.children, f.left = make([][]int, n), make([][]int, n), make([]int, n)
	f.dec, f.signer, f.revoked = make([]decoded, n), make([]string, n), make([]string, n)
	f.after, f.anc, f.desc = make([]*State, n), make([][]bool, n), map[int][]bool{}
	f.linear = true
	for i, ev := range f.events {
		if _, dup := f.pos[ev.ID]; dup {
			return eventErr(ev, fmt.Errorf("%w: event listed twice", ErrOrder))
		}
		if i > 0 && len(ev.Parents) == 0 {
			return eventErr(ev, fmt.Errorf("%w: a second root; refs/hub/trust has exactly one, repo.created", ErrOrder))
		}
		for _, p := range ev.Parents {
			j, ok := f.pos[p]
			if !ok {
				return eventErr(ev, fmt.Errorf("%w: parent %s is not an earlier event of the log", ErrOrder, p))
			}
			if slices.Contains(f.parents[i], j) {
				return eventErr(ev, fmt.Errorf("%w: parent %s named twice", ErrOrder, p))
			}
			f.parents[i] = append(f.parents[i], j)
			f.children[j] = append(f.children[j], i)
			f.left[j]++
		}
		f.pos[ev.ID] = i
		if i > 0 && (len(f.parents[i]) != 1 || f.parents[i][0] != i-1) {
			f.linear = false
		}
	}
	return nil
}

// admit judges event i against the state of its parents and records what
// the concurrent-branch rule needs.
func (f *folder) admit(i int) error {
	ev := f.events[i]
	var ps *State
	switch len(f.parents[i]) {
	case 0:
	case 1:
		ps = f.after[f.parents[i][0]]
	default:
		ps = f.run(f.ancestorList(i))
	}
	d, err := authorize(ev, ps)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrInvalidStored, err)
	}
	f.dec[i] = d
	var next *State
	if ps == nil {
		next = rootState(ev, d)
		f.signer[i] = d.name
	} else {
		signer, _ := ps.MemberByKey(ev.Signer)
		f.signer[i] = signer.Name
		f.revoked[i] = revokes(ps, ev.Type, d)
		if len(f.parents[i]) == 1 && f.left[f.parents[i][0]] == 1 {
			next = ps // the last child takes the parent's state over
		} else {
			next = ps.shallow()
		}
		apply(next, ev, d)
	}
	for _, p := range f.parents[i] {
		if f.left[p]--; f.left[p] == 0 {
			f.after[p] = nil
		}
	}
	if f.left[i] > 0 {
		f.after[i] = next
	}
	return nil
}

// ancestors returns event i's proper ancestors as a set.
func (f *folder) ancestors(i int) []bool {
	if f.anc[i] != nil {
		return f.anc[i]
	}
	set := make([]bool, len(f.events))
	stack := slices.Clone(f.parents[i])
	for len(stack) > 0 {
		j := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if !set[j] {
			set[j] = true
			stack = append(stack, f.parents[j]...)
		}
	}
	f.anc[i] = set
	return set
}

func (f *folder) ancestorList(i int) []int {
	set := f.ancestors(i)
	var list []int
	for j := 0; j < i; j++ {
		if set[j] {
			list = append(list, j)
		}
	}
	return list
}

func (f *folder) descendants(i int) []bool {
	if d, ok := f.desc[i]; ok {
		return d
	}
	set := make([]bool, len(f.events))
	stack := slices.Clone(f.children[i])
	for len(stack) > 0 {
		j := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if !set[j] {
			set[j] = true
			stack = append(stack, f.children[j]...)
		}
	}
	f.desc[i] = set
	return set
}

// run folds the admitted events of set (ancestor-closed, in causal order)
// into one state: each takes effect unless a concurrent event of the set
// revoked its signer's authority, its signer no longer holds repo.admin at
// that point, or its effect has become impossible.
func (f *folder) run(set []int) *State {
	var revokers []int
	for _, r := range set {
		if f.revoked[r] != "" && !f.linear {
			revokers = append(revokers, r)
		}
	}
	var st *State
	for _, i := range set {
		ev, d := f.events[i], f.dec[i]
		if st == nil {
			st = rootState(ev, d)
			continue
		}
		skip := ""
		for _, r := range revokers {
			if r != i && f.revoked[r] == f.signer[i] && !f.ancestors(r)[i] && !f.descendants(r)[i] {
				skip = fmt.Sprintf("concurrent with %s (%s), which took repo.admin from %q", f.events[r].ID, f.events[r].Type, f.signer[i])
				break
			}
		}
		if skip == "" {
			if !st.Has(ev.Signer, CapAdmin) {
				skip = fmt.Sprintf("signer %q no longer holds repo.admin here", f.signer[i])
			} else if err := checkEffect(st, ev.Type, d); err != nil {
				skip = err.Error()
			}
		}
		if skip != "" {
			st.Skipped = append(st.Skipped, Skip{ID: ev.ID, Type: ev.Type, Reason: skip})
			st.Tip = ev.ID
			continue
		}
		apply(st, ev, d)
	}
	return st
}
