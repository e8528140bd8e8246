package mergetree

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os/exec"
	"testing"
	"time"

	"github.com/go-git/go-billy/v5/osfs"
	"github.com/go-git/go-git/v5/plumbing/cache"
	"github.com/go-git/go-git/v5/storage/filesystem"
)

// BenchmarkMergeVsGit times, in one run over the same 200 small random
// merges, our in-process merge (opening the repository inside the timed
// region, as git does) and `git merge-tree --write-tree --stdin`, and
// reports both per merge and their ratio (ours/git; ≤ 1 means no slower).
// Both sides write their results (builder mode, as git merge-tree does).
func BenchmarkMergeVsGit(b *testing.B) {
	const n = 200
	g := &mtGen{r: rand.New(rand.NewPCG(11, 12))}
	cases := make([]mtCase, n)
	for i := range cases {
		cases[i] = g.gen(i)
	}
	repo := newMTRepo(b)
	ids := repo.fastImport(cases)
	var in bytes.Buffer
	for _, c := range ids {
		fmt.Fprintf(&in, "%s %s\n", c[1], c[2])
	}
	var ours, theirs time.Duration
	b.ResetTimer()
	for it := 0; it < b.N; it++ {
		start := time.Now()
		fs := filesystem.NewStorageWithOptions(osfs.New(repo.dir), cache.NewObjectLRUDefault(),
			filesystem.Options{KeepDescriptors: true})
		s := NewGoGitStore(fs)
		opt := Options{Writer: s, Cache: NewCache()}
		for _, c := range ids {
			if _, err := Merge(s, c[1], c[2], opt); err != nil {
				b.Fatal(err)
			}
		}
		fs.Close()
		ours += time.Since(start)

		start = time.Now()
		cmd := exec.Command("git", "merge-tree", "--write-tree", "--stdin")
		cmd.Env = append(mtGitEnv(repo.home), "GIT_DIR="+repo.dir)
		cmd.Stdin = bytes.NewReader(in.Bytes())
		if out, err := cmd.Output(); err != nil || len(out) == 0 {
			b.Fatalf("git merge-tree --stdin: %v", err)
		}
		theirs += time.Since(start)
	}
	b.StopTimer()
	per := float64(b.N * n)
	b.ReportMetric(float64(ours.Nanoseconds())/per, "ours-ns/merge")
	b.ReportMetric(float64(theirs.Nanoseconds())/per, "git-ns/merge")
	b.ReportMetric(float64(ours)/float64(theirs), "ratio")
}
