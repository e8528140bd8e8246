package hook

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/pprof"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/google/uuid"

	"github.com/gitplus/gitplus/fixtures"
	"github.com/gitplus/gitplus/hooks/install"
	"github.com/gitplus/gitplus/hubrefs"
	"github.com/gitplus/gitplus/hubrefs/queue"
	"github.com/gitplus/gitplus/hubrefs/sshsign"
	"github.com/gitplus/gitplus/policy"
	"github.com/gitplus/gitplus/receive"
)

var (
	flagRepo    = flag.String("repo", "", "generated repository to start from (default $TMPDIR/gitplus-bench-<files>-<commits>.git, generated when missing)")
	flagSmall   = flag.Bool("small", false, "2,000 files / 1,000 commits instead of 20,000 / 10,000")
	flagDepths  = flag.String("depths", "1,8,32", "candidate chain depths (≤ 32)")
	flagReps    = flag.Int("reps", 7, "timed runs per measurement (median reported)")
	flagCLI     = flag.Bool("cli", false, "measure `git+ hook pre-receive` even when the lean git+hook binary sits beside git+")
	flagBin     = flag.String("bin", "", "git+ binary to run (default: build ./cmd/git+ from the work tree with fixtures.Binary)")
	flagPack    = flag.Bool("pack", false, "after setup, pack the loose objects (candidates, events) with git repack -d, as a push of more than receive.unpackLimit objects arrives")
	flagKeep    = flag.String("keep", "", "build the work repository in this (new) directory and keep it, with the hook's stdin for each depth in DIR/stdin-<N> and git merge-tree's in DIR/pairs-<N>, for profiling the binary by hand")
	flagBase    = flag.String("base", "", "another git+ binary (a build of the commit before a change): its pre-receive is timed too, interleaved with -bin's, floor and hook-warm, in the same run")
	flagOwners  = flag.Int("owners", 0, "path owners entries in main's rules (docs/trust.md, \"Path owners\"), each met by rev's approval where it matches")
	flagProfile = flag.String("cpuprofile", "", "write a CPU profile of in-process receive.JudgePush (deepest chain) to this file (and FILE.cold)")
)

const (
	target   = "refs/heads/main"
	maxDepth = 32
	rulesFmt = `{"protected": {"refs/heads/main": {"requiredApprovals": 1, "requiredChecks": ["ci"], "queueCandidates": true, "queueDepth": %d}}}`
)

// world is the prepared work repository.
type world struct {
	tb      testing.TB
	bin     string
	pre     []string // the pre-receive command measured
	preBase []string // -base's pre-receive command (nil: none)
	env     []string
	dir     string          // the work bare repository
	c       []plumbing.Hash // c[0] = tip of main, c[i] = candidate i
	h       []plumbing.Hash // h[i] = head of PR i (h[0] unused)
	facts   [][]byte        // facts[i-1] = the merge fact entry of C_i, as publishing recorded it
	nfiles  int
	// base: with -owners and -base, a second work repository built the
	// same way but without owners, where -base is timed (the base binary
	// does not know the field, and refuses to fold rules that have it): a
	// change's cost with its feature on, in the same run. Nil: -base is
	// timed here.
	base *world
}

// baseWorld is where -base is timed.
func (w *world) baseWorld() *world {
	if w.base != nil {
		w.base.tb = w.tb
		return w.base
	}
	return w
}

func (w *world) run(dir, stdin string, extra []string, name string, args ...string) (string, string, error) {
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Env = append(append([]string{}, w.env...), extra...)
	if stdin != "" {
		cmd.Stdin = strings.NewReader(stdin)
	}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	return out.String(), errb.String(), err
}

func (w *world) must(dir, stdin string, extra []string, name string, args ...string) string {
	w.tb.Helper()
	out, errs, err := w.run(dir, stdin, extra, name, args...)
	if err != nil {
		w.tb.Fatalf("%s %s: %v\n%s%s", name, strings.Join(args, " "), err, out, errs)
	}
	return out
}

func (w *world) git(stdin string, args ...string) string {
	w.tb.Helper()
	return w.must(w.dir, stdin, nil, "git", args...)
}

