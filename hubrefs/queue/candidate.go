package queue

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/gitplus/gitplus/mergetree"
	"github.com/gitplus/gitplus/receive/gitobj"
)

// Ident is the author and committer of every candidate commit.
const Ident = "git+ queue <queue@git-plus.invalid>"

// BranchPrefix is the prefix of candidate branches.
const BranchPrefix = "refs/heads/queue/"

// Branch returns the candidate branch of pull request prID for target:
// refs/heads/queue/<target without refs/heads/>/<pr id>.
func Branch(target, prID string) string {
	return BranchPrefix + strings.TrimPrefix(target, "refs/heads/") + "/" + prID
}

// Message is a candidate commit's message: built from the pull request id,
// the target (short name) and the title from pr.opened only (prefixed with
// the pull request when it would read as one of git+'s trailers).
func Message(prID, target, title string) string {
	title = stepTitle(prID, title) // tested.go: a title never reads as a trailer
	m := "Merge pull request " + prID + " into " + strings.TrimPrefix(target, "refs/heads/") + "\n"
	if title != "" {
		m += "\n" + title + "\n"
	}
	return m
}

// Candidate returns the raw content (no "commit <size>\0" header) of the
// candidate commit merging head onto parent: tree, parents [parent, head],
// author = committer = Ident dated max(parentTime, headTime) +0000, and
// Message(prID, target, title). It is a pure function of its arguments.
func Candidate(parent, head plumbing.Hash, parentTime, headTime int64, tree plumbing.Hash, prID, target, title string) []byte {
	when := max(parentTime, headTime)
	var b bytes.Buffer
	fmt.Fprintf(&b, "tree %s\nparent %s\nparent %s\n", tree, parent, head)
	fmt.Fprintf(&b, "author %s %d +0000\ncommitter %s %d +0000\n\n", Ident, when, Ident, when)
	b.WriteString(Message(prID, target, title))
	return b.Bytes()
}

// CandidateID is the object id of a candidate commit's content.
func CandidateID(content []byte) plumbing.Hash {
	return plumbing.ComputeHash(plumbing.CommitObject, content)
}

// CommitTime reads a commit's committer time (seconds since the epoch) from
// its raw content, as receive/gitobj (the one commit parser) reads it: a
// commit git's fsck refuses has no time here either (docs/objects.md).
func CommitTime(raw []byte) (int64, error) {
	c, err := gitobj.ParseCommit(raw)
	if err != nil {
		return 0, fmt.Errorf("%w: %w", ErrNotCommit, err)
	}
	return c.CommitTime, nil
}

func readTime(s mergetree.Store, h plumbing.Hash) (int64, error) {
	c, err := readCommit(s, h)
	if err != nil {
		return 0, err
	}
	return c.CommitTime, nil
}

// readCommit reads and parses commit h from s, as receive/gitobj (the one
// commit parser) reads it.
func readCommit(s mergetree.Store, h plumbing.Hash) (*gitobj.Commit, error) {
	typ, raw, err := s.ReadObject(h)
	if err != nil {
		return nil, fmt.Errorf("read commit %s: %w", h, err)
	}
	if typ != plumbing.CommitObject {
		return nil, fmt.Errorf("%w: %s is a %s", ErrNotCommit, h, typ)
	}
	c, err := gitobj.ParseCommit(raw)
	if err != nil {
		return nil, fmt.Errorf("commit %s: %w: %w", h, ErrNotCommit, err)
	}
	return c, nil
}

// buildStep is the one way a step is built (BuildCandidate, BuildSquash,
// BuildTested): both commits read, head merged onto parent with mergetree
// in builder mode (new blobs and trees written through w), the commit that
// content makes of the parent's time, the head commit and the merged tree
// written through w and checked to have the id its content gives. what
// names the step in errors. On a conflict it returns the conflicts, a zero
// id and no error, having written no commit.
func buildStep(s mergetree.Store, w mergetree.ObjectWriter, parent, head plumbing.Hash, what string, content func(parentTime int64, hc *gitobj.Commit, tree plumbing.Hash) []byte) (plumbing.Hash, []mergetree.Conflict, error) {
	pt, err := readTime(s, parent)
	if err != nil {
		return plumbing.ZeroHash, nil, err
	}
	hc, err := readCommit(s, head)
	if err != nil {
		return plumbing.ZeroHash, nil, err
	}
	res, err := mergetree.Merge(s, parent, head, mergetree.Options{Writer: w})
	if err != nil {
		return plumbing.ZeroHash, nil, fmt.Errorf("merge %s onto %s: %w", head, parent, err)
	}
	if !res.Clean() {
		return plumbing.ZeroHash, res.Conflicts, nil
	}
	raw := content(pt, hc, res.Tree)
	want := CandidateID(raw)
	got, err := w.WriteObject(plumbing.CommitObject, raw)
	if err != nil {
		return plumbing.ZeroHash, nil, fmt.Errorf("write %s %s: %w", what, want, err)
	}
	if got != want {
		return plumbing.ZeroHash, nil, fmt.Errorf("%w: %s %s written as %s", ErrMismatch, what, want, got)
	}
	return want, nil, nil
}

// BuildCandidate builds the candidate commit of pull request prID (head onto
// parent) for target: it reads both commits' committer times, merges them with
// mergetree in builder mode (new blobs and trees written through w) and writes
// the commit through w. On a conflict it returns the conflicts, a zero id and
// no error, having written nothing.
func BuildCandidate(s mergetree.Store, w mergetree.ObjectWriter, parent, head plumbing.Hash, prID, target, title string) (plumbing.Hash, []mergetree.Conflict, error) {
	return buildStep(s, w, parent, head, "candidate", func(pt int64, hc *gitobj.Commit, tree plumbing.Hash) []byte {
		return Candidate(parent, head, pt, hc.CommitTime, tree, prID, target, title)
	})
}
