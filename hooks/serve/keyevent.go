package serve

// Which trust event gave each member the key it holds: the event a token is
// bound to (token.go, docs/serving.md "Tokens").
//
// Decisions:
//   - A member's key event is the id of the repo.created or member.added
//     that made it a member, or of the latest member.changed that changed
//     its key. A member.changed of capabilities only keeps it. A member
//     removed and added again, or re-keyed away and back, gets a new one,
//     so a token issued before is void for good even though the member
//     holds the same key again.
//   - The events are read through the repository's fold cache (the log the
//     hook recorded when it accepted the trust tip) and folded again here
//     with trust.State.Apply, the fold's own step, so a key is compared as
//     the fold normalises it. The server keeps the answer per trust tip.

import (
	"fmt"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/gitplus/gitplus/hubrefs"
	"github.com/gitplus/gitplus/hubrefs/trust"
	"github.com/gitplus/gitplus/receive/gitio"
	"github.com/gitplus/gitplus/receive/repo"
)

// KeyEvents folds the trust log of the git+ repository gitDir and returns
// the state at its tip and, for each member, the id of its key event.
func KeyEvents(gitDir string) (*trust.State, map[string]string, error) {
	_, st, since, err := keyEventsAt(gitDir)
	return st, since, err
}

// keyEventsAt is KeyEvents with the trust tip it read.
func keyEventsAt(gitDir string) (plumbing.Hash, *trust.State, map[string]string, error) {
	r, err := repo.OpenLocal(gitDir)
	if err != nil {
		return plumbing.ZeroHash, nil, nil, err
	}
	defer r.Close()
	tip, err := r.Ref(hubrefs.TrustRef)
	if err != nil {
		return tip, nil, nil, err
	}
	if tip.IsZero() {
		return tip, nil, nil, fmt.Errorf("%s has no %s: run `git+ init` first", gitDir, hubrefs.TrustRef)
	}
	evs, err := r.Reader(repo.TrustCeilings).Log(tip)
	if err != nil {
		return tip, nil, nil, fmt.Errorf("reading %s in %s: %w", hubrefs.TrustRef, gitDir, err)
	}
	st, since, err := foldKeyEvents(evs)
	if err != nil {
		return tip, nil, nil, fmt.Errorf("folding %s in %s: %w", hubrefs.TrustRef, gitDir, err)
	}
	return tip, st, since, nil
}

// foldKeyEvents folds a trust log given in log order (root first) and
// records each member's key event along the way.
func foldKeyEvents(evs []hubrefs.Event) (*trust.State, map[string]string, error) {
	if len(evs) == 0 {
		return nil, nil, fmt.Errorf("%s has no events; run git+ init", hubrefs.TrustRef)
	}
	st, err := trust.Fold(evs[:1])
	if err != nil {
		return nil, nil, err
	}
	since := make(map[string]string, len(st.Members))
	for name := range st.Members {
		since[name] = evs[0].ID.String()
	}
	for _, ev := range evs[1:] {
		name, err := memberNamed(ev)
		if err != nil {
			return nil, nil, err
		}
		before := ""
		if m, ok := st.Members[name]; ok {
			before = m.KeyLine
		}
		if err := st.Apply(ev); err != nil {
			return nil, nil, err
		}
		if name == "" {
			continue
		}
		switch m, ok := st.Members[name]; {
		case !ok:
			delete(since, name)
		case m.KeyLine != before:
			since[name] = ev.ID.String()
		}
	}
	return st, since, nil
}

// memberNamed is the member a member.* event names ("" for other events).
func memberNamed(ev hubrefs.Event) (string, error) {
	switch ev.Type {
	case hubrefs.TypeMemberAdded, hubrefs.TypeMemberChanged:
		var p hubrefs.MemberAdded
		if err := ev.PayloadInto(&p); err != nil {
			return "", fmt.Errorf("trust event %s: %w", ev.ID, err)
		}
		return p.Name, nil
	case hubrefs.TypeMemberRemoved:
		var p hubrefs.MemberRemoved
		if err := ev.PayloadInto(&p); err != nil {
			return "", fmt.Errorf("trust event %s: %w", ev.ID, err)
		}
		return p.Name, nil
	}
	return "", nil
}

// memberKeys is KeyEvents of one repository at one trust tip.
type memberKeys struct {
	tip   plumbing.Hash
	st    *trust.State
	since map[string]string
}

// memberKeys returns KeyEvents of dir, kept per repository while its trust
// tip stays.
func (s *Server) memberKeys(dir string) (*trust.State, map[string]string, error) {
	tip, err := gitio.ReadRef(dir, hubrefs.TrustRef)
	if err == nil {
		s.mu.Lock()
		k, ok := s.keys[dir]
		s.mu.Unlock()
		if ok && k.tip == tip {
			return k.st, k.since, nil
		}
	}
	tip, st, since, err := keyEventsAt(dir)
	if err != nil {
		return nil, nil, err
	}
	s.mu.Lock()
	if s.keys == nil {
		s.keys = map[string]memberKeys{}
	}
	s.keys[dir] = memberKeys{tip, st, since}
	s.mu.Unlock()
	return st, since, nil
}
