package main

import (
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/gitplus/gitplus/hubrefs/queue"
	"github.com/gitplus/gitplus/hubrefs/trust"
	"github.com/gitplus/gitplus/policy"
)

// Partitions in the simulator (docs/queue.md, "Partitions and lanes"). A
// scenario drawn with Params.Partitions k > 0 lays the repository out in k
// directories p0 … p(k-1), one per partition: each pull request adds its
// file in the directory of a partition drawn at random (equal shares), and
// a share Params.Global of them, at random, is global instead: it adds its
// file at the root, in no partition. The draws come from a stream of their
// own, so the rest of the scenario (broken, arrivals, conflicts) is the
// one every discipline and the code before partitions see. A conflicting
// pair shares a partition (the first one's) and a file in it.
//
// A discipline with Lanes sets the rules' partitions to the layout's
// ({"name": "pK", "paths": ["pK/**"]}) and gives the planner the runner's
// partition functions: the planner classifies, lanes and lands as
// receive/queuerun does, each partition step judged by the boundary's rule
// (policy.TestedVerdict) before it lands. CI runs a lane's checks on a
// lane candidate (the queue.candidate's partition, as check run passes it
// in GITPLUS_CHECK_PARTITION), and they read the partition's inputs only:
// a candidate of lane X fails when a broken pull request of X is below it,
// and a candidate of no lane (a global entry's, tested whole) when any
// broken pull request is (breaks).

// globalPart marks a global pull request in scenario.part.
const globalPart = -1

// drawPartitions assigns each pull request a partition (or globalPart).
func drawPartitions(p Params, s *scenario) {
	s.part = make([]int, p.PRs)
	if p.Partitions <= 0 {
		return
	}
	r := rand.New(rand.NewPCG(p.Seed, 0x9a27))
	for i := range s.part {
		s.part[i] = r.IntN(p.Partitions)
	}
	ng := int(float64(p.PRs)*p.Global + 0.5)
	for _, i := range r.Perm(p.PRs)[:ng] {
		s.part[i] = globalPart
	}
	// A conflicting pair edits one file: the first's partition holds it.
	first := map[int]int{}
	for i, l := range s.line {
		if l < 0 {
			continue
		}
		if j, ok := first[l]; ok {
			s.part[i] = s.part[j]
		} else {
			first[l] = i
		}
	}
}

// partName is the partition pull request i belongs to ("" for global or
// without a layout).
func (s *sim) partName(i int) string {
	if s.p.Partitions <= 0 || s.sc.part[i] == globalPart {
		return ""
	}
	return fmt.Sprintf("p%d", s.sc.part[i])
}

// setPartitions puts the layout's partitions in the rules.
func setPartitions(b *trust.Branch, k int) {
	for i := 0; i < k; i++ {
		name := fmt.Sprintf("p%d", i)
		p, err := trust.NewPartition(name, []string{name + "/**"}, nil)
		if err != nil {
			panic(err)
		}
		b.Partitions = append(b.Partitions, p)
	}
}

// laneInput adds the runner's partition functions to in.
func (s *sim) laneInput(in *queue.PlanInput) {
	if !s.d.Lanes {
		return
	}
	store := s.repo.store
	in.Changed = func(from, to plumbing.Hash) ([]string, error) { return policy.ChangedFiles(store, from, to) }
	in.BuildTested = func(parent, head, tested plumbing.Hash, prID string) (plumbing.Hash, []string, error) {
		step, conflicts, err := queue.BuildTested(store, store, parent, head, tested, prID, target, s.byID[prID].Title, s.br.Squash())
		if err == nil && len(conflicts) == 0 {
			// A global entry's candidate may stand on partition steps
			// composed ahead of it (brokenBelow walks them).
			s.steps[step.String()], s.first[step.String()] = prIndex(prID), parent.String()
		}
		var paths []string
		for _, c := range conflicts {
			paths = append(paths, c.Path)
		}
		return step, paths, err
	}
	in.Tested = func(prev, step, tested, head plumbing.Hash, prID string) (string, string, error) {
		part, _, reason, err := policy.TestedVerdict(store, s.br, policy.TestedStep{Prev: prev, Step: step, Tested: tested, Head: head, PR: prID, Squash: s.br.Squash()})
		return part, reason, err
	}
}

// breaks reports whether broken pull request i makes a candidate of lane
// part fail: a lane's checks read its partition's inputs only (the
// partition's directory), so a broken pull request breaks the candidates of
// its own lane and every candidate of no lane (tested whole); a global one
// (its file at the root, no partition's input) breaks only those.
func (s *sim) breaks(i int, part string) bool {
	return s.sc.broken[i] && (part == "" || s.partName(i) == part)
}

// layoutFiles are the files of pull request i's head on top of the base
// (its own file, and the shared file of its pair when it conflicts), and
// the shared files of the base.
func layoutFiles(part []int, line []int, k int) (base map[string]string, heads []map[string]string) {
	n := 1
	for _, l := range line {
		n = max(n, l+sharedGap)
	}
	lines := make([]string, n)
	for i := range lines {
		lines[i] = fmt.Sprintf("line %d", i)
	}
	shared := func() string { return strings.Join(lines, "\n") + "\n" }
	dir := func(i int) string {
		if k <= 0 || part[i] == globalPart {
			return ""
		}
		return fmt.Sprintf("p%d/", part[i])
	}
	base = map[string]string{"shared.txt": shared()}
	for j := 0; j < k; j++ {
		base[fmt.Sprintf("p%d/shared.txt", j)] = shared()
	}
	for i, l := range line {
		files := map[string]string{dir(i) + fmt.Sprintf("pr%04d.txt", i): fmt.Sprintf("pull request %d\n", i)}
		if l >= 0 {
			old := lines[l]
			lines[l] = fmt.Sprintf("line %d as pull request %d has it", l, i)
			files[dir(i)+"shared.txt"] = shared()
			lines[l] = old
		}
		heads = append(heads, files)
	}
	return base, heads
}

// treeOf writes a tree of files (slash-separated paths) with its subtrees.
func (r *repo) treeOf(files map[string]string) plumbing.Hash {
	flat := map[string]string{}
	sub := map[string]map[string]string{}
	for p, content := range files {
		d, rest, nested := strings.Cut(p, "/")
		if !nested {
			flat[p] = content
			continue
		}
		if sub[d] == nil {
			sub[d] = map[string]string{}
		}
		sub[d][rest] = content
	}
	type entry struct {
		name, mode string
		id         plumbing.Hash
		dir        bool
	}
	var es []entry
	for n, c := range flat {
		es = append(es, entry{n, "100644", r.write(plumbing.BlobObject, []byte(c)), false})
	}
	for d, fs := range sub {
		es = append(es, entry{d, "40000", r.treeOf(fs), true})
	}
	sort.Slice(es, func(i, j int) bool {
		a, b := es[i].name, es[j].name
		if es[i].dir {
			a += "/"
		}
		if es[j].dir {
			b += "/"
		}
		return a < b
	})
	var b []byte
	for _, e := range es {
		b = append(b, e.mode+" "+e.name+"\x00"...)
		b = append(b, e.id[:]...)
	}
	return r.write(plumbing.TreeObject, b)
}
