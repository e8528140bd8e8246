package policy

import (
	"errors"
	"fmt"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/gitplus/gitplus/hubrefs/queue"
	"github.com/gitplus/gitplus/hubrefs/trust"
	"github.com/gitplus/gitplus/mergetree"
	"github.com/gitplus/gitplus/receive/gitobj"
)

// Partition steps (docs/boundary.md, "Partition steps"). A lane of a
// partitioned queue tests its candidate C on the lane's own previous step,
// which may stand on an older tip; once another lane has landed, C lands
// as a step D on the current tip — the step the branch's method builds
// there, exact as ever (tree mergeTree(D_{i-1}, H)), whose message names C
// in a Git-Plus-Tested trailer. D has no checks of its own; it lands on
// C's, when JudgeTested holds: C is a candidate of the same pull request,
// what D changes lies in one partition X (its paths, none of another's
// reads), and D's tree equals C's on every input of X (its paths and
// reads). What the partition's checks read is then exactly what they
// tested. A global pull request's step (what it changes is no one
// partition's) lands on its tested candidate only with that candidate's
// very tree: the queue tests it on the composition of the lanes ahead of
// it, and it lands once they have, as exactly what was tested. The check half (every required check success at C, or under
// batch checks vouched for by a green group end of the lane) is the
// caller's, by the one rule (pr.State.ChecksOn, queue.JudgeBatch).

// Refusal codes of partition steps.
const (
	// CodePartitionUntested: D's tree differs from its tested
	// candidate's on an input of the partition (the first such path is
	// named): what would land there was not tested.
	CodePartitionUntested = "partition-untested"
	// CodePartitionOutside: what D changes is not one partition's — a
	// file in no partition's paths, in two partitions, or in another
	// partition's reads — and its tree is not its tested candidate's
	// whole; or the branch has no partitions.
	CodePartitionOutside = "partition-outside"
	// CodeTestedCandidate: the commit Git-Plus-Tested names is not a
	// candidate of the pull request D lands (its shape: parents, head or
	// trailers, tree), or the trailer is malformed.
	CodeTestedCandidate = "tested-candidate"
)

// TestedStep is one partition step to judge.
type TestedStep struct {
	Prev   plumbing.Hash // D's first parent: the tip, or the step below
	Step   plumbing.Hash // D
	Tested plumbing.Hash // C, named by D's Git-Plus-Tested trailer
	Head   plumbing.Hash // the head D lands (its second parent, or Git-Plus-Head)
	PR     string        // the pull request D lands
	Squash bool          // the branch's mergeMethod is squash
}

