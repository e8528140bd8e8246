// Package audit benchmarks `git+ verify --branch` (policy.Audit) over a
// history of N landings against `git log --first-parent` over the same
// branch, in the same run.
//
//	go test ./bench/audit -run '^$' -bench . -benchtime 3x
//	go test ./bench/audit -run '^$' -bench . -benchtime 3x -args -landings 5000
//
// Setup (not timed): a bare repository with a trust log (admin; dev with
// hub.pr, source.push, hub.queue; rev with hub.review; ci with
// hub.check:ci) and rules protecting refs/heads/main with candidates on.
// Each landing i is a pull request whose head H_i is one commit on the
// branch tip changing one file; every 4th lands as a candidate step
// C_i = [tip, H_i] with tree mergeTree(tip, H_i), the others directly.
// Each pull request holds pr.opened, an approving review, check.completed
// (on H_i, or on C_i for a candidate) and pr.merged: 4 signed events,
// written with hubrefs.WriteEvent, refs set with update-ref, then
// `git repack -adq` as a server's repository would be. No hook runs.
//
// Reported:
//
//	audit-ms  receive.ReadRefs + OpenStore + policy.Audit on GOMAXPROCS
//	          loading workers, as git+ verify runs it (no fold cache:
//	          every pull request log read and every signature verified, the
//	          state before each pr.merged judged, mergeTree per candidate)
//	gitlog-ms git log --first-parent --format=%H%x09%T%x09%P%x09%s main
//	ratio     audit-ms / gitlog-ms (goal ≤ 5)
//	audit-cpu-ms, cpu-ratio  the cold audit's CPU time (user+sys, all
//	          threads), and that over git log's: the figure other jobs on
//	          the machine move least
//	warm-audit-ms, warm-ratio  the same audit with the fold cache git+ verify
//	          keeps under the git directory already filled (a repeated audit:
//	          hub logs decoded from the cache, signatures not re-verified)
//
// With -args -cpuprofile FILE, after the timed runs it profiles
// -profileruns (default 20) warm audits into FILE and as many cold ones
// into FILE.cold (go tool pprof FILE).
package audit

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/go-git/go-billy/v5/osfs"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/cache"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/storage/filesystem"

	"github.com/gitplus/gitplus/fixtures"
	"github.com/gitplus/gitplus/hubrefs"
	"github.com/gitplus/gitplus/hubrefs/sshsign"
	"github.com/gitplus/gitplus/hubrefs/trust"
	"github.com/gitplus/gitplus/policy"
	"github.com/gitplus/gitplus/receive"
)

var (
	landings    = flag.Int("landings", 1000, "landings in the generated history")
	cpuprofile  = flag.String("cpuprofile", "", "after the timed runs, write a CPU profile of -profileruns warm audits to this file and of as many cold audits to this file + \".cold\"")
	profileRuns = flag.Int("profileruns", 20, "audits per -cpuprofile profile")
)

const (
	repoID = "01900000-0000-7000-8000-0000000000aa"
	main   = "refs/heads/main"
)

func newSigner(tb testing.TB) hubrefs.Signer { return sshsign.NewSigner(fixtures.NewSSHSigner(tb)) }