func baseRepo(tb testing.TB) string {
	files, commits := 20000, 10000
	if *flagSmall {
		files, commits = 2000, 1000
	}
	dir := *flagRepo
	if dir == "" {
		dir = filepath.Join(os.TempDir(), fmt.Sprintf("gitplus-bench-%d-%d.git", files, commits))
	}
	if _, err := os.Stat(filepath.Join(dir, "refs")); err == nil {
		return dir
	}
	if *flagRepo != "" {
		tb.Fatalf("-repo %s is not a git directory", dir)
	}
	tb.Logf("generating %s (%d files, %d commits) with bench/genrepo.sh", dir, files, commits)
	tmp := dir + ".tmp"
	os.RemoveAll(tmp)
	start := time.Now()
	cmd := exec.Command("sh", "../genrepo.sh", tmp, strconv.Itoa(files), strconv.Itoa(commits))
	if out, err := cmd.CombinedOutput(); err != nil {
		tb.Fatalf("genrepo.sh: %v\n%s", err, out)
	}
	if err := os.Rename(tmp, dir); err != nil {
		tb.Fatal(err)
	}
	tb.Logf("generated in %v", time.Since(start).Round(time.Second))
	return dir
}

func setup(tb testing.TB) *world {
	w := setupWith(tb, *flagOwners, *flagKeep)
	if *flagOwners > 0 && w.preBase != nil {
		w.base = setupWith(tb, 0, "")
	}
	return w
}

