// Package fold benchmarks reading and folding one pull request ref against
// `git log --format=%B` over the same ref, in the same run.
//
//	go test ./bench/fold -run '^$' -bench . -benchtime 5x
//
// Each size builds a bare repository with a trust log (admin, dev with
// hub.pr, rev with hub.review, ci with hub.check:ci) and one pull request of
// N signed events (pr.opened, then a cycle of pr.updated, review.submitted,
// check.completed and thread events), packed with `git repack -ad` as a
// server's repository would be. Reported per size:
//
//	fold-ms   hubrefs.ReadLog (decode and verify every signature) + pr.Fold,
//	          objects read through package receive's store (own pack reader)
//	gitlog-ms git log --format=%B <ref> (a process, reading the same commits)
//	ratio     fold-ms / gitlog-ms (goal ≤ 2.0)
//	verify-ms ReadLog alone; purefold-ms pr.Fold alone on decoded events
//	gogit-fold-ms the same as fold-ms through go-git's filesystem storage
//	cached-fold-ms  fold-ms with a warm hubrefs.VerifiedCache (opt-in: every
//	                event's bytes were verified before, so no signature is
//	                checked again; every other check runs); cached-ratio
//	cpu-ratio       CPU time (user+sys) of fold-ms over that of git log: on a
//	                loaded machine wall-clock ratios are mostly scheduling
package fold

import (
	"crypto/sha1"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/go-git/go-billy/v5/osfs"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/cache"
	"github.com/go-git/go-git/v5/plumbing/storer"
	"github.com/go-git/go-git/v5/storage/filesystem"

	"github.com/gitplus/gitplus/fixtures"
	"github.com/gitplus/gitplus/hubrefs"
	"github.com/gitplus/gitplus/hubrefs/pr"
	"github.com/gitplus/gitplus/hubrefs/sshsign"
	"github.com/gitplus/gitplus/hubrefs/trust"
	"github.com/gitplus/gitplus/receive"
)

const (
	repoID = "01900000-0000-7000-8000-000000000001"
	prID   = "01900000-0000-7000-8000-000000000002"
	prRef  = hubrefs.PRRefPrefix + prID
)

var bigCeilings = hubrefs.Ceilings{EventsPerRef: 20000}

func newSigner(tb testing.TB) hubrefs.Signer { return sshsign.NewSigner(fixtures.NewSSHSigner(tb)) }

func fakeOID(i int) string {
	h := sha1.Sum([]byte(fmt.Sprint("head ", i)))
	return hex.EncodeToString(h[:])
}

// fixture is a generated repository.
type fixture struct {
	dir    string
	events int
	head   string // the pull request's last head
	trust  *trust.State
}

