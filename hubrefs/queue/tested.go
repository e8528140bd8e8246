package queue

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/gitplus/gitplus/hubrefs/pr"
	"github.com/gitplus/gitplus/mergetree"
	"github.com/gitplus/gitplus/receive/gitobj"
)

// Partition steps (docs/queue.md, "Partitions and lanes"; docs/boundary.md,
// "Partition steps"). A lane's candidate C_i is built on the lane's own
// previous step, which may stand on an older tip than the target's. When
// it is green and the target moved meanwhile (another lane landed), C_i
// lands as a step D_i on the current tip instead: exactly the step the
// branch's method builds on D_{i-1} (a merge step [D_{i-1}, H_i] or a
// squash step), with one more trailer naming the candidate CI tested:
//
//	Git-Plus-Tested: <C_i>
//
// D_i is a pure function of its parent, the head, the pull request and
// C_i's id, so every runner builds the same commit; the boundary accepts
// it when C_i is a green candidate of that pull request and D_i's tree
// equals C_i's on every input of the partition (policy, tested.go).

// TrailerTested is the trailer naming the candidate a partition step was
// tested as.
const TrailerTested = "Git-Plus-Tested"

// trailerKey reports whether line would read as one of git+'s trailers.
func trailerKey(line string) bool {
	key, _, ok := strings.Cut(line, ":")
	if !ok {
		return false
	}
	key = strings.TrimSpace(key)
	return strings.EqualFold(key, TrailerPR) || strings.EqualFold(key, TrailerHead) || strings.EqualFold(key, TrailerTested)
}

// stepTitle is the title a step's message carries: on one line, and
// prefixed with the pull request when it would read as a trailer (a title
// "Git-Plus-Tested: ..." would otherwise bind a step to what it names).
func stepTitle(prID, title string) string {
	title = strings.TrimSpace(strings.NewReplacer("\r", " ", "\n", " ").Replace(title))
	if trailerKey(title) {
		title = "Pull request " + prID + ", " + title
	}
	return title
}

// TestedMessage is a merge partition step's message: a merge step's
// (Message) and the Git-Plus-Tested trailer in a paragraph of its own.
func TestedMessage(prID, target, title string, tested plumbing.Hash) string {
	return Message(prID, target, stepTitle(prID, title)) + "\n" + TrailerTested + ": " + tested.String() + "\n"
}

// TestedSquashMessage is a squash partition step's message: a squash
// step's (SquashMessage) with the Git-Plus-Tested trailer after the other
// two.
func TestedSquashMessage(prID, head, target, title string, tested plumbing.Hash) string {
	return SquashMessage(prID, head, target, stepTitle(prID, title)) + TrailerTested + ": " + tested.String() + "\n"
}

// Tested returns the raw content of the merge partition step of pull
// request prID (head onto parent, tested as the candidate tested): a merge
// step (Candidate) whose message is TestedMessage.
func Tested(parent, head plumbing.Hash, parentTime, headTime int64, tree plumbing.Hash, prID, target, title string, tested plumbing.Hash) []byte {
	when := max(parentTime, headTime)
	var b bytes.Buffer
	fmt.Fprintf(&b, "tree %s\nparent %s\nparent %s\n", tree, parent, head)
	fmt.Fprintf(&b, "author %s %d +0000\ncommitter %s %d +0000\n\n", Ident, when, Ident, when)
	b.WriteString(TestedMessage(prID, target, title, tested))
	return b.Bytes()
}

// TestedSquash returns the raw content of the squash partition step: a
// squash step (Squash) whose message is TestedSquashMessage.
func TestedSquash(parent, head plumbing.Hash, parentTime, headTime int64, headAuthor []byte, tree plumbing.Hash, prID, target, title string, tested plumbing.Hash) []byte {
	when := max(parentTime, headTime)
	var b bytes.Buffer
	fmt.Fprintf(&b, "tree %s\nparent %s\n", tree, parent)
	fmt.Fprintf(&b, "author %s\ncommitter %s %d +0000\n\n", headAuthor, Ident, when)
	b.WriteString(TestedSquashMessage(prID, head.String(), target, title, tested))
	return b.Bytes()
}