// setupWith builds a work repository whose rules have owners owners
// entries, kept in keep ("": a temporary directory).
func setupWith(tb testing.TB, owners int, keep string) *world {
	src := baseRepo(tb)
	root := tb.TempDir()
	if keep != "" {
		root = keep
		if err := os.Mkdir(root, 0o755); err != nil {
			tb.Fatalf("-keep: %v (give a directory that does not exist yet)", err)
		}
	}
	bin := *flagBin
	if bin == "" {
		bin = fixtures.Binary(tb)
	}
	pre := preCommand(bin)
	fmt.Printf("pre-receive command measured: %s\n", strings.Join(pre, " "))
	var preBase []string
	if *flagBase != "" {
		preBase = preCommand(*flagBase)
		fmt.Printf("pre-receive command of -base: %s\n", strings.Join(preBase, " "))
	}
	w := &world{tb: tb, bin: bin, pre: pre, preBase: preBase, env: fixtures.GitEnv(filepath.Join(root, "home")), dir: filepath.Join(root, "work.git")}
	os.MkdirAll(filepath.Join(root, "home"), 0o755)
	w.must(root, "", nil, "git", "clone", "-q", "--bare", src, w.dir)

	keys := filepath.Join(root, "keys")
	os.MkdirAll(keys, 0o700)
	admin := fixtures.NewKey(tb, keys, "admin")
	rev := fixtures.NewKey(tb, keys, "rev")
	asAdmin := []string{"GITPLUS_KEY=" + admin.Path}
	repoID := strings.TrimSpace(w.must(root, "", asAdmin, w.bin, "init", "--open", "--admin", "admin", w.dir)) // --open: pushes by path unsigned, as measured before requireKnownPusher
	if _, err := uuid.Parse(repoID); err != nil {
		tb.Fatalf("git+ init printed %q", repoID)
	}
	w.must(root, "", asAdmin, w.bin, "--repo", w.dir, "member", "add", "rev", "--key", rev.Path+".pub", "--cap", "hub.review")
	w.must(w.dir, withOwners(fmt.Sprintf(rulesFmt, maxDepth), owners), asAdmin, w.bin, "--repo", w.dir, "rules", "set", "-")

	c0 := strings.TrimSpace(w.git("", "rev-parse", target))
	w.c = []plumbing.Hash{plumbing.NewHash(c0)}
	w.h = []plumbing.Hash{{}}

	// Pull-request heads: one fast-import, each head modifies 2 or 3
	// existing files no other head touches (one line appended).
	paths := strings.Split(strings.TrimSpace(w.git("", "ls-tree", "-r", "--name-only", c0)), "\n")
	w.nfiles = len(paths)
	step := len(paths) / (maxDepth * 3)
	if step < 1 {
		tb.Fatalf("only %d files", len(paths))
	}
	chosen := make([][]string, maxDepth+1)
	var batch strings.Builder
	for i := 1; i <= maxDepth; i++ {
		k := 2 + i%2
		for j := 0; j < k; j++ {
			p := paths[((i-1)*3+j)*step+i%step]
			chosen[i] = append(chosen[i], p)
			fmt.Fprintf(&batch, "%s:%s\n", c0, p)
		}
	}
	contents := catBatch(tb, w, batch.String())
	var fi strings.Builder
	n := 0
	for i := 1; i <= maxDepth; i++ {
		msg := fmt.Sprintf("feature %d\n", i)
		fmt.Fprintf(&fi, "commit refs/heads/pr/%02d\ncommitter Dev <dev@example.invalid> %d +0000\ndata %d\n%s\nfrom %s\n",
			i, 1800000000+i, len(msg), msg, c0)
		for _, p := range chosen[i] {
			body := contents[n] + fmt.Sprintf("change from pull request %d\n", i)
			n++
			fmt.Fprintf(&fi, "M 100644 inline %s\ndata %d\n%s\n", p, len(body), body)
		}
	}
	w.git(fi.String(), "fast-import", "--quiet")
	for i := 1; i <= maxDepth; i++ {
		w.h = append(w.h, plumbing.NewHash(strings.TrimSpace(w.git("", "rev-parse", fmt.Sprintf("refs/heads/pr/%02d", i)))))
	}

	// Events and candidates, written straight into the object store.
	st, err := receive.OpenStore(w.dir, receive.QuarantineEnv{})
	if err != nil {
		tb.Fatal(err)
	}
	objs := receive.Objects{Store: st}
	adminS, revS := sshsign.NewSigner(admin.Signer), sshsign.NewSigner(rev.Signer)
	base := func(t string) hubrefs.Base { return hubrefs.Base{Type: t, Repo: repoID} }
	now := time.Now()
	var refs, publish, branches strings.Builder
	for i := 1; i <= maxDepth; i++ {
		id := uuid.Must(uuid.NewV7()).String()
		title := fmt.Sprintf("feature %d", i)
		hi := w.h[i].String()
		ev, err := hubrefs.WriteEvent(st, hubrefs.PROpened{Base: base(hubrefs.TypePROpened), ID: id, BaseRef: target, Head: hi, Title: title}, nil, "admin", now, adminS)
		if err != nil {
			tb.Fatal(err)
		}
		ev, err = hubrefs.WriteEvent(st, hubrefs.Review{Base: base(hubrefs.TypeReviewSubmit), Head: hi, BaseRef: target, Verdict: "approve"}, []plumbing.Hash{ev}, "rev", now, revS)
		if err != nil {
			tb.Fatal(err)
		}
		ci, conflicts, err := queue.BuildCandidate(objs, objs, w.c[i-1], w.h[i], id, target, title)
		if err != nil || len(conflicts) > 0 {
			tb.Fatalf("candidate %d: %v %v", i, err, conflicts)
		}
		w.c = append(w.c, ci)
		ev, err = hubrefs.WriteEvent(st, hubrefs.Check{Base: base(hubrefs.TypeCheckCompleted), Name: "ci", Head: ci.String(), Conclusion: "success"}, []plumbing.Hash{ev}, "admin", now, adminS)
		if err != nil {
			tb.Fatal(err)
		}
		fmt.Fprintf(&refs, "create %s%s %s\n", hubrefs.PRRefPrefix, id, ev)
		// The candidate branch, as queue run pushes it (docs/queue.md).
		fmt.Fprintf(&publish, "%s %s refs/heads/queue/main/%s\n", plumbing.ZeroHash, ci, id)
		fmt.Fprintf(&branches, "create refs/heads/queue/main/%s %s\n", id, ci)
	}
	w.git(refs.String(), "update-ref", "--stdin")
	// Publishing the candidate branches runs the hook, which learns each
	// candidate's merge fact (policy/facts.go); then the refs move. The
	// first run folds every hub log (cold); the one timed is a second
	// publish of all 32 with the fold cache warm and the facts dropped.
	publishHook := func() time.Duration {
		start := time.Now()
		if out, errs, err := w.run(w.dir, publish.String(), []string{"GIT_DIR=" + w.dir}, w.pre[0], w.pre[1:]...); err != nil {
			tb.Fatalf("publishing the candidate branches: %v\n%s%s", err, out, errs)
		}
		return time.Since(start)
	}
	publishHook()
	w.setFacts(maxDepth, false)
	pub := publishHook()
	start := time.Now()
	w.git(mergePairs(w, maxDepth), "merge-tree", "--write-tree", "--stdin")
	fmt.Printf("publishing the %d candidate branches through the hook (one push, loose objects, fold cache warm): %.1f ms; git merge-tree --stdin for the same %d merges: %.1f ms\n",
		maxDepth, ms(pub), maxDepth, ms(time.Since(start)))
	w.git(branches.String(), "update-ref", "--stdin")
	cache := receive.NewDirCache(w.dir)
	for i := 1; i <= maxDepth; i++ {
		b, ok := cache.Get(policy.MergeFactKey(w.c[i]))
		if !ok {
			tb.Fatalf("publishing candidate %d (%s) recorded no merge fact", i, w.c[i])
		}
		w.facts = append(w.facts, b)
	}

	// Our candidates must be git's merges.
	got := gitMerges(tb, w, maxDepth)
	args := []string{"rev-parse"}
	for i := 1; i <= maxDepth; i++ {
		args = append(args, w.c[i].String()+"^{tree}")
	}
	want := strings.Fields(w.git("", args...))
	if !slices.Equal(got, want) {
		tb.Fatalf("candidate trees differ from git merge-tree:\nours %v\ngit  %v", want, got)
	}
	if *flagPack {
		w.git("", "repack", "-d", "-q")
	}
	fmt.Printf("work repository objects (pack=%v):\n%s", *flagPack, w.git("", "count-objects", "-v"))
	if keep != "" {
		for i := 1; i <= maxDepth; i++ {
			line := fmt.Sprintf("%s %s %s\n", w.c[0], w.c[i], target)
			if err := os.WriteFile(filepath.Join(*flagKeep, fmt.Sprintf("stdin-%d", i)), []byte(line), 0o644); err != nil {
				tb.Fatal(err)
			}
			pairs := []byte(mergePairs(w, i))
			if err := os.WriteFile(filepath.Join(*flagKeep, fmt.Sprintf("pairs-%d", i)), pairs, 0o644); err != nil {
				tb.Fatal(err)
			}
		}
		fmt.Printf("kept the work repository %s (hook stdin in stdin-<N>, git merge-tree input in pairs-<N>)\n", w.dir)
	}
	return w
}