// build writes the trust log and a pull request of n events into a new bare
// repository and packs it.
func build(tb testing.TB, dir string, n int) *fixture {
	fixtures.Git(tb, ".", "init", "-q", "--bare", dir)
	st := filesystem.NewStorageWithOptions(osfs.New(dir), cache.NewObjectLRUDefault(), filesystem.Options{})
	admin, dev, rev, ci := newSigner(tb), newSigner(tb), newSigner(tb), newSigner(tb)
	when := time.Unix(1700000000, 0)
	tick := func() time.Time { when = when.Add(time.Second); return when }
	base := func(typ string) hubrefs.Base { return hubrefs.Base{Type: typ, Repo: repoID} }

	write := func(payload any, parent plumbing.Hash, name string, s hubrefs.Signer) plumbing.Hash {
		var parents []plumbing.Hash
		if !parent.IsZero() {
			parents = []plumbing.Hash{parent}
		}
		id, err := hubrefs.WriteEvent(st, payload, parents, name, tick(), s)
		if err != nil {
			tb.Fatal(err)
		}
		return id
	}

	// Trust log.
	tip := write(hubrefs.RepoCreated{Base: base(hubrefs.TypeRepoCreated), Name: "bench",
		Admin: hubrefs.Admin{Name: "admin", Key: hubrefs.AuthorizedKey(admin.PublicKey())}}, plumbing.ZeroHash, "admin", admin)
	for _, m := range []struct {
		name string
		s    hubrefs.Signer
		cap  string
	}{{"dev", dev, trust.CapPR}, {"rev", rev, trust.CapReview}, {"ci", ci, trust.CheckCap("ci")}} {
		tip = write(hubrefs.MemberAdded{Base: base(hubrefs.TypeMemberAdded), Name: m.name,
			Key: hubrefs.AuthorizedKey(m.s.PublicKey()), Caps: []string{m.cap}}, tip, "admin", admin)
	}
	fixtures.Git(tb, dir, "update-ref", hubrefs.TrustRef, tip.String())

	// The pull request.
	head := fakeOID(0)
	tip = write(hubrefs.PROpened{Base: base(hubrefs.TypePROpened), ID: prID, BaseRef: "refs/heads/main",
		Head: head, Title: "bench"}, plumbing.ZeroHash, "dev", dev)
	thread := 0
	for i := 1; i < n; i++ {
		switch i % 6 {
		case 0:
			head = fakeOID(i)
			tip = write(hubrefs.PRUpdated{Base: base(hubrefs.TypePRUpdated), Head: head}, tip, "dev", dev)
		case 1:
			tip = write(hubrefs.Review{Base: base(hubrefs.TypeReviewSubmit), Head: head, BaseRef: "refs/heads/main",
				Verdict: pr.Approve, Body: "looks good"}, tip, "rev", rev)
		case 2:
			tip = write(hubrefs.Check{Base: base(hubrefs.TypeCheckStarted), Name: "ci", Head: head}, tip, "ci", ci)
		case 3:
			tip = write(hubrefs.Check{Base: base(hubrefs.TypeCheckCompleted), Name: "ci", Head: head,
				Conclusion: pr.Success, URL: "https://ci.invalid/run/" + fmt.Sprint(i)}, tip, "ci", ci)
		case 4:
			thread++
			tip = write(hubrefs.Thread{Base: base(hubrefs.TypeThreadOpened), Thread: fmt.Sprint("t", thread),
				Body: "a question"}, tip, "rev", rev)
		case 5:
			tip = write(hubrefs.Thread{Base: base(hubrefs.TypeThreadResolved), Thread: fmt.Sprint("t", thread)}, tip, "dev", dev)
		}
	}
	fixtures.Git(tb, dir, "update-ref", prRef, tip.String())
	fixtures.Git(tb, dir, "repack", "-adq")

	f := &fixture{dir: dir, events: n, head: head}
	tstore := f.store()
	ttip, _ := tstore.Reference(hubrefs.TrustRef)
	evs, err := hubrefs.ReadLog(tstore, ttip.Hash(), hubrefs.Ceilings{})
	if err != nil {
		tb.Fatal(err)
	}
	if f.trust, err = trust.Fold(evs); err != nil {
		tb.Fatal(err)
	}
	return f
}

func (f *fixture) store() *filesystem.Storage {
	return filesystem.NewStorageWithOptions(osfs.New(f.dir), cache.NewObjectLRUDefault(), filesystem.Options{})
}

// objects opens the object store the measured read uses: package receive's
// layered store (own pack reader), or go-git's filesystem storage.
func (f *fixture) objects(gogit bool) (storer.EncodedObjectStorer, error) {
	if gogit {
		return f.store(), nil
	}
	return receive.OpenStore(f.dir, receive.QuarantineEnv{})
}

// readFold is the measured operation: open the stores, read the ref, read
// and verify the log, fold it.
func (f *fixture) readFold(gogit bool) (*pr.State, []hubrefs.Event, error) {
	return f.readFoldWith(gogit, nil)
}

