package repo

// The `pr list` memo (docs/scale.md, "The pr list memo"). The listing is a
// function of the trust state (named by the trust tip), of every pull
// request log (named by its ref's tip), of --all and of the code that
// renders it. The fold cache keeps the last listing under a digest of
// exactly those, so a `pr list` over unchanged refs reads the refs, one
// cache entry and nothing else:
//
//	key:   the first 20 bytes of SHA-256("gitplus pr list memo v1\n" + all)
//	entry: "gppl" 1 | digest (32) | the listing, as printed
//	digest: SHA-256 over the prefix, the build (receive.BuildID), all,
//	        the trust tip and every pull request ref read, in name order
//	        (name, NUL, id)
//
// A listing is stored only when it was computed in full without error (a
// pull request that cannot be read fails the command, and might read next
// time). An entry of another digest, layout or a damaged one is a miss.
// Like every fold cache entry it is trusted as the git directory is
// (docs/foldcache.md).

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"strconv"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/gitplus/gitplus/hubrefs"
	"github.com/gitplus/gitplus/hubrefs/trust"
	"github.com/gitplus/gitplus/receive"
)

var prListMagic = []byte("gppl\x01")

const prListPrefix = "gitplus pr list memo v1\n"

// buildID names the code that renders the listing (a variable, so tests
// can stand in another build).
var buildID = receive.BuildID

// PRList is `pr list` as text: one PRView.Line per pull request (open ones
// unless all), in PRs' order, each ending in a newline; through the memo
// above. A listing with pull requests left out (PRs' warnings) is never
// stored, so that every listing says what it left out.
func (r *Repo) PRList(t *trust.State, all bool) ([]byte, []string, error) {
	refs, err := receive.ReadRefsUnder(r.GitDir, []string{hubrefs.PRRefPrefix}, nil)
	if err != nil {
		return nil, nil, fmt.Errorf("listing refs in %s: %w", r.GitDir, err)
	}
	id := buildID()
	var digest [32]byte
	key := prListKey(all)
	cache := receive.NewDirCache(r.GitDir)
	if id != nil {
		digest = prListDigest(id, t.Tip, all, refs)
		if b, ok := cache.Get(key); ok && len(b) >= len(prListMagic)+len(digest) &&
			bytes.Equal(b[:len(prListMagic)], prListMagic) && bytes.Equal(b[len(prListMagic):len(prListMagic)+len(digest)], digest[:]) {
			return b[len(prListMagic)+len(digest):], nil, nil
		}
	}
	views, warnings := r.prsAt(t, all, refs)
	out := make([]byte, 0, len(prListMagic)+len(digest)+len(views)*128)
	out = append(append(out, prListMagic...), digest[:]...)
	for _, v := range views {
		out = append(append(out, v.Line()...), '\n')
	}
	if id != nil && len(warnings) == 0 {
		cache.Put(key, out)
	}
	return out[len(prListMagic)+len(digest):], warnings, nil
}

// prListKey is the memo's key (the package comment above).
func prListKey(all bool) plumbing.Hash {
	var key plumbing.Hash
	sum := sha256.Sum256([]byte(prListPrefix + strconv.FormatBool(all)))
	copy(key[:], sum[:])
	return key
}

// prListDigest is the memo's digest (the package comment above).
func prListDigest(build []byte, trustTip plumbing.Hash, all bool, refs map[string]plumbing.Hash) [32]byte {
	return receive.RefsDigest([]string{prListPrefix, string(build), strconv.FormatBool(all), trustTip.String()}, refs)
}
