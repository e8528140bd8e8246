package hubrefs

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
)

type benchLog struct {
	dir string
	tip plumbing.Hash
}

var (
	benchMu    sync.Mutex
	benchLogs  = map[int]benchLog{}
	benchClean []string
)

// benchRepo returns a bare repository whose refs/hub/pr/bench holds a chain
// of n signed check.completed events (loose objects, as a busy ref between
// gc runs), built once per process.
func benchRepo(b *testing.B, n int) benchLog {
	benchMu.Lock()
	defer benchMu.Unlock()
	if l, ok := benchLogs[n]; ok {
		return l
	}
	root, err := os.MkdirTemp("", "hubrefs-bench-")
	if err != nil {
		b.Fatal(err)
	}
	benchClean = append(benchClean, root)
	dir := filepath.Join(root, "repo.git")
	git(b, ".", "init", "-q", "--bare", dir)
	s := quickSigner()
	var tip plumbing.Hash
	for i := 0; i < n; i++ {
		var parents []plumbing.Hash
		if i > 0 {
			parents = []plumbing.Hash{tip}
		}
		p := Check{Base: Base{Type: TypeCheckCompleted, Repo: testRepo}, Name: "ci",
			Head: fmt.Sprintf("%040x", i), Conclusion: "success", URL: fmt.Sprintf("https://ci.example/runs/%d", i)}
		raw, err := EncodeEvent(p, parents, "ci-bot", time.Unix(1700000000+int64(i), 0), s)
		if err != nil {
			b.Fatal(err)
		}
		if tip, err = writeLoose(dir, plumbing.CommitObject, raw); err != nil {
			b.Fatal(err)
		}
	}
	git(b, dir, "update-ref", "refs/hub/pr/bench", tip.String())
	l := benchLog{dir: dir, tip: tip}
	benchLogs[n] = l
	return l
}

// gitLogTime is the best of three runs of git log --format=%B over the ref.
func gitLogTime(b *testing.B, dir string) time.Duration {
	best := time.Duration(1 << 62)
	for i := 0; i < 3; i++ {
		cmd := exec.Command("git", "--git-dir="+dir, "log", "--format=%B", "refs/hub/pr/bench")
		start := time.Now()
		if out, err := cmd.Output(); err != nil || len(out) == 0 {
			b.Fatalf("git log: %v", err)
		}
		if d := time.Since(start); d < best {
			best = d
		}
	}
	return best
}

// BenchmarkReadLog reads (and verifies every signature of) a ref of 1,000
// and 10,000 events from loose objects on disk, against git log --format=%B
// over the same ref in the same run (which verifies nothing).
func BenchmarkReadLog(b *testing.B) {
	defer func() {
		benchMu.Lock()
		for _, d := range benchClean {
			os.RemoveAll(d)
		}
		benchClean, benchLogs = nil, map[int]benchLog{}
		benchMu.Unlock()
	}()
	for _, n := range []int{1000, 10000} {
		b.Run(fmt.Sprintf("events=%d", n), func(b *testing.B) {
			l := benchRepo(b, n)
			gitTime := gitLogTime(b, l.dir)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				st := newLooseStore(l.dir)
				evs, err := ReadLog(st, l.tip, Ceilings{})
				st.Close()
				if err != nil || len(evs) != n {
					b.Fatalf("ReadLog: %d events, %v", len(evs), err)
				}
			}
			b.StopTimer()
			perOp := b.Elapsed() / time.Duration(b.N)
			b.ReportMetric(float64(perOp.Nanoseconds())/float64(n), "ns/event")
			b.ReportMetric(float64(gitTime.Microseconds())/1000, "git-log-ms")
			b.ReportMetric(float64(perOp)/float64(gitTime), "x-git-log")
		})
	}
}