// readFoldWith is readFold through hubrefs.ReadLogWith and vc.
func (f *fixture) readFoldWith(gogit bool, vc *hubrefs.VerifiedCache) (*pr.State, []hubrefs.Event, error) {
	ref, err := f.store().Reference(plumbing.ReferenceName(prRef))
	if err != nil {
		return nil, nil, err
	}
	objs, err := f.objects(gogit)
	if err != nil {
		return nil, nil, err
	}
	evs, err := hubrefs.ReadLogWith(objs, ref.Hash(), bigCeilings, vc)
	if err != nil {
		return nil, nil, err
	}
	s, err := pr.Fold(evs, f.trust)
	return s, evs, err
}

func (f *fixture) gitLog(tb testing.TB) time.Duration {
	d, _ := f.gitLogCPU(tb)
	return d
}

// selfCPU is the CPU time (user+sys) this process has used.
func selfCPU() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// gitLogCPU runs git log and returns its wall-clock and CPU time.
func (f *fixture) gitLogCPU(tb testing.TB) (time.Duration, time.Duration) {
	start := time.Now()
	cmd := exec.Command("git", "--git-dir="+f.dir, "log", "--format=%B", prRef)
	cmd.Env = fixtures.GitEnv(tb.TempDir())
	out, err := cmd.Output()
	if err != nil {
		tb.Fatal(err)
	}
	d := time.Since(start)
	if c := strings.Count(string(out), "\n\n{"); c != f.events {
		tb.Fatalf("git log printed %d payloads, want %d", c, f.events)
	}
	return d, cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
}

// check asserts what the fold must say about the generated pull request.
func (f *fixture) check(tb testing.TB, s *pr.State, evs []hubrefs.Event) {
	tb.Helper()
	if len(evs) != f.events {
		tb.Fatalf("read %d events, want %d", len(evs), f.events)
	}
	if s.ID != prID || s.State != pr.Open || s.Head != f.head {
		tb.Fatalf("fold: id %s state %s head %s, want %s open %s", s.ID, s.State, s.Head, prID, f.head)
	}
	// Every cycle approves and checks the head it just proposed, and
	// resolves the thread it opened.
	if f.events%6 == 0 {
		if len(s.Approvals) != 1 || s.Approvals[0] != "rev" {
			tb.Fatalf("approvals %v, want [rev]", s.Approvals)
		}
		if c, _ := s.Check("ci", f.head); c != pr.Success {
			tb.Fatalf("ci at the head: %q, want success", c)
		}
		if s.UnresolvedThreads != 0 {
			tb.Fatalf("%d unresolved threads, want 0", s.UnresolvedThreads)
		}
	}
}

// TestFoldSmall checks the generated log folds to what it should.
func TestFoldSmall(t *testing.T) {
	f := build(t, filepath.Join(t.TempDir(), "r.git"), 600)
	for _, gogit := range []bool{false, true} {
		s, evs, err := f.readFold(gogit)
		if err != nil {
			t.Fatal(err)
		}
		f.check(t, s, evs)
	}
	vc := hubrefs.NewVerifiedCache()
	for i := 0; i < 2; i++ { // cold, then warm
		s, evs, err := f.readFoldWith(false, vc)
		if err != nil {
			t.Fatal(err)
		}
		f.check(t, s, evs)
	}
	f.gitLog(t)
}

var (
	fixMu  sync.Mutex
	fixes  = map[int]*fixture{}
	fixDir string
)

func sized(b *testing.B, n int) *fixture {
	fixMu.Lock()
	defer fixMu.Unlock()
	if f, ok := fixes[n]; ok {
		return f
	}
	if fixDir == "" {
		// Benchmarks run sub-benchmarks several times; keep the repositories
		// for the whole process (the OS cleans its temp directory).
		d, err := mkTemp()
		if err != nil {
			b.Fatal(err)
		}
		fixDir = d
	}
	f := build(b, filepath.Join(fixDir, fmt.Sprintf("pr-%d.git", n)), n)
	fixes[n] = f
	return f
}

