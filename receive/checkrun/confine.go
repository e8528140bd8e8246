package checkrun

// Confining a lane candidate's reads to its partition's inputs
// (--confine-reads; docs/ci.md, "Confining reads to a partition"):
//
//   - Only a lane's candidate is confined so: a revision whose latest
//     queue.candidate names a partition the branch's rules still have.
//     A global entry's step, a pull request head, a branch without
//     partitions run with the checkout whole, as without the flag.
//   - Landlock grants by file hierarchy, so the inputs (the partition's
//     paths and reads, trust.Partition.Input: the very files a partition
//     step must keep as tested) are expanded over the candidate's tree:
//     a directory every file of which is an input is granted whole (what
//     the command creates there it reads back), otherwise each input file
//     is granted on its own. An input that is a symbolic link is not
//     granted: its target is reachable when it is an input itself.
//   - The checkout holds the tree's files and no .git: its git directory
//     lies beside it, out of the command's reach, and no object directory
//     is granted. Through git, every file's content is readable (`git
//     show HEAD:api/x`), which would make the confinement a formality.
//   - The rest of the checkout is write-only: a build may create, write
//     and remove files anywhere in it, and reads back only what lies in
//     the inputs; Landlock's reparenting rule keeps a rename or a link
//     from making a file readable.
//   - The scratch directory, the caches, --read paths and the system and
//     toolchain trees are granted as for any run.
//   - --confine-reads needs Landlock: under --sandbox off, or on a kernel
//     without it, it is refused before anything runs (Sandbox.Decide).
//   - check.completed of a run so confined says "landlock-<N>+reads"
//     (pr.ReadsSuffix).

import (
	"bytes"
	"context"
	"fmt"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/gitplus/gitplus/hubrefs/pr"
	"github.com/gitplus/gitplus/hubrefs/trust"
	"github.com/gitplus/gitplus/receive/gitio"
	"github.com/gitplus/gitplus/receive/sandbox"
)

// ErrConfineReads is the refusal of --confine-reads where the sandbox
// cannot honour it (--sandbox off, a kernel without Landlock).
var ErrConfineReads = fmt.Errorf("--confine-reads: %w", sandbox.ErrUnconfinable)

// Decide is how the commands will run: sandbox.Decide of the mode, and
// under ConfineReads a refusal (ErrConfineReads) where the reads cannot
// be confined. Called once, before anything is recorded.
func (sb Sandbox) Decide() (sandbox.Confinement, error) {
	c, err := sandbox.Decide(sb.Mode)
	if err != nil {
		return c, err
	}
	return c, sb.canConfine(c)
}

// canConfine says why runs confined as c cannot honour ConfineReads (nil
// when they can, or when it is not asked for).
func (sb Sandbox) canConfine(c sandbox.Confinement) error {
	switch {
	case !sb.ConfineReads || c.Landlock():
		return nil
	case c.Off:
		return fmt.Errorf("%w: --sandbox off runs the command unconfined; drop --sandbox off or --confine-reads", ErrConfineReads)
	}
	return fmt.Errorf("%w: Landlock is not available (%s), so a check's reads cannot be confined to its partition's inputs; nothing was run or recorded; run the worker on a Linux kernel with Landlock (5.13 or later, \"landlock\" in its lsm= list) or drop --confine-reads", ErrConfineReads, c.Why)
}

// Describe is the one line that says how commands run: the sandbox's
// (Confinement.Describe), and under ConfineReads which runs have their
// reads confined.
func (sb Sandbox) Describe(c sandbox.Confinement) string {
	line := c.Describe(sandbox.Policy{Caches: cacheDirs(sb.Caches)})
	if sb.ConfineReads && c.Landlock() {
		line += "; --confine-reads: a lane's candidate reads, of its checkout, only its partition's paths and reads (no .git; the rest of the checkout write-only), recorded " + c.String() + pr.ReadsSuffix +
			"; a global entry's step, a pull request head and a branch without partitions read their whole checkout"
	}
	return line
}