// BuildTested builds the partition step of pull request prID (head onto
// parent, tested as the candidate tested) for target, of the squash shape
// when squash: both commits read, mergetree in builder mode, the commit
// written through w. On a conflict it returns the conflicts, a zero id
// and no error.
func BuildTested(s mergetree.Store, w mergetree.ObjectWriter, parent, head, tested plumbing.Hash, prID, target, title string, squash bool) (plumbing.Hash, []mergetree.Conflict, error) {
	return buildStep(s, w, parent, head, "partition step", func(pt int64, hc *gitobj.Commit, tree plumbing.Hash) []byte {
		if squash {
			return TestedSquash(parent, head, pt, hc.CommitTime, hc.Author, tree, prID, target, title, tested)
		}
		return Tested(parent, head, pt, hc.CommitTime, tree, prID, target, title, tested)
	})
}

// TestedTrailer reads the Git-Plus-Tested trailer of a step's message:
// exactly once, in the message's last paragraph, a full commit id, and no
// other line carrying the key (compared case-insensitively, as git reads
// trailer keys). found is false when no line names the key (not a
// partition step); err says what is wrong with one that tries. The
// boundary, the audit and the planner's tests read it.
func TestedTrailer(message []byte) (tested plumbing.Hash, found bool, err error) {
	text := strings.TrimRight(string(message), "\n")
	lastStart := 0
	if i := strings.LastIndex(text, "\n\n"); i >= 0 {
		lastStart = i + 2
	}
	var vals []string
	pos := 0
	for _, line := range strings.SplitAfter(text, "\n") {
		start := pos
		pos += len(line)
		key, val, ok := strings.Cut(strings.TrimRight(line, "\n"), ":")
		if !ok || !strings.EqualFold(strings.TrimSpace(key), TrailerTested) {
			continue
		}
		found = true
		if start < lastStart {
			return plumbing.ZeroHash, true, fmt.Errorf("%s appears outside the trailers (the message's last paragraph)", TrailerTested)
		}
		vals = append(vals, strings.TrimSpace(val))
	}
	if !found {
		return plumbing.ZeroHash, false, nil
	}
	if len(vals) != 1 {
		return plumbing.ZeroHash, true, fmt.Errorf("%s appears %d times; a partition step names the candidate it was tested as exactly once", TrailerTested, len(vals))
	}
	if err := pr.ValidOID(vals[0]); err != nil {
		return plumbing.ZeroHash, true, fmt.Errorf("%s %q: %w", TrailerTested, vals[0], err)
	}
	return plumbing.NewHash(vals[0]), true, nil
}

// TestedBranch is the branch that keeps the candidates a target's
// partition steps were tested as (docs/queue.md, "Partitions and lanes"):
// refs/heads/queue/<target short name>.tested. A partition step names its
// candidate by id only, and the candidate's own branch is deleted when it
// lands, so the queue runner points this branch at a commit whose parents
// are the previous one and the candidates of each landing: they stay
// reachable, mirrors carry them with the other branches, and verify
// --branch can read them on any replica. It lies beside the target's
// candidate branches (refs/heads/queue/<target>/<pr>), never among them.
func TestedBranch(target string) string {
	return BranchPrefix + strings.TrimPrefix(target, "refs/heads/") + ".tested"
}

// Keeper returns the raw content of the commit that moves TestedBranch to
// keep the candidates tested (in the order they landed): the empty tree,
// the branch's previous commit (zero: none) and the candidates as parents,
// the queue's identity dated when, and a message naming the landing.
func Keeper(prev plumbing.Hash, tested []plumbing.Hash, when int64, target, landed string) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "tree %s\n", emptyTree)
	if !prev.IsZero() {
		fmt.Fprintf(&b, "parent %s\n", prev)
	}
	for _, c := range tested {
		fmt.Fprintf(&b, "parent %s\n", c)
	}
	fmt.Fprintf(&b, "author %s %d +0000\ncommitter %s %d +0000\n\n", Ident, when, Ident, when)
	fmt.Fprintf(&b, "Candidates tested for partition steps landed on %s\n\nLanded as %s; kept so that git+ verify --branch reads them on any replica.\n", strings.TrimPrefix(target, "refs/heads/"), landed)
	return b.Bytes()
}

// emptyTree is the id of the empty tree.
const emptyTree = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"
