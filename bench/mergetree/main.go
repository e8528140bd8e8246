// Command mergetree-bench compares mergetree.Merge with `git merge-tree
// --write-tree --stdin` over the real merge commits of a repository: how
// often they agree, and the time ratio.
//
//	go run ./bench/mergetree -repo /path/to/repo.git [-n 500]
//
// It takes the two-parent merges of `git rev-list --merges` (newest first,
// at most -n), keeps those with exactly one merge base and no rename on
// either side (`git diff-tree -r -M` base→parent shows no R), then runs
// git's merge-tree once over all pairs (one process, --stdin) and our merge
// in process over the same pairs. Our timed region includes opening the
// repository (pack index decoding), as git's does. Our side runs as the
// verifier (nothing written) with one object cache for the run, as git's
// --stdin keeps its parsed objects; git writes its result objects (for real
// merges they mostly exist already). git runs with an empty configuration.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"runtime/pprof"
	"strings"
	"time"

	"github.com/go-git/go-billy/v5/osfs"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/cache"
	"github.com/go-git/go-git/v5/storage/filesystem"

	"github.com/gitplus/gitplus/mergetree"
	"github.com/gitplus/gitplus/receive"
)

func main() {
	repo := flag.String("repo", "", "git directory of the repository")
	n := flag.Int("n", 500, "merges to examine (newest first)")
	rounds := flag.Int("rounds", 3, "timed rounds per side (best is reported)")
	cpuprofile := flag.String("cpuprofile", "", "write a CPU profile of our side to this file")
	gogit := flag.Bool("gogit", false, "read objects through go-git's filesystem storage instead of package receive's store")
	flag.Parse()
	if *repo == "" {
		fmt.Fprintln(os.Stderr, "usage: mergetree-bench -repo DIR [-n N]")
		os.Exit(2)
	}
	home, err := os.MkdirTemp("", "mtbench-home")
	check(err)
	defer os.RemoveAll(home)
	env := append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+home, "GIT_CONFIG_GLOBAL=/dev/null", "GIT_DIR="+*repo)
	git := func(stdin []byte, args ...string) []byte {
		cmd := exec.Command("git", args...)
		cmd.Env = env
		if stdin != nil {
			cmd.Stdin = bytes.NewReader(stdin)
		}
		var errb bytes.Buffer
		cmd.Stderr = &errb
		out, err := cmd.Output()
		if err != nil {
			if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 {
				fmt.Fprintf(os.Stderr, "git %s: %v\n%s", strings.Join(args, " "), err, errb.String())
				os.Exit(1)
			}
		}
		return out
	}

	type merge struct{ base, p1, p2 string }
	var all []merge
	stats := map[string]int{}
	for _, line := range strings.Split(strings.TrimSpace(string(git(nil, "rev-list", "--merges", "--parents", "-n", fmt.Sprint(*n), "HEAD"))), "\n") {
		f := strings.Fields(line)
		if len(f) != 3 {
			stats["skipped: octopus"]++
			continue
		}
		bases := strings.Fields(string(git(nil, "merge-base", "--all", f[1], f[2])))
		if len(bases) != 1 {
			stats["skipped: several bases"]++
			continue
		}
		all = append(all, merge{bases[0], f[1], f[2]})
	}
	// Renames: one diff-tree process; "<commit> <base>" diffs base→commit.
	var in bytes.Buffer
	for _, m := range all {
		fmt.Fprintf(&in, "%s %s\n%s %s\n", m.p1, m.base, m.p2, m.base)
	}
	renamed := map[string]bool{}
	cur := ""
	for _, line := range strings.Split(string(git(in.Bytes(), "diff-tree", "--stdin", "-r", "-M", "--name-status")), "\n") {
		if len(line) == 40 && plumbing.IsHash(line) {
			cur = line
		} else if strings.HasPrefix(line, "R") {
			renamed[cur] = true
		}
	}
	var merges []merge
	for _, m := range all {
		if renamed[m.p1] || renamed[m.p2] {
			stats["skipped: rename"]++
			continue
		}
		merges = append(merges, m)
	}
	in.Reset()
	for _, m := range merges {
		fmt.Fprintf(&in, "%s %s\n", m.p1, m.p2)
	}

	// git's side.
	var gitOut []byte
	gitBest := time.Duration(1 << 62)
	for r := 0; r < *rounds; r++ {
		start := time.Now()
		gitOut = git(in.Bytes(), "merge-tree", "--write-tree", "--stdin")
		gitBest = min(gitBest, time.Since(start))
	}
	gits := parseStdin(gitOut, len(merges))

	// Our side, opening the repository inside the timed region.
	results := make([]mergetree.Result, len(merges))
	oursBest := time.Duration(1 << 62)
	if *cpuprofile != "" {
		pf, err := os.Create(*cpuprofile)
		check(err)
		check(pprof.StartCPUProfile(pf))
		defer pprof.StopCPUProfile()
	}
	for r := 0; r < *rounds; r++ {
		start := time.Now()
		var s mergetree.Store
		var closer func() error
		if *gogit {
			fs := filesystem.NewStorageWithOptions(osfs.New(*repo), cache.NewObjectLRUDefault(),
				filesystem.Options{KeepDescriptors: true})
			s, closer = mergetree.NewGoGitStore(fs), fs.Close
		} else {
			st, err := receive.OpenStore(*repo, receive.QuarantineEnv{})
			check(err)
			s, closer = receive.Objects{Store: st}, st.Close
		}
		opt := mergetree.Options{Cache: mergetree.NewCache()}
		for i, m := range merges {
			res, err := mergetree.Merge(s, plumbing.NewHash(m.p1), plumbing.NewHash(m.p2), opt)
			if err != nil {
				fmt.Fprintf(os.Stderr, "merge %s %s: %v\n", m.p1, m.p2, err)
				os.Exit(1)
			}
			results[i] = res
		}
		closer()
		oursBest = min(oursBest, time.Since(start))
	}

	for i, m := range merges {
		g, res := gits[i], results[i]
		switch {
		case g.rename:
			stats["skipped: git reports a rename"]++
		case res.Base.String() != m.base:
			stats["DIFFERENT BASE"]++
		case res.Clean() && g.clean && res.Tree.String() == g.tree:
			stats["agree: same tree"]++
		case !res.Clean() && !g.clean:
			stats["agree: both conflict"]++
		case res.Clean() && g.clean:
			stats["DIFFERENT TREES"]++
			fmt.Printf("different trees: %s %s\n", m.p1, m.p2)
		case res.Clean():
			stats["CLEAN WHERE GIT CONFLICTS"]++
			fmt.Printf("clean where git conflicts: %s %s\n", m.p1, m.p2)
		default:
			stats["conflict where git is clean"]++
			fmt.Printf("conflict where git is clean: %s %s %v\n", m.p1, m.p2, res.Conflicts)
		}
	}
	fmt.Printf("repository %s: %d merges examined, %d compared\n", *repo, *n, len(merges))
	for _, k := range []string{"agree: same tree", "agree: both conflict", "DIFFERENT TREES", "CLEAN WHERE GIT CONFLICTS", "conflict where git is clean", "DIFFERENT BASE", "skipped: octopus", "skipped: several bases", "skipped: rename", "skipped: git reports a rename"} {
		fmt.Printf("  %-30s %d\n", k, stats[k])
	}
	fmt.Printf("time (best of %d): ours %v, git %v, per merge ours %v git %v, ratio ours/git %.2f\n",
		*rounds, oursBest.Round(time.Millisecond), gitBest.Round(time.Millisecond),
		(oursBest / time.Duration(max(1, len(merges)))).Round(time.Microsecond),
		(gitBest / time.Duration(max(1, len(merges)))).Round(time.Microsecond),
		float64(oursBest)/float64(gitBest))
}

type gitResult struct {
	clean, rename bool
	tree          string
}

// parseStdin reads git 2.39's `merge-tree --stdin` output: per merge
// "<1|0>\0<tree>\0", for a conflict the conflicted entries, an empty field
// and the messages ("<n>\0<paths>…\0<type>\0<text>\0"), then an empty field
// (or, after a submodule conflict, git's advice text).
func parseStdin(out []byte, n int) []gitResult {
	f := strings.Split(string(out), "\x00")
	pos := 0
	next := func() string { s := f[pos]; pos++; return s }
	res := make([]gitResult, n)
	for i := range res {
		r := &res[i]
		r.clean = next() == "1"
		r.tree = next()
		if r.clean {
			next()
			continue
		}
		for next() != "" {
		}
		for {
			np := next()
			if np == "" || strings.HasPrefix(np, "Recursive merging with submodules") {
				break
			}
			var k int
			fmt.Sscan(np, &k)
			pos += k
			typ, text := next(), next()
			if strings.Contains(strings.ToLower(typ+text), "rename") {
				r.rename = true
			}
		}
	}
	return res
}

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
