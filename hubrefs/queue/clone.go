package queue

import (
	"fmt"
	"reflect"
	"sort"
)

// Clone returns a deep copy of s: applying events to the copy (Apply)
// leaves s as it was. A writer judges a new event on a clone of the state
// it read instead of folding the whole log again (docs/scale.md, "Writes").
// TestCloneCopiesEveryField fails when a field is added to State and not
// copied here.
func (s *State) Clone() *State {
	c := *s
	c.Entries = append([]Entry(nil), s.Entries...)
	c.Left = append([]Left(nil), s.Left...)
	c.Began = append([]Entry(nil), s.Began...)
	c.Resets = append([]Reset(nil), s.Resets...)
	c.Ignored = append([]Ignored(nil), s.Ignored...)
	c.latest = make(map[string]*Recorded, len(s.latest))
	for k, r := range s.latest {
		cr := *r
		cr.Parents = append([]string(nil), r.Parents...)
		cr.Cited = append([]string(nil), r.Cited...)
		c.latest[k] = &cr
	}
	c.bases = make(map[string]string, len(s.bases))
	for k, v := range s.bases {
		c.bases[k] = v
	}
	c.marks = make(map[string]int, len(s.marks))
	for k, v := range s.marks {
		c.marks[k] = v
	}
	c.active = make(map[string]bool, len(s.active))
	for k, v := range s.active {
		c.active[k] = v
	}
	return &c
}

// Equal reports whether s and o hold the same state, every field compared,
// unexported ones included; an empty slice or map equals a nil one.
func (s *State) Equal(o *State) bool {
	if s == nil || o == nil {
		return s == o
	}
	return equalValues(reflect.ValueOf(s).Elem(), reflect.ValueOf(o).Elem())
}

// equalValues compares a and b deeply (they have the same type), reading
// unexported fields without Interface.
func equalValues(a, b reflect.Value) bool {
	switch a.Kind() {
	case reflect.Struct:
		for i := 0; i < a.NumField(); i++ {
			if !equalValues(a.Field(i), b.Field(i)) {
				return false
			}
		}
		return true
	case reflect.Slice:
		if a.Len() != b.Len() {
			return false
		}
		fallthrough
	case reflect.Array:
		for i := 0; i < a.Len(); i++ {
			if !equalValues(a.Index(i), b.Index(i)) {
				return false
			}
		}
		return true
	case reflect.Map:
		if a.Len() != b.Len() {
			return false
		}
		for _, k := range a.MapKeys() {
			bv := b.MapIndex(k)
			if !bv.IsValid() || !equalValues(a.MapIndex(k), bv) {
				return false
			}
		}
		return true
	case reflect.Pointer:
		if a.IsNil() || b.IsNil() {
			return a.IsNil() == b.IsNil()
		}
		return equalValues(a.Elem(), b.Elem())
	case reflect.String:
		return a.String() == b.String()
	case reflect.Bool:
		return a.Bool() == b.Bool()
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return a.Int() == b.Int()
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return a.Uint() == b.Uint()
	}
	// A kind State does not hold yet (interface, func, float...): not
	// comparable here, so never equal; TestEqualComparesEveryField fails.
	return false
}

// Candidates returns a copy of the latest queue.candidate recorded for
// every pull request (LatestCandidate), by pull request id; with Steps and
// GroupEnds it is what a codec needs of s beyond its exported fields
// (policy/queuestate.go stores folded states in the fold cache).
func (s *State) Candidates() []Recorded {
	out := make([]Recorded, 0, len(s.latest))
	for _, r := range s.latest {
		c := *r
		c.Parents = append([]string(nil), r.Parents...)
		c.Cited = append([]string(nil), r.Cited...)
		out = append(out, c)
	}
	sortRecorded(out)
	return out
}

// Steps returns a copy of every candidate step recorded and its first
// parent (StepParent).
func (s *State) Steps() map[string]string {
	out := make(map[string]string, len(s.bases))
	for k, v := range s.bases {
		out[k] = v
	}
	return out
}

// GroupEnds returns a copy of the group end marks (GroupEnd): step → size.
func (s *State) GroupEnds() map[string]int {
	out := make(map[string]int, len(s.marks))
	for k, v := range s.marks {
		out[k] = v
	}
	return out
}

// Restore rebuilds a state Fold returned from what a codec kept of it: its
// exported fields (fields), Candidates, Steps and GroupEnds. The result
// Equals the original and Applies events exactly as it would. fields.ID
// must be set (Fold returns only rooted states); candidates must name
// distinct pull requests, and Entries too.
func Restore(fields State, candidates []Recorded, steps map[string]string, marks map[string]int) (*State, error) {
	s := fields
	if s.ID == "" {
		return nil, fmt.Errorf("%w: restoring a queue state with no id", ErrInput)
	}
	s.rooted = true
	s.latest = make(map[string]*Recorded, len(candidates))
	for i := range candidates {
		c := candidates[i]
		if _, dup := s.latest[c.PR]; dup {
			return nil, fmt.Errorf("%w: restoring queue %s: two candidates for pull request %s", ErrInput, s.ID, c.PR)
		}
		c.Parents = append([]string(nil), c.Parents...)
		c.Cited = append([]string(nil), c.Cited...)
		s.latest[c.PR] = &c
	}
	s.active = make(map[string]bool, len(s.Entries))
	for _, e := range s.Entries {
		if s.active[e.PR] {
			return nil, fmt.Errorf("%w: restoring queue %s: pull request %s queued twice", ErrInput, s.ID, e.PR)
		}
		s.active[e.PR] = true
	}
	s.Entries = append([]Entry(nil), fields.Entries...)
	s.Left = append([]Left(nil), fields.Left...)
	s.Began = append([]Entry(nil), fields.Began...)
	s.Resets = append([]Reset(nil), fields.Resets...)
	s.Ignored = append([]Ignored(nil), fields.Ignored...)
	s.bases = make(map[string]string, len(steps))
	for k, v := range steps {
		s.bases[k] = v
	}
	s.marks = make(map[string]int, len(marks))
	for k, v := range marks {
		s.marks[k] = v
	}
	return &s, nil
}

func sortRecorded(rs []Recorded) {
	sort.Slice(rs, func(i, j int) bool { return rs[i].PR < rs[j].PR })
}
