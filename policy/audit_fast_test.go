package policy

// The audit's loading phase judges each pull request as it stood before its
// pr.merged with one incremental fold on a linear log (foldOnce), on
// several goroutines when asked. These tests audit one history with every
// kind of landing the fast paths touch, and require the same report from
// the fold per record on one goroutine as from the fast paths on several.

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/storage/memory"

	"github.com/gitplus/gitplus/hubrefs"
)

const auditRules = `{"protected":{"refs/heads/main":{"requiredApprovals":1,"requiredChecks":["ci"],"queueCandidates":true,"queueDepth":8}}}`

// commitOf writes a commit with the given parents and the tree of treeFrom.
func (w *world) commitOf(treeFrom plumbing.Hash, msg string, parents ...plumbing.Hash) plumbing.Hash {
	w.t.Helper()
	c, err := object.GetCommit(w.store, treeFrom)
	if err != nil {
		w.t.Fatal(err)
	}
	sig := object.Signature{Name: "Test", Email: "test@example.invalid", When: time.Unix(1700000000, 0).UTC()}
	o := w.store.NewEncodedObject()
	if err := (&object.Commit{Author: sig, Committer: sig, Message: msg, TreeHash: c.TreeHash, ParentHashes: parents}).Encode(o); err != nil {
		w.t.Fatal(err)
	}
	id, err := w.store.SetEncodedObject(o)
	if err != nil {
		w.t.Fatal(err)
	}
	return id
}

func (p *prq) merged(rev, landed plumbing.Hash) *prq {
	p.w.event(p.ref, "queuer", hubrefs.PRMerged{Base: p.w.base(hubrefs.TypePRMerged), Revision: rev.String(), Branch: main, Commit: landed.String()})
	return p
}

