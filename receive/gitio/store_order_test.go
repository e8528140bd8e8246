package gitio

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/gitplus/gitplus/fixtures"
)

// TestPacksSearchedNewestFirst: packs are listed (and so opened and
// searched) newest first by the .pack's modification time, as git does, so
// a push's own recent objects are found without opening the old packs.
func TestPacksSearchedNewestFirst(t *testing.T) {
	dir := t.TempDir()
	makeHistory(t, dir, 3)
	gitDir := filepath.Join(dir, ".git")
	fixtures.GitRaw(t, dir, nil, "repack", "-q", "-a", "-d")
	write(t, filepath.Join(dir, "new.txt"), "new\n")
	fixtures.GitRaw(t, dir, nil, "add", "-A")
	fixtures.GitRaw(t, dir, nil, "commit", "-q", "-m", "newer")
	fixtures.GitRaw(t, dir, nil, "repack", "-q", "-d") // a second pack holding just the new objects
	idxs := packFiles(t, gitDir)
	if len(idxs) != 2 {
		t.Fatalf("want 2 packs, have %v", idxs)
	}
	head := plumbing.NewHash(fixtures.Git(t, dir, "rev-parse", "HEAD"))
	holder := -1
	for i, path := range idxs {
		x, err := OpenPackIndex(path)
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := x.Lookup(head); ok {
			holder = i
		}
		x.Close()
	}
	if holder < 0 {
		t.Fatal("no pack holds HEAD")
	}
	base := time.Now().Add(-time.Hour)
	for _, newer := range []int{0, 1} { // whatever the names sort as
		for i, idx := range idxs {
			at := base
			if i == newer {
				at = base.Add(time.Minute)
			}
			if err := os.Chtimes(strings.TrimSuffix(idx, ".idx")+".pack", at, at); err != nil {
				t.Fatal(err)
			}
		}
		s, err := OpenStore(gitDir, QuarantineEnv{})
		if err != nil {
			t.Fatal(err)
		}
		ps := s.dirs()[0].packList()
		if len(ps) != 2 || ps[0].idxPath != idxs[newer] {
			t.Fatalf("pack order %s, %s; want %s first", ps[0].idxPath, ps[1].idxPath, idxs[newer])
		}
		if _, _, err := s.ReadRaw(head); err != nil {
			t.Fatal(err)
		}
		if newer == holder && ps[1].idx != nil {
			t.Fatalf("reading HEAD, which the newest pack holds, opened the older pack %s too", ps[1].idxPath)
		}
		s.Close()
	}
}