// catBatch returns the contents of each object named on a line of stdin.
func catBatch(tb testing.TB, w *world, stdin string) []string {
	out := []byte(w.git(stdin, "cat-file", "--batch"))
	var res []string
	for len(out) > 0 {
		nl := bytes.IndexByte(out, '\n')
		f := strings.Fields(string(out[:nl]))
		if len(f) != 3 {
			tb.Fatalf("cat-file: %q", out[:nl])
		}
		size, _ := strconv.Atoi(f[2])
		res = append(res, string(out[nl+1:nl+1+size]))
		out = out[nl+1+size+1:]
	}
	return res
}

// gitMerges runs git merge-tree --write-tree --stdin over C_{i-1} H_i for
// i = 1..n and returns the trees.
func gitMerges(tb testing.TB, w *world, n int) []string {
	out := w.git(mergePairs(w, n), "merge-tree", "--write-tree", "--stdin")
	var trees []string
	for _, rec := range strings.Split(out, "\x00\x00") {
		if rec == "" {
			continue
		}
		f := strings.Split(rec, "\x00")
		if f[0] != "1" {
			tb.Fatalf("git merge-tree reports a conflict: %q", rec)
		}
		trees = append(trees, f[1])
	}
	return trees
}

func mergePairs(w *world, n int) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "%s %s\n", w.c[i-1], w.h[i])
	}
	return b.String()
}

func (w *world) cacheDir() string { return filepath.Join(w.dir, receive.FoldCacheDir) }

// setFacts drops (on false) or restores (on true) the merge facts of
// C_1..C_n, leaving the rest of the fold cache as it is.
func (w *world) setFacts(n int, on bool) {
	c := receive.NewDirCache(w.dir)
	for i := 1; i <= n; i++ {
		if on {
			c.Put(policy.MergeFactKey(w.c[i]), w.facts[i-1])
		} else {
			c.Drop(policy.MergeFactKey(w.c[i]))
		}

	}
}

// preCommand is the pre-receive command of the git+ binary bin: the lean
// binary beside it unless -cli, else git+ hook pre-receive.
func preCommand(bin string) []string {
	pre := []string{bin, "hook", "pre-receive"}
	if lean := filepath.Join(filepath.Dir(bin), install.HookBinary); !*flagCLI {
		if _, err := os.Stat(lean); err == nil {
			pre = []string{lean, "pre-receive"}
		}
	}
	return pre
}