// confineTo is the partition whose inputs a run of lane l reads, under
// ConfineReads: nil, and why, when the run is no lane's candidate or its
// partition is gone from the rules of the queue's target.
func confineTo(rules trust.Rules, l *lane) (*trust.Partition, string) {
	if l == nil {
		return nil, "not a lane's candidate (a global entry's step, a head, or a branch without partitions)"
	}
	b, _ := rules.For(l.target)
	x, ok := b.Partition(l.name)
	if !ok {
		return nil, fmt.Sprintf("the rules of %s no longer have partition %s", l.target, l.name)
	}
	return &x, ""
}

// describeScope is the per-run line of a confined run.
func describeScope(x *trust.Partition) string {
	return fmt.Sprintf("reads confined to partition %s's inputs: %s", x.Name, strings.Join(x.Inputs(), ", "))
}

// record is check.completed's "sandbox" of a run confined as conf, its
// reads to x when x is set.
func record(conf sandbox.Confinement, x *trust.Partition) string {
	if x != nil && conf.Landlock() {
		return conf.String() + pr.ReadsSuffix
	}
	return conf.String()
}

// treeFile is a file of a tree: its path (slash-separated, from the root)
// and whether it is a symbolic link.
type treeFile struct {
	path string
	link bool
}

// treeFiles lists the files of commit's tree in the repository at gitDir
// (submodules included, as the empty directories a checkout makes).
func treeFiles(gitDir, commit string) ([]treeFile, error) {
	out, _, err := gitio.RunGit(context.Background(), "", nil, "--git-dir="+gitDir, "ls-tree", "-r", "-z", "--full-tree", commit)
	if err != nil {
		return nil, fmt.Errorf("listing the files of %s: %w", commit, err)
	}
	var files []treeFile
	for _, e := range bytes.Split(out, []byte{0}) {
		meta, name, ok := bytes.Cut(e, []byte{'\t'})
		if !ok {
			continue
		}
		files = append(files, treeFile{path: string(name), link: bytes.HasPrefix(meta, []byte("120000 "))})
	}
	return files, nil
}

// cover is what of a checkout holding files a command whose reads are
// confined to input may read: the fewest paths (slash-separated, relative;
// "." the whole checkout) that cover every input file and nothing else of
// the tree. A directory every file beneath which is an input is one path;
// any other input file is its own, but for a symbolic link, which is not
// granted (a grant would reach its target; the target is granted when it
// is an input).
func cover(files []treeFile, input func(string) bool) []string {
	dirs := map[string]bool{".": true} // every directory, true while whole
	in := make([]bool, len(files))
	for i, f := range files {
		in[i] = input(f.path)
		for d := path.Dir(f.path); ; d = path.Dir(d) {
			if whole, seen := dirs[d]; !seen || whole {
				dirs[d] = in[i]
			}
			if d == "." {
				break
			}
		}
	}
	if dirs["."] {
		return []string{"."}
	}
	var out []string
	for d, whole := range dirs {
		if d != "." && whole && !dirs[path.Dir(d)] {
			out = append(out, d)
		}
	}
	for i, f := range files {
		if in[i] && !f.link && !dirs[path.Dir(f.path)] {
			out = append(out, f.path)
		}
	}
	slices.Sort(out)
	return out
}

// inputGrants are the absolute paths of the checkout tree (of commit, in
// the repository at gitDir) a run confined to x's inputs may read.
func inputGrants(gitDir, commit, tree string, x *trust.Partition) ([]string, error) {
	files, err := treeFiles(gitDir, commit)
	if err != nil {
		return nil, err
	}
	rel := cover(files, x.Input)
	out := make([]string, len(rel))
	for i, p := range rel {
		out[i] = filepath.Join(tree, filepath.FromSlash(p))
	}
	return out, nil
}