// JudgeTested is the landing rule of a partition step (docs/boundary.md,
// "Partition steps"), the one function the hook, verify --branch and the
// queue planner (through the runner) judge by. It returns the partition D
// lands in ("" for a global step), or a refusal:
//
//  1. the branch has partitions (else partition-outside);
//  2. C is a candidate of the pull request: of the branch's shape, a merge
//     step whose second parent is H, or a squash step whose trailers bind
//     the pull request and H (else tested-candidate);
//  3. the files D changes against its parent belong to one partition X by
//     the membership rule (trust.Branch.PartitionOf), or D is global;
//  4. D's tree equals C's on every input of X (else partition-untested,
//     naming the first differing path in git's tree order); a global D's
//     tree equals C's whole (else partition-outside, naming why it is
//     global and the first differing path);
//  5. C's tree is the clean mergeTree of its parent and H, recomputed
//     (else tested-candidate): C is what the queue tested, not a commit
//     made up to match D.
//
// An object it cannot read is missing-object. cache (nil: none) holds
// decoded trees and merge bases, as for a chain's merges.
func JudgeTested(objs mergetree.Store, b trust.Branch, s TestedStep, cache *mergetree.Cache) (partition string, err error) {
	c, err := testedShape(objs, b, s)
	if err != nil {
		return "", err
	}
	// 3. What D changes is one partition's.
	changed, err := changedBetween(objs, s.Prev, s.Step, cache)
	if err != nil {
		return "", err
	}
	m := b.PartitionOf(changed)
	differ, err := changedBetween(objs, s.Tested, s.Step, cache)
	if err != nil {
		return "", err
	}
	if m.Global() {
		// 4'. A global step lands on its tested candidate only with the
		// candidate's very tree: what lands is what was tested, whole.
		if len(differ) > 0 {
			return "", refuse(CodePartitionOutside, "%s (pull request %s) is not one partition's change (%s), so it lands on its tested candidate %s only with that candidate's very tree, but they differ at %s; a global pull request is tested on the tip with everything ahead of it, and tested again when that changes",
				short(s.Step), s.PR, m.Why, short(s.Tested), differ[0])
		}
	} else {
		x, _ := b.Partition(m.Partition)
		if err := sameInputs(x, differ, s); err != nil {
			return "", err
		}
	}
	// 5. C's tree is the merge of its parent and H, recomputed.
	switch fault, detail, merged, err := candidateTree(objs, c.Parents[0], s.Head, c.Tree, cache); fault {
	case treeUnrelated:
		return "", refuse(CodeTestedCandidate, "the tested candidate %s of %s: %s and %s have no common ancestor", short(s.Tested), short(s.Step), short(c.Parents[0]), short(s.Head))
	case treeUnreadable:
		return "", objErr(plumbing.ZeroHash, err)
	case treeConflict:
		return "", refuse(CodeTestedCandidate, "the tested candidate %s of %s: merging %s into %s conflicts at %s, so it is no candidate", short(s.Tested), short(s.Step), short(s.Head), short(c.Parents[0]), detail)
	case treeDiffers:
		return "", refuse(CodeTestedCandidate, "the tested candidate %s of %s has tree %s, but the merge of %s into %s is %s: it is no candidate the queue built", short(s.Tested), short(s.Step), short(c.Tree), short(s.Head), short(c.Parents[0]), short(merged))
	}
	return m.Partition, nil
}

// sameInputs is rule 4: D equals C on every input of x (differ: the files
// in which their trees differ).
func sameInputs(x trust.Partition, differ []string, s TestedStep) error {
	for _, p := range differ {
		if x.Input(p) {
			return refuse(CodePartitionUntested, "%s (pull request %s, partition %s) differs from its tested candidate %s at %s, an input of partition %s (paths %s, reads %s): that content was not tested, since another landing changed it after the candidate was built; the queue rebuilds the lane on the tip and tests it again",
				short(s.Step), s.PR, x.Name, short(s.Tested), p, x.Name, globList(x.Paths), globList(x.Reads))
		}
	}
	return nil
}