func BenchmarkFold(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		b.Run(fmt.Sprintf("events=%d", n), func(b *testing.B) {
			f := sized(b, n)
			// Warm the page cache and check the result once.
			s, evs, err := f.readFold(false)
			if err != nil {
				b.Fatal(err)
			}
			f.check(b, s, evs)
			f.gitLog(b)
			vc := hubrefs.NewVerifiedCache()
			if s, evs, err = f.readFoldWith(false, vc); err != nil {
				b.Fatal(err)
			}
			f.check(b, s, evs)

			var fold, gitlog, verify, pure, gogit, cached, foldCPU, gitCPU time.Duration
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				runtime.GC()
				c0, t0 := selfCPU(), time.Now()
				if _, _, err := f.readFold(false); err != nil {
					b.Fatal(err)
				}
				fold += time.Since(t0)
				foldCPU += selfCPU() - c0
				gw, gc := f.gitLogCPU(b)
				gitlog += gw
				gitCPU += gc

				t0 = time.Now()
				if _, _, err := f.readFoldWith(false, vc); err != nil {
					b.Fatal(err)
				}
				cached += time.Since(t0)

				t0 = time.Now()
				if _, _, err := f.readFold(true); err != nil {
					b.Fatal(err)
				}
				gogit += time.Since(t0)

				ref, _ := f.store().Reference(plumbing.ReferenceName(prRef))
				st, _ := f.objects(false)
				t1 := time.Now()
				evs, err := hubrefs.ReadLog(st, ref.Hash(), bigCeilings)
				if err != nil {
					b.Fatal(err)
				}
				t2 := time.Now()
				if _, err := pr.Fold(evs, f.trust); err != nil {
					b.Fatal(err)
				}
				verify += t2.Sub(t1)
				pure += time.Since(t2)
			}
			ms := func(d time.Duration) float64 { return float64(d) / float64(b.N) / 1e6 }
			b.ReportMetric(ms(fold), "fold-ms")
			b.ReportMetric(ms(gitlog), "gitlog-ms")
			b.ReportMetric(float64(fold)/float64(gitlog), "ratio")
			b.ReportMetric(ms(verify), "verify-ms")
			b.ReportMetric(ms(pure), "purefold-ms")
			b.ReportMetric(ms(gogit), "gogit-fold-ms")
			b.ReportMetric(ms(cached), "cached-fold-ms")
			b.ReportMetric(float64(cached)/float64(gitlog), "cached-ratio")
			b.ReportMetric(float64(foldCPU)/float64(gitCPU), "cpu-ratio")
		})
	}
}

func mkTemp() (string, error) { return os.MkdirTemp("", "gitplus-bench-fold-") }

// BenchmarkReadFold is the measured operation alone (for -cpuprofile): read,
// verify and fold the pull request of 10,000 events.
func BenchmarkReadFold(b *testing.B) {
	f := sized(b, 10000)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, _, err := f.readFold(false); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkReadFoldCached is BenchmarkReadFold with a warm VerifiedCache.
func BenchmarkReadFoldCached(b *testing.B) {
	f := sized(b, 10000)
	vc := hubrefs.NewVerifiedCache()
	if _, _, err := f.readFoldWith(false, vc); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, _, err := f.readFoldWith(false, vc); err != nil {
			b.Fatal(err)
		}
	}
}

// TestMain removes the benchmark repositories kept for the whole process.
func TestMain(m *testing.M) {
	code := m.Run()
	if fixDir != "" {
		os.RemoveAll(fixDir)
	}
	os.Exit(code)
}

// BenchmarkReadFold10k is the cold read + fold of the 10,000-event pull
// request alone, for profiles (-cpuprofile): one iteration = one readFold.
func BenchmarkReadFold10k(b *testing.B) {
	f := sized(b, 10000)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, _, err := f.readFold(false); err != nil {
			b.Fatal(err)
		}
	}
}