// hook runs git+ hook pre-receive for C_0 → C_n and returns its wall time.
func (w *world) hook(n int) time.Duration { return w.hookWith(w.pre, n) }

// hookWith is hook with the pre-receive command pre.
func (w *world) hookWith(pre []string, n int) time.Duration {
	w.tb.Helper()
	stdin := fmt.Sprintf("%s %s %s\n", w.c[0], w.c[n], target)
	start := time.Now()
	out, errs, err := w.run(w.dir, stdin, []string{"GIT_DIR=" + w.dir}, pre[0], pre[1:]...)
	d := time.Since(start)
	if err != nil {
		w.tb.Fatalf("hook refused depth %d: %v\n%s%s", n, err, out, errs)
	}
	return d
}

func (w *world) gitTime(n int) time.Duration {
	w.tb.Helper()
	stdin := mergePairs(w, n)
	start := time.Now()
	w.git(stdin, "merge-tree", "--write-tree", "--stdin")
	return time.Since(start)
}

// push lands C_n on main with a real git push from a client clone (its
// objects borrowed from the work repository, so nothing is sent), through
// the hooks `git+ init` installed, or with every hook turned off (plain);
// main is put back at C_0 before and after (not timed).
func (w *world) push(client string, n int, plain bool) time.Duration {
	w.tb.Helper()
	w.git("", "update-ref", target, w.c[0].String())
	args := []string{"-C", client, "push", "-q"}
	if plain {
		args = append(args, "--receive-pack=git -c core.hooksPath=/nonexistent receive-pack")
	}
	args = append(args, w.dir, w.c[n].String()+":"+target)
	start := time.Now()
	out, errs, err := w.run(client, "", nil, "git", args...)
	d := time.Since(start)
	if err != nil {
		w.tb.Fatalf("git push of depth %d (plain %v): %v\n%s%s", n, plain, err, out, errs)
	}
	if got := strings.TrimSpace(w.git("", "rev-parse", target)); got != w.c[n].String() {
		w.tb.Fatalf("after the push main is %s, want %s", got, w.c[n])
	}
	w.git("", "update-ref", target, w.c[0].String())
	return d
}

