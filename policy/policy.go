// Package policy is the boundary's judgement (DESIGN.md §6): a pure function
// of an object store, the refs as they were before a push and the proposed
// updates, which accepts or refuses each update with a stable, coded reason.
package policy

import (
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/storer"

	"github.com/gitplus/gitplus/mergetree"
)

// Refusal codes: stable, short, kebab-case (listed in README.md).
const (
	CodeNoTrust       = "no-trust"       // refs/hub/trust is absent: run git+ init
	CodeTrustInvalid  = "trust-invalid"  // the stored trust log cannot be folded
	CodeMissingObject = "missing-object" // an object the judgement needs cannot be read
	CodeBadUpdate     = "bad-update"     // the update itself is malformed (ref name, old value)

	// Hub refs (refs/hub/*).
	CodeHubDelete         = "hub-delete"
	CodeHubRewind         = "hub-rewind"
	CodeHubMalformed      = "hub-malformed"
	CodeHubUnknownType    = "hub-unknown-type"
	CodeHubCeiling        = "hub-ceiling"
	CodeHubNamespace      = "hub-namespace"
	CodeHubRoot           = "hub-root"
	CodeHubInvalid        = "hub-invalid"
	CodeUnsigned          = "unsigned"
	CodeBadSignature      = "bad-signature"
	CodeNotMember         = "not-member"
	CodeMissingCapability = "missing-capability"
	CodeWrongRepo         = "wrong-repo"
	CodeForeignParent     = "foreign-parent"
	CodeRefName           = "ref-name"

	// Protected branches.
	CodeProtectedDelete   = "protected-delete"
	CodeNonFastForward    = "non-fast-forward"
	CodeNotAPRHead        = "not-a-pr-head"
	CodePRClosed          = "pr-closed"
	CodeNotApproved       = "not-approved"
	CodeUnresolvedThreads = "unresolved-threads"
	CodeChecksMissing     = "checks-missing"
	CodeChecksFailed      = "checks-failed"
	CodeCandidatesOff     = "candidates-off"
	CodeChainTooDeep      = "chain-too-deep"
	CodeCandidateParents  = "candidate-parents"
	CodeCandidateTree     = "candidate-tree"
	CodeCandidateConflict = "candidate-conflict"
	CodeDuplicatePR       = "duplicate-pr"
	CodeProvenance        = "provenance"
	CodePRInvalid         = "pr-invalid"
)

// Objects is what policy reads: go-git's encoded object storer (for the
// hubrefs readers) and mergetree's raw Store. ReadObject reports a missing
// object with an error wrapping mergetree.ErrMissingObject.
type Objects interface {
	storer.EncodedObjectStorer
	mergetree.Store
}

type goGitObjects struct {
	storer.EncodedObjectStorer
	*mergetree.GoGitStore
}

func (g goGitObjects) ReadObject(h plumbing.Hash) (plumbing.ObjectType, []byte, error) {
	return g.GoGitStore.ReadObject(h)
}

// GoGitObjects adapts a go-git object storer (memory, filesystem, or the
// receive package's layered quarantine store) to Objects.
func GoGitObjects(s storer.EncodedObjectStorer) Objects {
	return goGitObjects{EncodedObjectStorer: s, GoGitStore: mergetree.NewGoGitStore(s)}
}

// Update is one proposed ref update. A zero Old creates the ref; a zero New
// deletes it.
type Update struct {
	Ref      string
	Old, New plumbing.Hash
}

// Verdict is the judgement of one update. Code "" means accepted; otherwise
// Code is one of the Code* constants and Reason a sentence naming what is
// wrong and what to do.
type Verdict struct {
	Update Update
	Code   string
	Reason string
}

// Accepted reports whether the update was accepted.
func (v Verdict) Accepted() bool { return v.Code == "" }

// Input is everything a judgement reads.
type Input struct {
	Objects Objects
	Refs    map[string]plumbing.Hash // every ref as it was before the push
	Updates []Update
	Cache   Cache // optional fold cache; nil folds from scratch
}

// Cache holds decoded hub logs keyed by a hub ref's tip id. It is trusted
// for speed only: an entry that does not decode or does not describe its key
// is ignored and rebuilt.
type Cache interface {
	Get(key plumbing.Hash) ([]byte, bool)
	Put(key plumbing.Hash, value []byte)
}

// Judge judges every update against in.Refs and returns one verdict per
// update, in the same order.
func Judge(in Input) []Verdict {
	out := make([]Verdict, len(in.Updates))
	for i, u := range in.Updates {
		out[i] = Verdict{Update: u, Code: CodeNoTrust, Reason: "this repository has no refs/hub/trust; run git+ init"}
	}
	return out
}
