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

// Squash steps (docs/queue.md, "Step shapes"). On a branch whose rules say
// "mergeMethod": "squash" a queue step S_i is one commit on S_{i-1}: its
// tree is mergeTree(S_{i-1}, H_i), exactly the tree the merge step would
// have, and its message ends with two trailers that bind it to what it
// merged, since the head is no longer a parent:
//
//	Git-Plus-PR: <pull request id>
//	Git-Plus-Head: <H_i>
//
// The boundary reads the trailers (SquashTrailers), finds the pull
// request, and judges the step as a merge step with second parent H_i;
// author, committer and the rest of the message are not bound (a squash
// built by hand with the right parent, tree and trailers lands).

// Trailer keys of a squash step.
const (
	TrailerPR   = "Git-Plus-PR"
	TrailerHead = "Git-Plus-Head"
)

// SquashMessage is a squash step's message: the pull request's title (or
// a line naming it), a line saying what was squashed, and the trailers. A
// title that would read as one of the trailers (a pull request titled
// "Git-Plus-Head: ...") is prefixed with the pull request, or the step
// the queue builds would carry the key twice and never land.
func SquashMessage(prID, head, target, title string) string {
	title = stepTitle(prID, title) // tested.go
	if title == "" {
		title = "Pull request " + prID
	}
	return title + "\n\nSquashed from pull request " + prID + " into " + strings.TrimPrefix(target, "refs/heads/") + ".\n\n" +
		TrailerPR + ": " + prID + "\n" + TrailerHead + ": " + head + "\n"
}

// Squash returns the raw content of the squash step of pull request prID
// (head, whose author line is headAuthor) onto parent: tree, one parent,
// author = headAuthor verbatim (authorship kept), committer = Ident dated
// max(parentTime, headTime) +0000 as a merge step is, and
// SquashMessage. It is a pure function of its arguments, so every runner
// builds the same id.
func Squash(parent, head plumbing.Hash, parentTime, headTime int64, headAuthor []byte, tree plumbing.Hash, prID, target, title string) []byte {
	when := max(parentTime, headTime)
	var b bytes.Buffer
	fmt.Fprintf(&b, "tree %s\nparent %s\n", tree, parent)
	fmt.Fprintf(&b, "author %s\ncommitter %s %d +0000\n\n", headAuthor, Ident, when)
	b.WriteString(SquashMessage(prID, head.String(), target, title))
	return b.Bytes()
}

// BuildSquash builds the squash step of pull request prID (head onto
// parent) for target, as BuildCandidate builds a merge step: both commits
// read, mergetree in builder mode, the commit written through w. On a
// conflict it returns the conflicts, a zero id and no error.
func BuildSquash(s mergetree.Store, w mergetree.ObjectWriter, parent, head plumbing.Hash, prID, target, title string) (plumbing.Hash, []mergetree.Conflict, error) {
	return buildStep(s, w, parent, head, "squash step", func(pt int64, hc *gitobj.Commit, tree plumbing.Hash) []byte {
		return Squash(parent, head, pt, hc.CommitTime, hc.Author, tree, prID, target, title)
	})
}

// SquashBinding is what a squash step's trailers bind it to.
type SquashBinding struct {
	PR   string
	Head plumbing.Hash
}

// SquashTrailers reads the trailers of a squash step's message: the last
// paragraph must hold exactly one Git-Plus-PR (a pull request id) and
// exactly one Git-Plus-Head (a full commit id), and no other line of the
// message may carry either key (keys compared case-insensitively, as git
// reads trailers). found is false when the message names neither key at
// all (not a squash step); err says what is wrong with one that tries.
// The boundary, the audit and the planner's tests all read it.
func SquashTrailers(message []byte) (b SquashBinding, found bool, err error) {
	text := strings.TrimRight(string(message), "\n")
	last := text
	if i := strings.LastIndex(text, "\n\n"); i >= 0 {
		last = text[i+2:]
	}
	var prs, heads []string
	lastStart := len(text) - len(last)
	pos := 0
	for _, line := range strings.SplitAfter(text, "\n") {
		start := pos
		pos += len(line)
		key, val, ok := strings.Cut(strings.TrimRight(line, "\n"), ":")
		if !ok {
			continue
		}
		isPR, isHead := strings.EqualFold(strings.TrimSpace(key), TrailerPR), strings.EqualFold(strings.TrimSpace(key), TrailerHead)
		if !isPR && !isHead {
			continue
		}
		found = true
		if start < lastStart {
			return SquashBinding{}, true, fmt.Errorf("%s: appears outside the trailers (the message's last paragraph)", strings.TrimSpace(key))
		}
		if isPR {
			prs = append(prs, strings.TrimSpace(val))
		} else {
			heads = append(heads, strings.TrimSpace(val))
		}
	}
	if !found {
		return SquashBinding{}, false, nil
	}
	if len(prs) != 1 {
		return SquashBinding{}, true, fmt.Errorf("%s appears %d times; a squash step names its pull request exactly once", TrailerPR, len(prs))
	}
	if len(heads) != 1 {
		return SquashBinding{}, true, fmt.Errorf("%s appears %d times; a squash step names the head it squashed exactly once", TrailerHead, len(heads))
	}
	if err := pr.ValidOID(heads[0]); err != nil {
		return SquashBinding{}, true, fmt.Errorf("%s %q: %w", TrailerHead, heads[0], err)
	}
	if prs[0] == "" {
		return SquashBinding{}, true, fmt.Errorf("%s is empty", TrailerPR)
	}
	return SquashBinding{PR: prs[0], Head: plumbing.NewHash(heads[0])}, true, nil
}

// StepParents is a published step's parents by method: [C_{i-1}, H_i] for
// a merge step, [S_{i-1}] for a squash step.
func StepParents(squash bool, parent, head string) []string {
	if squash {
		return []string{parent}
	}
	return []string{parent, head}
}

// namesStep reports whether a recorded step's parents are those of a step
// on parent merging head, of either shape.
func namesStep(rec *Recorded, parent, head string) bool {
	switch len(rec.Parents) {
	case 1:
		return rec.Parents[0] == parent
	case 2:
		return rec.Parents[0] == parent && rec.Parents[1] == head
	}
	return false
}