func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[len(s)/2]
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func BenchmarkHook(b *testing.B) {
	var depths []int
	for _, s := range strings.Split(*flagDepths, ",") {
		d, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || d < 1 || d > maxDepth {
			b.Fatalf("-depths: bad depth %q (1..%d)", s, maxDepth)
		}
		depths = append(depths, d)
	}
	start := time.Now()
	w := setup(b)
	b.Logf("setup %v: %s, %d files, %d commits on main", time.Since(start).Round(time.Millisecond), w.dir, w.nfiles,
		mustAtoi(b, w.git("", "rev-list", "--count", w.c[0].String())))

	// The client for whole pushes, and which pre-receive the installed
	// script runs.
	client := filepath.Join(filepath.Dir(w.dir), "client.git")
	w.must(filepath.Dir(w.dir), "", nil, "git", "clone", "-q", "--bare", "--shared", w.dir, client)
	script, _ := os.ReadFile(filepath.Join(w.dir, "hooks", "pre-receive"))
	runs := "git+ hook pre-receive (the lean binary is not beside git+ from the same clean build)"
	if strings.Contains(string(script), "gitplus_hook=") {
		runs = install.HookBinary + " pre-receive"
	}
	var pushes strings.Builder
	fmt.Fprintf(&pushes, "%6s %12s %12s %12s\n", "depth", "with-hooks", "no-hooks", "hooks-add")

	var table, minima, baseRows strings.Builder
	fmt.Fprintf(&baseRows, "%6s %10s %10s %8s %10s %10s %8s\n", "depth", "this-ms", "base-ms", "ratio", "this-min", "base-min", "ratio")
	head := fmt.Sprintf("%6s %10s %10s %10s %8s %8s %8s %8s\n", "depth", "hook-cold", "hook-merge", "hook-warm", "git", "r-cold", "r-merge", "r-warm")
	table.WriteString(head)
	minima.WriteString(head)
	b.Run("floor", func(b *testing.B) {
		// The hook creating an unprotected branch (not judged) and git
		// merge-tree with no pairs: process start, refs, rules.
		w.tb = b
		var hk, hb, gt []time.Duration
		floor := func(w *world, pre []string) time.Duration {
			stdin := fmt.Sprintf("%s %s refs/heads/bench-floor\n", plumbing.ZeroHash, w.c[0])
			start := time.Now()
			if out, errs, err := w.run(w.dir, stdin, []string{"GIT_DIR=" + w.dir}, pre[0], pre[1:]...); err != nil {
				b.Fatalf("hook floor: %v\n%s%s", err, out, errs)
			}
			return time.Since(start)
		}
		for range b.N {
			for r := 0; r < *flagReps; r++ {
				if w.preBase != nil && r%2 == 1 {
					hb = append(hb, floor(w.baseWorld(), w.preBase))
				}
				hk = append(hk, floor(w, w.pre))
				if w.preBase != nil && r%2 == 0 {
					hb = append(hb, floor(w.baseWorld(), w.preBase))
				}
				start := time.Now()
				w.git("", "merge-tree", "--write-tree", "--stdin")
				gt = append(gt, time.Since(start))
			}
		}
		if w.preBase != nil {
			fmt.Fprintf(&baseRows, "%6s %10.2f %10.2f %8.3f %10.2f %10.2f %8.3f\n", "floor", ms(median(hk)), ms(median(hb)), ms(median(hk))/ms(median(hb)),
				ms(slices.Min(hk)), ms(slices.Min(hb)), ms(slices.Min(hk))/ms(slices.Min(hb)))
		}
		h, g := median(hk), median(gt)
		b.ReportMetric(ms(h), "hook-ms")
		b.ReportMetric(ms(g), "git-ms")
		fmt.Fprintf(&table, "%6s %10s %10s %10.1f %8.1f\n", "floor", "", "", ms(h), ms(g))
	})
	for _, n := range depths {
		b.Run(fmt.Sprintf("depth=%d", n), func(b *testing.B) {
			w.tb = b
			var cold, merge, warm, warmBase, gt, ph, pp []time.Duration
			for range b.N {
				for r := 0; r < *flagReps; r++ {
					os.RemoveAll(w.cacheDir())
					cold = append(cold, w.hook(n))
					merge = append(merge, w.hook(n)) // fold cache warm, no merge facts: every merge computed
					w.setFacts(n, true)
					if w.preBase != nil && r%2 == 1 {
						bw := w.baseWorld()
						bw.setFacts(n, true)
						warmBase = append(warmBase, bw.hookWith(w.preBase, n))
						w.setFacts(n, true)
					}
					warm = append(warm, w.hook(n)) // as the queue lands: facts learned when it published
					if w.preBase != nil && r%2 == 0 {
						bw := w.baseWorld()
						bw.setFacts(n, true)
						warmBase = append(warmBase, bw.hookWith(w.preBase, n))
					}
					gt = append(gt, w.gitTime(n))
					ph = append(ph, w.push(client, n, false))
					pp = append(pp, w.push(client, n, true))
				}
			}
			fmt.Fprintf(&pushes, "%6d %12.1f %12.1f %12.1f\n", n, ms(median(ph)), ms(median(pp)), ms(median(ph))-ms(median(pp)))
			c, m, h, g := median(cold), median(merge), median(warm), median(gt)
			b.ReportMetric(ms(c), "hook-cold-ms")
			b.ReportMetric(ms(m), "hook-merge-ms")
			b.ReportMetric(ms(h), "hook-warm-ms")
			b.ReportMetric(ms(g), "git-ms")
			b.ReportMetric(ms(m)/ms(g), "ratio-merge")
			b.ReportMetric(ms(h)/ms(g), "ratio-warm")
			row := func(c, m, h, g time.Duration) string {
				return fmt.Sprintf("%6d %10.1f %10.1f %10.1f %8.1f %8.2f %8.2f %8.2f\n", n, ms(c), ms(m), ms(h), ms(g), ms(c)/ms(g), ms(m)/ms(g), ms(h)/ms(g))
			}
			table.WriteString(row(c, m, h, g))
			if w.preBase != nil {
				fmt.Fprintf(&baseRows, "%6d %10.2f %10.2f %8.3f %10.2f %10.2f %8.3f\n", n, ms(h), ms(median(warmBase)), ms(h)/ms(median(warmBase)),
					ms(slices.Min(warm)), ms(slices.Min(warmBase)), ms(slices.Min(warm))/ms(slices.Min(warmBase)))
			}
			minima.WriteString(row(slices.Min(cold), slices.Min(merge), slices.Min(warm), slices.Min(gt)))
		})
	}
	w.tb = b
	fmt.Printf("medians of %d runs (pack=%v):\n%s", *flagReps, *flagPack, table.String())
	fmt.Printf("minima (least disturbed by machine load):\n%s", minima.String())
	if w.preBase != nil {
		fmt.Printf("hook-warm (and floor) against -base, interleaved: medians and minima of %d runs:\n%s", *flagReps, baseRows.String())
	}
	fmt.Printf("a whole landing, git push from a local clone (nothing to send), medians in ms; the installed pre-receive runs %s:\n%s", runs, pushes.String())

	if *flagProfile != "" {
		n := slices.Max(depths)
		profile(b, w, n, false, *flagProfile)
		profile(b, w, n, true, *flagProfile+".cold")
	}
}