// build writes the history into a new bare repository; it returns the
// number of candidate steps.
func build(tb testing.TB, dir string, n int) int {
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
	var refs strings.Builder
	setRef := func(ref string, id plumbing.Hash) { fmt.Fprintf(&refs, "update %s %s\n", ref, id) }

	tip := write(hubrefs.RepoCreated{Base: base(hubrefs.TypeRepoCreated), Name: "bench",
		Admin: hubrefs.Admin{Name: "admin", Key: hubrefs.AuthorizedKey(admin.PublicKey())}}, plumbing.ZeroHash, "admin", admin)
	for _, m := range []struct {
		name string
		s    hubrefs.Signer
		caps []string
	}{{"dev", dev, []string{trust.CapPR, trust.CapSourcePush, trust.CapQueue}}, {"rev", rev, []string{trust.CapReview}}, {"ci", ci, []string{trust.CheckCap("ci")}}} {
		tip = write(hubrefs.MemberAdded{Base: base(hubrefs.TypeMemberAdded), Name: m.name,
			Key: hubrefs.AuthorizedKey(m.s.PublicKey()), Caps: m.caps}, tip, "admin", admin)
	}
	tip = write(hubrefs.RulesSet{Base: base(hubrefs.TypeRulesSet),
		Rules: []byte(`{"protected":{"refs/heads/main":{"requiredApprovals":1,"requiredChecks":["ci"],"queueCandidates":true,"queueDepth":8}}}`)}, tip, "admin", admin)
	setRef(hubrefs.TrustRef, tip)

	// Source objects.
	obj := func(t plumbing.ObjectType, content []byte) plumbing.Hash {
		o := st.NewEncodedObject()
		o.SetType(t)
		w, _ := o.Writer()
		w.Write(content)
		w.Close()
		id, err := st.SetEncodedObject(o)
		if err != nil {
			tb.Fatal(err)
		}
		return id
	}
	commit := func(tree plumbing.Hash, msg string, parents ...plumbing.Hash) plumbing.Hash {
		sig := object.Signature{Name: "dev", Email: "dev@example.invalid", When: tick()}
		c := &object.Commit{Author: sig, Committer: sig, Message: msg, TreeHash: tree, ParentHashes: parents}
		o := st.NewEncodedObject()
		if err := c.Encode(o); err != nil {
			tb.Fatal(err)
		}
		id, err := st.SetEncodedObject(o)
		if err != nil {
			tb.Fatal(err)
		}
		return id
	}
	treeOf := func(i int) plumbing.Hash {
		blob := obj(plumbing.BlobObject, []byte(fmt.Sprintf("landing %d\n", i)))
		var t []byte
		t = append(t, "100644 f.txt\x00"...)
		t = append(t, blob[:]...)
		return obj(plumbing.TreeObject, t)
	}
	branch := commit(treeOf(0), "root")
	cands := 0
	for i := 1; i <= n; i++ {
		tree := treeOf(i)
		h := commit(tree, fmt.Sprintf("feature %d", i), branch)
		id := fmt.Sprintf("01900000-0000-7000-8000-%012x", i)
		landed, checked := h, h
		if i%4 == 0 {
			landed = commit(tree, fmt.Sprintf("Merge pull request %s into main", id), branch, h)
			checked = landed
			cands++
		}
		hs := h.String()
		p := write(hubrefs.PROpened{Base: base(hubrefs.TypePROpened), ID: id, BaseRef: main, Head: hs, Title: fmt.Sprint("landing ", i)}, plumbing.ZeroHash, "dev", dev)
		p = write(hubrefs.Review{Base: base(hubrefs.TypeReviewSubmit), Head: hs, BaseRef: main, Verdict: "approve"}, p, "rev", rev)
		p = write(hubrefs.Check{Base: base(hubrefs.TypeCheckCompleted), Name: "ci", Head: checked.String(), Conclusion: "success"}, p, "ci", ci)
		p = write(hubrefs.PRMerged{Base: base(hubrefs.TypePRMerged), Revision: hs, Branch: main, Commit: landed.String()}, p, "dev", dev)
		setRef(hubrefs.PRRefPrefix+id, p)
		branch = landed
	}
	setRef(main, branch)
	cmd := exec.Command("git", "--git-dir="+dir, "update-ref", "--stdin")
	cmd.Stdin = strings.NewReader(refs.String())
	if out, err := cmd.CombinedOutput(); err != nil {
		tb.Fatalf("update-ref: %v\n%s", err, out)
	}
	fixtures.Git(tb, dir, "repack", "-adq")
	return cands
}

func audit(tb testing.TB, dir string) *policy.AuditReport { return auditWith(tb, dir, nil) }

func auditWith(tb testing.TB, dir string, c policy.Cache) *policy.AuditReport {
	refs, err := receive.ReadRefs(dir)
	if err != nil {
		tb.Fatal(err)
	}
	store, err := receive.OpenStore(dir, receive.QuarantineEnv{})
	if err != nil {
		tb.Fatal(err)
	}
	defer store.Close()
	rep, err := policy.Audit(policy.AuditInput{Objects: receive.Objects{Store: store}, Refs: refs, Branch: main, Cache: c, Workers: runtime.GOMAXPROCS(0)})
	if err != nil {
		tb.Fatal(err)
	}
	return rep
}