// testedShape is rules 1 and 2 of JudgeTested, which read only the tested
// commit: the hook asks them before the tested candidate's checks, so that
// a step naming another pull request's candidate is told so. It returns
// the tested commit.
func testedShape(objs mergetree.Store, b trust.Branch, s TestedStep) (*gitobj.Commit, error) {
	if len(b.Partitions) == 0 {
		return nil, refuse(CodePartitionOutside, "%s names a tested candidate (%s: %s), but the branch has no partitions: only a lane of a partitioned queue lands that way; land the step's own checks", short(s.Step), queue.TrailerTested, short(s.Tested))
	}
	typ, raw, err := objs.ReadObject(s.Tested)
	if err != nil {
		return nil, objErr(s.Tested, err)
	}
	if typ != plumbing.CommitObject {
		return nil, refuse(CodeTestedCandidate, "%s names %s as its tested candidate, which is a %s, not a commit", short(s.Step), short(s.Tested), typ)
	}
	c, err := gitobj.ParseCommit(raw)
	if err != nil {
		return nil, refuse(CodeTestedCandidate, "%s names %s as its tested candidate, which is not a well-formed commit: %v", short(s.Step), short(s.Tested), err)
	}
	if s.Tested == s.Step {
		return nil, refuse(CodeTestedCandidate, "%s names itself as its tested candidate", short(s.Step))
	}
	if s.Squash {
		bind, found, berr := queue.SquashTrailers(c.Message)
		switch {
		case len(c.Parents) != 1:
			return nil, refuse(CodeTestedCandidate, "%s names %s as its tested candidate, which has %d parents; on this squash branch a candidate is a squash step with one parent", short(s.Step), short(s.Tested), len(c.Parents))
		case !found || berr != nil:
			return nil, refuse(CodeTestedCandidate, "%s names %s as its tested candidate, which is no squash step (its %s and %s trailers: %v)", short(s.Step), short(s.Tested), queue.TrailerPR, queue.TrailerHead, berr)
		case bind.PR != s.PR || bind.Head != s.Head:
			return nil, refuse(CodeTestedCandidate, "%s lands head %s of pull request %s, but its tested candidate %s squashes head %s of pull request %s: a partition step lands on the checks of a candidate of its own pull request and head", short(s.Step), short(s.Head), s.PR, short(s.Tested), short(bind.Head), bind.PR)
		}
	} else {
		switch {
		case len(c.Parents) != 2:
			return nil, refuse(CodeTestedCandidate, "%s names %s as its tested candidate, which has %d parents; a candidate has the parents [<previous step>, <pull request head>]", short(s.Step), short(s.Tested), len(c.Parents))
		case c.Parents[1] != s.Head:
			return nil, refuse(CodeTestedCandidate, "%s lands head %s of pull request %s, but its tested candidate %s merges %s: a partition step lands on the checks of a candidate of its own pull request and head", short(s.Step), short(s.Head), s.PR, short(s.Tested), short(c.Parents[1]))
		}
	}
	return c, nil
}

// changedBetween lists the files that differ between two commits' trees.
func changedBetween(objs mergetree.Store, from, to plumbing.Hash, cache *mergetree.Cache) ([]string, error) {
	ta, err := commitTree(objs, from)
	if err != nil {
		return nil, err
	}
	tb, err := commitTree(objs, to)
	if err != nil {
		return nil, err
	}
	out, err := mergetree.ChangedPaths(objs, ta, tb, cache)
	if err != nil {
		return nil, objErr(plumbing.ZeroHash, err)
	}
	return out, nil
}

func globList(gs []string) string {
	if len(gs) == 0 {
		return "none"
	}
	return strings.Join(gs, ", ")
}

// testedOf reads the Git-Plus-Tested trailer of commit c: the candidate c
// was tested as, found false when c names none; a malformed trailer is
// tested-candidate.
func (j *judge) testedOf(c *commit) (plumbing.Hash, bool, error) {
	raw, err := j.commits.rawOf(c)
	if err != nil {
		return plumbing.ZeroHash, false, err
	}
	pc, err := gitobj.ParseCommit(raw)
	if err != nil {
		return plumbing.ZeroHash, false, refuse(CodeBadObject, "%s is not a well-formed commit: %v", short(c.id), err)
	}
	t, found, err := queue.TestedTrailer(pc.Message)
	if err != nil {
		return plumbing.ZeroHash, true, refuse(CodeTestedCandidate, "%s: %v; a partition step's message ends with %s: <the candidate tested>, once", short(c.id), err, queue.TrailerTested)
	}
	return t, found, nil
}

// TestedVerdict is JudgeTested for the queue runner, which hands it to the
// planner (hubrefs/queue.PlanInput.Tested): refused is the code and reason
// when the step cannot land; err an error that is no refusal.
func TestedVerdict(objs mergetree.Store, b trust.Branch, s TestedStep) (partition, code, reason string, err error) {
	partition, err = JudgeTested(objs, b, s, nil)
	var r *refusal
	if errors.As(err, &r) {
		return "", r.Code, r.Reason, nil
	}
	if err != nil {
		return "", "", "", fmt.Errorf("judging partition step %s: %w", s.Step, err)
	}
	return partition, "", "", nil
}
