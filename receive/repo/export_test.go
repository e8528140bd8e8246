package repo

import (
	"github.com/go-git/go-git/v5/plumbing"

	"github.com/gitplus/gitplus/hubrefs"
	"github.com/gitplus/gitplus/hubrefs/trust"
	"github.com/gitplus/gitplus/receive"
)

// SetBuildID stands in another build for the pr list memo until restore.
func SetBuildID(f func() []byte) (restore func()) {
	own := buildID
	buildID = f
	return func() { buildID = own }
}

// PRListEntry is the memo entry PRList would read for t, all and the refs
// as they are now, with text as its listing: its key and its bytes.
func PRListEntry(r *Repo, t *trust.State, all bool, text string) (plumbing.Hash, []byte) {
	refs, err := receive.ReadRefsUnder(r.GitDir, []string{hubrefs.PRRefPrefix}, nil)
	if err != nil {
		panic(err)
	}
	d := prListDigest(buildID(), t.Tip, all, refs)
	return prListKey(all), append(append(append([]byte(nil), prListMagic...), d[:]...), text...)
}