// gitLog runs git log --first-parent and returns its CPU time (user+sys).
func gitLog(tb testing.TB, dir string, want int) time.Duration {
	cmd := exec.Command("git", "--git-dir="+dir, "log", "--first-parent", "--format=%H%x09%T%x09%P%x09%s", main)
	out, err := cmd.Output()
	if err != nil {
		tb.Fatal(err)
	}
	if c := strings.Count(string(out), "\n"); c != want {
		tb.Fatalf("git log printed %d commits, want %d", c, want)
	}
	return cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
}

// selfCPU is the CPU time (user+sys) this process has used.
func selfCPU() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func BenchmarkAudit(b *testing.B) {
	n := *landings
	dir := filepath.Join(b.TempDir(), "bench.git")
	start := time.Now()
	cands := build(b, dir, n)
	b.Logf("generated %d landings (%d candidates) in %v", n, cands, time.Since(start).Round(time.Millisecond))
	var auditD, warmD, logD, auditCPU, logCPU time.Duration
	dc := receive.NewDirCache(dir)
	auditWith(b, dir, dc) // warm the fold cache (what git+ verify keeps)
	for b.Loop() {
		t2 := time.Now()
		auditWith(b, dir, dc)
		warmD += time.Since(t2)
		runtime.GC()
		c0, t0 := selfCPU(), time.Now()
		rep := audit(b, dir)
		auditD += time.Since(t0)
		auditCPU += selfCPU() - c0
		direct, c, _, _ := rep.Counts()
		if len(rep.Unjustified) != 0 || direct+c != n || c != cands {
			b.Fatalf("audit: %d direct, %d candidates, %d unjustified (first: %+v)", direct, c, len(rep.Unjustified), rep.Unjustified)
		}
		t1 := time.Now()
		logCPU += gitLog(b, dir, n+1)
		logD += time.Since(t1)
	}
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 / float64(b.N) }
	b.ReportMetric(ms(auditD), "audit-ms")
	b.ReportMetric(ms(logD), "gitlog-ms")
	b.ReportMetric(ms(auditD)/ms(logD), "ratio")
	b.ReportMetric(ms(auditCPU), "audit-cpu-ms")
	b.ReportMetric(ms(auditCPU)/ms(logCPU), "cpu-ratio")
	b.ReportMetric(ms(warmD), "warm-audit-ms")
	b.ReportMetric(ms(warmD)/ms(logD), "warm-ratio")
	if *cpuprofile != "" {
		b.StopTimer()
		profileTo(b, *cpuprofile, func() { auditWith(b, dir, dc) })
		profileTo(b, *cpuprofile+".cold", func() { audit(b, dir) })
	}
}

// profileTo writes a CPU profile of -profileruns calls of f to path. The
// profiled runs are not timed: the reported figures come from the loop.
func profileTo(tb testing.TB, path string, f func()) {
	out, err := os.Create(path)
	if err != nil {
		tb.Fatalf("-cpuprofile: %v", err)
	}
	defer out.Close()
	if err := pprof.StartCPUProfile(out); err != nil {
		tb.Fatalf("-cpuprofile %s: %v", path, err)
	}
	for i := 0; i < *profileRuns; i++ {
		f()
	}
	pprof.StopCPUProfile()
	if err := out.Close(); err != nil {
		tb.Fatalf("-cpuprofile %s: %v", path, err)
	}
	tb.Logf("CPU profile of %d audits: go tool pprof %s", *profileRuns, path)
}

// TestAuditSmall keeps the generator and the audit honest under go test.
func TestAuditSmall(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "small.git")
	cands := build(t, dir, 12)
	rep := audit(t, dir)
	direct, c, _, covered := rep.Counts()
	if len(rep.Unjustified) != 0 || direct != 12-cands || c != cands || covered != 0 {
		t.Fatalf("audit: %d direct, %d candidates, %d covered, unjustified %+v", direct, c, covered, rep.Unjustified)
	}
}