func mustAtoi(tb testing.TB, s string) int {
	n, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil {
		tb.Fatal(err)
	}
	return n
}

// profile judges C_0 → C_n in process under a CPU profile, repeatedly (at
// least 20 times and 3 s), with a warm or a cold fold cache, and prints the
// top of the profile.
func profile(b *testing.B, w *world, n int, cold bool, file string) {
	upd := []policy.Update{{Ref: target, Old: w.c[0], New: w.c[n]}}
	w.setFacts(n, false) // profile the merges
	judge := func() time.Duration {
		if cold {
			os.RemoveAll(w.cacheDir())
		}
		start := time.Now()
		v, err := receive.JudgePush(w.dir, receive.QuarantineEnv{}, upd)
		d := time.Since(start)
		if err != nil || len(v) != 1 || !v[0].Accepted() {
			b.Fatalf("JudgePush: %v %v", err, v)
		}
		return d
	}
	judge()
	f, err := os.Create(file)
	if err != nil {
		b.Fatal(err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		b.Fatal(err)
	}
	var ds []time.Duration
	start := time.Now()
	for len(ds) < 20 || time.Since(start) < 3*time.Second {
		ds = append(ds, judge())
	}
	pprof.StopCPUProfile()
	f.Close()
	mode := "warm (no merge facts)"
	if cold {
		mode = "cold"
	}
	fmt.Printf("in-process JudgePush depth %d, %s fold cache: median %.1f ms over %d runs; profile %s\n", n, mode, ms(median(ds)), len(ds), file)
	out, err := exec.Command("go", "tool", "pprof", "-top", "-nodecount=25", file).CombinedOutput()
	if err != nil {
		b.Logf("go tool pprof: %v", err)
	}
	fmt.Printf("--- CPU profile, JudgePush depth %d, %s fold cache (%d runs) ---\n%s", n, mode, len(ds), out)
	out, _ = exec.Command("go", "tool", "pprof", "-top", "-cum", "-nodecount=25", file).CombinedOutput()
	fmt.Printf("--- same, by cumulative ---\n%s", out)
}

// withOwners adds n path owners entries to rules. Even entries own a
// src/dAA/dBB/ directory of the generated repository (spread over them),
// approved by rev, who approves every head: where a step changes such a
// directory the entry is met. Odd entries own paths no step changes (a
// name pattern, an anchored ** glob) and name only admin, who opens every
// pull request and so never counts: never met, never triggered. So every
// step's changed files are diffed and matched against all n entries —
// the hook cannot conclude from the approvals alone.
func withOwners(rules string, n int) string {
	if n <= 0 {
		return rules
	}
	var entries []string
	for i := 0; i < n; i++ {
		if i%2 == 0 {
			entries = append(entries, fmt.Sprintf(`{"paths": ["src/d%02d/d%02d/"], "approvers": ["rev"], "approvals": 1}`, i%50, (i*7)%20))
		} else {
			entries = append(entries, fmt.Sprintf(`{"paths": ["*.x%d", "/docs/%d/**/*.md"], "approvers": ["admin"], "approvals": 1}`, i, i))
		}
	}
	return strings.Replace(rules, `"queueDepth"`, `"owners": [`+strings.Join(entries, ", ")+`], "queueDepth"`, 1)
}
