package gitio

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
)

// ErrBadPrefix is an abbreviated object id that is not 4 to 39 hex digits.
var ErrBadPrefix = errors.New("not an abbreviated object id (4 to 39 hex digits)")

// HashesWithPrefix lists the objects of the store (loose and packed, every
// layer) whose ids start with prefix, 4 to 39 hex digits in either case,
// each once, sorted: what git asks to expand an abbreviated id.
func (s *Store) HashesWithPrefix(prefix string) ([]plumbing.Hash, error) {
	p := strings.ToLower(prefix)
	if len(p) < 4 || len(p) > 39 {
		return nil, fmt.Errorf("%q: %w", prefix, ErrBadPrefix)
	}
	if strings.Trim(p, "0123456789abcdef") != "" {
		return nil, fmt.Errorf("%q: %w", prefix, ErrBadPrefix)
	}
	seen := map[plumbing.Hash]bool{}
	for _, d := range s.dirs() {
		ents, err := os.ReadDir(filepath.Join(d.path, p[:2]))
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("listing loose objects %s in %s: %w", p[:2], d.path, err)
		}
		for _, e := range ents {
			if n := p[:2] + e.Name(); len(n) == 40 && strings.HasPrefix(n, p) && plumbing.IsHash(n) {
				seen[plumbing.NewHash(n)] = true
			}
		}
		for _, pk := range d.packList() {
			if err := pk.open(); err != nil {
				return nil, err
			}
			x := pk.idx
			i := sort.Search(x.Len(), func(i int) bool { return x.HashAt(i).String() >= p })
			for ; i < x.Len(); i++ {
				h := x.HashAt(i)
				if !strings.HasPrefix(h.String(), p) {
					break
				}
				seen[h] = true
			}
		}
	}
	out := make([]plumbing.Hash, 0, len(seen))
	for h := range seen {
		out = append(out, h)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].String() < out[j].String() })
	return out, nil
}