// memObjects copies w's objects into a memory store, which concurrent
// readers may share (the world's filesystem store may not be shared).
func memObjects(t *testing.T, w *world) Objects {
	t.Helper()
	mem := memory.NewStorage()
	it, err := w.store.IterEncodedObjects(plumbing.AnyObject)
	if err != nil {
		t.Fatal(err)
	}
	if err := it.ForEach(func(o plumbing.EncodedObject) error {
		_, err := mem.SetEncodedObject(o)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	return GoGitObjects(mem)
}

type auditMode struct {
	name    string
	fast    bool
	workers int
	cache   bool
}

var auditModes = []auditMode{
	{"fold per record, one goroutine", false, 1, false},
	{"fold once, one goroutine", true, 1, false},
	{"fold per record, 4 workers", false, 4, false},
	{"fold once, 4 workers", true, 4, false},
	{"fold once, 4 workers, fold cache", true, 4, true},
}

// auditAll audits w's main in every mode and requires one answer.
func auditAll(t *testing.T, w *world) (*AuditReport, error) {
	t.Helper()
	mem := memObjects(t, w)
	cache := &mapCache{m: map[plumbing.Hash][]byte{}} // locked: safe for the loading workers
	var first *AuditReport
	var firstErr error
	for i, m := range auditModes {
		fastFold = m.fast
		in := AuditInput{Objects: GoGitObjects(w.store), Refs: w.refs, Branch: main, Workers: m.workers}
		if m.workers > 1 {
			in.Objects = mem
		}
		if m.cache {
			in.Cache = cache
		}
		rep, err := Audit(in)
		if m.cache { // again, from the filled cache
			rep, err = Audit(in)
		}
		fastFold = true
		if i == 0 {
			first, firstErr = rep, err
			continue
		}
		if fmt.Sprint(err) != fmt.Sprint(firstErr) || !reflect.DeepEqual(rep, first) {
			t.Fatalf("%s disagrees with %s:\n%+v (%v)\nwant\n%+v (%v)", m.name, auditModes[0].name, rep, err, first, firstErr)
		}
	}
	return first, firstErr
}

func TestAuditFastPathsAgree(t *testing.T) {
	w := newWorld(t, auditRules)
	tip := w.c0
	type want struct {
		kind, trust, record, code string
	}
	wants := map[plumbing.Hash]want{}
	land := func(c plumbing.Hash, wt want) {
		tip = c
		wants[c] = wt
	}
	feature := func(name string) plumbing.Hash { return w.commit(tip, name+".txt", name+"\n") }
	side := func(name string) plumbing.Hash { return w.commit(w.c0, name+".txt", name+"\n") }

	// 1. A direct landing, linear log.
	h := feature("d1")
	w.ready(h).merged(h, h)
	land(h, want{kind: LandingDirect, trust: "then", record: "pr.merged"})

	// 2. A candidate step checked on the candidate.
	h = side("k2")
	k := w.merge(tip, h)
	w.open(h).approve("bob").check("ci", k, "success").merged(h, k)
	land(k, want{kind: LandingCandidate, trust: "then", record: "pr.merged"})

	// 3. A candidate whose tree is not the merge of its parents.
	h = side("k3")
	k = w.commitOf(h, "candidate k3", tip, h)
	w.open(h).approve("bob").check("ci", k, "success").merged(h, k)
	land(k, want{code: CodeCandidateTree})

	// 4. A candidate checked only on the pull request head.
	h = side("k4")
	k = w.merge(tip, h)
	w.ready(h).merged(h, k)
	land(k, want{code: CodeChecksMissing})

	// 5. A good candidate: 3 and 4 below it stay unjustified.
	h = side("k5")
	k = w.merge(tip, h)
	w.open(h).approve("bob").check("ci", k, "success").merged(h, k)
	land(k, want{kind: LandingCandidate, trust: "then", record: "pr.merged"})

	// 6. A direct landing never approved.
	h = feature("d6")
	w.open(h).check("ci", h, "success").merged(h, h)
	land(h, want{code: CodeNotApproved})

	// 7. A candidate whose check failed after its pr.merged (hub logs are
	// linear: the failure follows the record, so it is not one of its causes).
	h = side("k7")
	k = w.merge(tip, h)
	p := w.open(h).approve("bob").check("ci", k, "success").merged(h, k)
	p.check("ci", k, "failure")
	land(k, want{kind: LandingCandidate, trust: "then", record: "pr.merged"})

	// 8. Events after pr.merged (approval withdrawn, check failed) do not
	// change how the pull request stood when it landed.
	h = feature("d8")
	p = w.ready(h).merged(h, h)
	w.event(p.ref, "bob", hubrefs.Review{Base: w.base(hubrefs.TypeReviewSubmit), Head: h.String(), BaseRef: main, Verdict: "changes"})
	p.check("ci", h, "failure")
	land(h, want{kind: LandingDirect, trust: "then", record: "pr.merged"})

	// 9. Approved by a reviewer removed after the landing: trust then.
	h = feature("d9")
	w.open(h).approve("carol").check("ci", h, "success").merged(h, h)
	w.event(hubrefs.TrustRef, "admin", hubrefs.MemberRemoved{Base: w.base(hubrefs.TypeMemberRemoved), Name: "carol"})
	land(h, want{kind: LandingDirect, trust: "then", record: "pr.merged"})

	// 10. Checked by a key that became a ci member only after the landing:
	// refused under trust then, justified under the current trust.
	h = feature("d10")
	p = w.open(h).approve("bob")
	w.event(p.ref, "mallory", hubrefs.Check{Base: w.base(hubrefs.TypeCheckCompleted), Name: "ci", Head: h.String(), Conclusion: "success"})
	p.merged(h, h)
	w.event(hubrefs.TrustRef, "admin", w.memberAdded("mallory", "hub.check:ci"))
	land(h, want{kind: LandingDirect, trust: "current", record: "pr.merged"})

	// 11. A candidate no pr.merged names: some prefix of its records.
	h = side("k11")
	k = w.merge(tip, h)
	w.open(h).approve("bob").check("ci", k, "success")
	land(k, want{kind: LandingCandidate, trust: "current", record: "records"})

	// 12. A pull request whose pr.merged names a commit carrying neither
	// its head nor a candidate of it.
	h = feature("h12")
	x := w.commit(tip, "x12.txt", "x\n")
	w.ready(h).merged(h, x)
	land(x, want{code: CodeCandidateParents})

	// 13. An approved, checked direct landing whose tree git's fsck
	// refuses (written around the boundary): the audit checks objects as
	// the hook does (fsck.go). Last: git cannot check it out.
	h = rawCommit(w, rawTree(w, "100644 .GIT", w.storeRaw(plumbing.BlobObject, []byte("x\n"))), tip)
	w.ready(h).merged(h, h)
	land(h, want{code: CodeBadObject})

	w.refs[main] = tip
	rep, err := auditAll(t, w)
	if err != nil {
		t.Fatal(err)
	}
	got := map[plumbing.Hash]want{}
	for _, l := range rep.Landings {
		got[l.Commit] = want{kind: l.Kind, trust: l.Trust, record: strings.Fields(l.Record)[0]}
	}
	for _, f := range rep.Unjustified {
		got[f.Commit] = want{code: f.Code}
	}
	if rep.Commits != len(wants) || len(got) != len(wants) {
		t.Fatalf("%d commits judged, %d answers, want %d:\n%+v", rep.Commits, len(got), len(wants), rep)
	}
	for c, wt := range wants {
		if got[c] != wt {
			t.Errorf("%s: got %+v, want %+v", short(c), got[c], wt)
		}
	}

	// A pull request log that cannot be folded stops the audit, with one
	// error in every mode.
	bad := w.eventOn(nil, "queuer", hubrefs.PRMerged{Base: w.base(hubrefs.TypePRMerged), Revision: tip.String(), Branch: main, Commit: tip.String()})
	w.refs[hubrefs.PRRefPrefix+"01900000-0000-7000-8000-0000000000bb"] = bad
	if _, err := auditAll(t, w); err == nil || !strings.Contains(err.Error(), "folding "+hubrefs.PRRefPrefix) {
		t.Fatalf("audit with an unfoldable pull request log: %v", err)
	}
}
