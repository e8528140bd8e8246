package policy

import (
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/gitplus/gitplus/hubrefs"
	"github.com/gitplus/gitplus/hubrefs/queue"
	"github.com/gitplus/gitplus/mergetree"
)

// commitFiles makes a commit on from (zero: a root) setting each path
// (slash-separated, nested directories made as needed) to its content; an
// empty content removes the file.
func (w *world) commitFiles(from plumbing.Hash, files map[string]string) plumbing.Hash {
	w.t.Helper()
	all := map[string]plumbing.Hash{}
	var parents []plumbing.Hash
	if !from.IsZero() {
		c, err := object.GetCommit(w.store, from)
		if err != nil {
			w.t.Fatal(err)
		}
		tree, err := c.Tree()
		if err != nil {
			w.t.Fatal(err)
		}
		if err := tree.Files().ForEach(func(f *object.File) error { all[f.Name] = f.Hash; return nil }); err != nil {
			w.t.Fatal(err)
		}
		parents = []plumbing.Hash{from}
	}
	for p, content := range files {
		if content == "" {
			delete(all, p)
			continue
		}
		all[p] = w.storeRaw(plumbing.BlobObject, []byte(content))
	}
	var build func(prefix string) plumbing.Hash
	build = func(prefix string) plumbing.Hash {
		dirs := map[string]bool{}
		var entries []object.TreeEntry
		for p, h := range all {
			rest, ok := strings.CutPrefix(p, prefix)
			if !ok {
				continue
			}
			if d, _, sub := strings.Cut(rest, "/"); sub {
				dirs[d] = true
			} else {
				entries = append(entries, object.TreeEntry{Name: rest, Mode: filemode.Regular, Hash: h})
			}
		}
		for d := range dirs {
			entries = append(entries, object.TreeEntry{Name: d, Mode: filemode.Dir, Hash: build(prefix + d + "/")})
		}
		sort.Slice(entries, func(i, j int) bool {
			a, b := entries[i].Name, entries[j].Name
			if entries[i].Mode == filemode.Dir {
				a += "/"
			}
			if entries[j].Mode == filemode.Dir {
				b += "/"
			}
			return a < b
		})
		obj := w.store.NewEncodedObject()
		if err := (&object.Tree{Entries: entries}).Encode(obj); err != nil {
			w.t.Fatal(err)
		}
		h, err := w.store.SetEncodedObject(obj)
		if err != nil {
			w.t.Fatal(err)
		}
		return h
	}
	tree := build("")
	w.n++
	sig := object.Signature{Name: "Test", Email: "test@example.invalid", When: time.Unix(1700000000+int64(w.n), 0).UTC()}
	cobj := w.store.NewEncodedObject()
	c := &object.Commit{Author: sig, Committer: sig, Message: fmt.Sprintf("change %d\n", w.n), TreeHash: tree, ParentHashes: parents}
	if err := c.Encode(cobj); err != nil {
		w.t.Fatal(err)
	}
	id, err := w.store.SetEncodedObject(cobj)
	if err != nil {
		w.t.Fatal(err)
	}
	return id
}

const partitionRules = `{"protected":{"refs/heads/main":{"queueCandidates":true,"queueDepth":8%s,"partitions":[
	{"name":"web","paths":["web/**"],"reads":["package.json"]},
	{"name":"api","paths":["api/**"],"reads":["go.mod"]}]}}}`

// partWorld is a monorepo with two partitions.
type partWorld struct {
	*world
	squash bool
	objs   *mergetree.GoGitStore
	t0     plumbing.Hash
}

func newPartWorld(t *testing.T, extra string, squash bool) *partWorld {
	if squash {
		extra += `,"mergeMethod":"squash"`
	}
	w := &partWorld{world: newWorld(t, fmt.Sprintf(partitionRules, extra)), squash: squash}
	w.objs = mergetree.NewGoGitStore(w.store)
	w.t0 = w.commitFiles(w.c0, map[string]string{"package.json": "{}\n", "go.mod": "module x\n", "web/a": "a\n", "api/a": "a\n"})
	w.refs[main] = w.t0
	return w
}

// pr opens an approved pull request changing files on t0.
func (w *partWorld) pr(files map[string]string) *prq {
	return w.open(w.commitFiles(w.t0, files)).approve("bob")
}

// candidate builds p's candidate on parent (the branch's shape).
func (w *partWorld) candidate(parent plumbing.Hash, p *prq) plumbing.Hash {
	w.t.Helper()
	build := queue.BuildCandidate
	if w.squash {
		build = queue.BuildSquash
	}
	c, conflicts, err := build(w.objs, w.objs, parent, p.head, p.id, main, "change "+p.id)
	if err != nil || conflicts != nil {
		w.t.Fatal(err, conflicts)
	}
	return c
}

// step builds p's partition step on parent, tested as tested.
func (w *partWorld) step(parent plumbing.Hash, p *prq, tested plumbing.Hash) plumbing.Hash {
	w.t.Helper()
	d, conflicts, err := queue.BuildTested(w.objs, w.objs, parent, p.head, tested, p.id, main, "change "+p.id, w.squash)
	if err != nil || conflicts != nil {
		w.t.Fatal(err, conflicts)
	}
	return d
}

func (w *partWorld) expect(name string, u Update, code, want string) {
	w.t.Helper()
	v := w.judge1(u)
	if v.Code != code || !strings.Contains(v.Reason, want) {
		w.t.Errorf("%s: [%s] %s\nwant [%s] naming %q", name, v.Code, v.Reason, code, want)
	}
}

// TestPartitionSteps: the hook's rule for a lane's candidate landing on a
// moved tip (docs/boundary.md, "Partition steps"), under both methods:
// accepted when its tested candidate is a green candidate of the same pull
// request and head, what it changes is one partition's, and it equals the
// candidate on the partition's inputs; each way of breaking one of those
// refused with its code, naming what is wrong.
func TestPartitionSteps(t *testing.T) {
	for _, squash := range []bool{false, true} {
		t.Run(map[bool]string{false: "merge", true: "squash"}[squash], func(t *testing.T) {
			w := newPartWorld(t, "", squash)
			web := w.pr(map[string]string{"web/a": "web change\n"})
			api := w.pr(map[string]string{"api/a": "api change\n"})
			both := w.pr(map[string]string{"web/b": "b\n", "api/b": "b\n"})
			reads := w.pr(map[string]string{"package.json": "{\"x\":1}\n"}) // global: web reads it
			web2 := w.pr(map[string]string{"web/c": "c\n"})
			cWeb, cAPI, cBoth, cReads, cWeb2 := w.candidate(w.t0, web), w.candidate(w.t0, api), w.candidate(w.t0, both), w.candidate(w.t0, reads), w.candidate(w.t0, web2)
			for _, x := range []struct {
				p *prq
				c plumbing.Hash
			}{{web, cWeb}, {api, cAPI}, {both, cBoth}, {reads, cReads}, {web2, cWeb2}} {
				x.p.check("ci", x.c, "success")
			}

			// The api lane lands its candidate as it is: the tip did not move.
			if v := w.judge1(Update{Ref: main, Old: w.t0, New: cAPI}); !v.Accepted() {
				t.Fatalf("api's candidate on its own tip: [%s] %s", v.Code, v.Reason)
			}
			w.refs[main] = cAPI
			// The web lane's candidate, built on t0, lands as a step on the
			// moved tip, without running its checks again.
			dWeb := w.step(cAPI, web, cWeb)
			if v := w.judge1(Update{Ref: main, Old: cAPI, New: dWeb}); !v.Accepted() {
				t.Fatalf("web's partition step: [%s] %s", v.Code, v.Reason)
			}
			// Two of them in one push: web, then web2 tested on t0 too (so
			// web2's inputs differ from what landed below it: refused),
			// and web2 tested on web's candidate (accepted).
			dWeb2 := w.step(dWeb, web2, cWeb2)
			w.expect("a second web step tested without the first", Update{Ref: main, Old: cAPI, New: dWeb2}, CodePartitionUntested, "web/a")
			cWeb2On := w.candidate(cWeb, web2)
			web2.check("ci", cWeb2On, "success")
			dWeb2 = w.step(dWeb, web2, cWeb2On)
			if v := w.judge1(Update{Ref: main, Old: cAPI, New: dWeb2}); !v.Accepted() {
				t.Fatalf("two web steps: [%s] %s", v.Code, v.Reason)
			}

			// A pull request of lane web that also changes api/.
			w.expect("a step changing two partitions", Update{Ref: main, Old: cAPI, New: w.step(cAPI, both, cBoth)}, CodePartitionOutside, "api/b lies in partition api and web/b in partition web")
			// A landing changed one of web's reads after its candidate was built.
			w.refs[main] = w.t0
			if v := w.judge1(Update{Ref: main, Old: w.t0, New: cReads}); !v.Accepted() {
				t.Fatalf("the global pull request's candidate: [%s] %s", v.Code, v.Reason)
			}
			w.refs[main] = cReads
			w.expect("a web step after its reads changed", Update{Ref: main, Old: cReads, New: w.step(cReads, web, cWeb)}, CodePartitionUntested, "package.json")
			// A global pull request never lands by a tested candidate.
			w.refs[main] = cAPI
			w.expect("a global step", Update{Ref: main, Old: cAPI, New: w.step(cAPI, reads, cReads)}, CodePartitionOutside, "package.json")

			// Git-Plus-Tested naming a candidate of another pull request.
			w.expect("another pull request's candidate", Update{Ref: main, Old: cAPI, New: w.step(cAPI, web, cWeb2)}, CodeTestedCandidate, web2.head.String()[:12])
			// ... or a red one, or one never checked.
			red := w.pr(map[string]string{"web/d": "d\n"})
			cRed := w.candidate(w.t0, red)
			red.check("ci", cRed, "failure")
			w.expect("a red candidate", Update{Ref: main, Old: cAPI, New: w.step(cAPI, red, cRed)}, CodeChecksFailed, "tested candidate")
			unchecked := w.pr(map[string]string{"web/e": "e\n"})
			w.expect("an unchecked candidate", Update{Ref: main, Old: cAPI, New: w.step(cAPI, unchecked, w.candidate(w.t0, unchecked))}, CodeChecksMissing, "tested candidate")
			// ... or a commit made up to look like one: the parents and
			// trailers of a candidate, the partition step's tree.
			fake := w.fakeCandidate(w.t0, web, dWeb)
			web.check("ci", fake, "success")
			w.expect("a made-up candidate", Update{Ref: main, Old: cAPI, New: w.step(cAPI, web, fake)}, CodeTestedCandidate, "is no candidate")

			// A malformed trailer.
			msg := queue.TestedMessage(web.id, main, "x", cWeb)
			if squash {
				msg = queue.TestedSquashMessage(web.id, web.head.String(), main, "x", cWeb)
			}
			w.expect("two trailers", Update{Ref: main, Old: cAPI, New: w.withMessage(dWeb, msg+queue.TrailerTested+": "+cWeb.String()+"\n")}, CodeTestedCandidate, "appears 2 times")
		})
	}
}

// fakeCandidate is a commit shaped as p's candidate on parent (parents or
// trailers) whose tree is like's.
func (w *partWorld) fakeCandidate(parent plumbing.Hash, p *prq, like plumbing.Hash) plumbing.Hash {
	w.t.Helper()
	c, err := object.GetCommit(w.store, like)
	if err != nil {
		w.t.Fatal(err)
	}
	raw := fmt.Sprintf("tree %s\nparent %s\n", c.TreeHash, parent)
	msg := queue.Message(p.id, main, "fake")
	if w.squash {
		msg = queue.SquashMessage(p.id, p.head.String(), main, "fake")
	} else {
		raw += fmt.Sprintf("parent %s\n", p.head)
	}
	raw += "author " + queue.Ident + " 1700000000 +0000\ncommitter " + queue.Ident + " 1700000000 +0000\n\n" + msg
	return w.storeRaw(plumbing.CommitObject, []byte(raw))
}

// withMessage is commit id with another message.
func (w *partWorld) withMessage(id plumbing.Hash, msg string) plumbing.Hash {
	w.t.Helper()
	_, raw, err := GoGitObjects(w.store).ReadObject(id)
	if err != nil {
		w.t.Fatal(err)
	}
	i := strings.Index(string(raw), "\n\n")
	return w.storeRaw(plumbing.CommitObject, append(raw[:i+2:i+2], msg...))
}

// TestPartitionStepsElsewhere: a Git-Plus-Tested trailer means nothing on a
// branch without partitions (the step needs its own checks), and the
// audit justifies the partition steps the hook accepts and reports one
// pushed around it.
func TestPartitionStepsAudit(t *testing.T) {
	for _, squash := range []bool{false, true} {
		w := newPartWorld(t, "", squash)
		web := w.pr(map[string]string{"web/a": "web change\n"})
		api := w.pr(map[string]string{"api/a": "api change\n"})
		cWeb, cAPI := w.candidate(w.t0, web), w.candidate(w.t0, api)
		web.check("ci", cWeb, "success")
		api.check("ci", cAPI, "success")
		dWeb := w.step(cAPI, web, cWeb)
		for _, x := range []struct {
			p    *prq
			c    plumbing.Hash
			from plumbing.Hash
		}{{api, cAPI, w.t0}, {web, dWeb, cAPI}} {
			if v := w.judge1(Update{Ref: main, Old: w.refs[main], New: x.c}); !v.Accepted() {
				t.Fatalf("squash %v: [%s] %s", squash, v.Code, v.Reason)
			}
			w.refs[main] = x.c
			w.event(x.p.ref, "queuer", hubrefs.PRMerged{Base: w.base(hubrefs.TypePRMerged), Revision: x.p.head.String(), Branch: main, Commit: x.c.String()})
		}
		rep, err := Audit(AuditInput{Objects: GoGitObjects(w.store), Refs: w.refs, Branch: main, Since: w.t0})
		if err != nil {
			t.Fatal(err)
		}
		if len(rep.Unjustified) != 0 || len(rep.Landings) != 2 {
			t.Fatalf("squash %v: %+v", squash, rep)
		}
		// A step whose web inputs differ from its tested candidate's,
		// pushed around the boundary: unjustified.
		web2 := w.pr(map[string]string{"web/c": "c\n"})
		c2 := w.candidate(w.t0, web2)
		web2.check("ci", c2, "success")
		d2 := w.step(dWeb, web2, c2) // tested without web's change
		w.refs[main] = d2
		rep, err = Audit(AuditInput{Objects: GoGitObjects(w.store), Refs: w.refs, Branch: main, Since: w.t0})
		if err != nil {
			t.Fatal(err)
		}
		if len(rep.Unjustified) != 1 || rep.Unjustified[0].Commit != d2 || rep.Unjustified[0].Code != CodePartitionUntested {
			t.Fatalf("squash %v: a step tested without the step below it: %+v", squash, rep.Unjustified)
		}
	}
	// Without partitions the trailer is not read: the step's own checks.
	w := newPartWorld(t, "", false)
	w.event(hubrefs.TrustRef, "admin", hubrefs.RulesSet{Base: w.base(hubrefs.TypeRulesSet), Rules: []byte(`{"protected":{"refs/heads/main":{"queueCandidates":true}}}`)})
	web := w.pr(map[string]string{"web/a": "web change\n"})
	api := w.pr(map[string]string{"api/a": "api change\n"})
	cWeb, cAPI := w.candidate(w.t0, web), w.candidate(w.t0, api)
	web.check("ci", cWeb, "success")
	w.refs[main] = cAPI
	w.expect("no partitions", Update{Ref: main, Old: cAPI, New: w.step(cAPI, web, cWeb)}, CodeChecksMissing, "on candidate")
}

// TestPartitionStepsBatch: under batch checks a green group end of a lane
// vouches for the partition steps of its group (their tested candidates
// stand on each other), never for a step of another lane pushed below it.
func TestPartitionStepsBatch(t *testing.T) {
	w := newPartWorld(t, `,"checkEvery":2`, false)
	qref := hubrefs.QueueRefPrefix + "01900000-0000-7000-8000-0000000000aa"
	w.event(qref, "queuer", hubrefs.QueueOpened{Base: w.base(hubrefs.TypeQueueOpened), ID: "01900000-0000-7000-8000-0000000000aa", Target: main})
	w1 := w.pr(map[string]string{"web/a": "1\n"})
	w2 := w.pr(map[string]string{"web/b": "2\n"})
	a1 := w.pr(map[string]string{"api/a": "1\n"})
	a2 := w.pr(map[string]string{"api/b": "2\n"})
	cW1 := w.candidate(w.t0, w1)
	cW2 := w.candidate(cW1, w2)
	cA1 := w.candidate(w.t0, a1)
	cA2 := w.candidate(cA1, a2)
	publish := func(p *prq, step, parent, end plumbing.Hash) {
		w.event(qref, "queuer", hubrefs.QueueCandidate{Base: w.base(hubrefs.TypeQueueCandidate), PR: p.id, Head: p.head.String(), Step: step.String(),
			Parents: []string{parent.String(), p.head.String()}, Branch: queue.Branch(main, p.id), GroupEnd: end.String(), GroupSize: 2})
	}
	publish(w1, cW1, w.t0, cW2)
	publish(w2, cW2, cW1, cW2)
	publish(a1, cA1, w.t0, cA2)
	publish(a2, cA2, cA1, cA2)
	w2.check("ci", cW2, "success")
	a2.check("ci", cA2, "success")
	// The api lane lands its group as it is.
	if v := w.judge1(Update{Ref: main, Old: w.t0, New: cA2}); !v.Accepted() {
		t.Fatalf("api's group: [%s] %s", v.Code, v.Reason)
	}
	w.refs[main] = cA2
	// The web lane's group lands as two partition steps, vouched for by
	// its green end.
	d1 := w.step(cA2, w1, cW1)
	d2 := w.step(d1, w2, cW2)
	if v := w.judge1(Update{Ref: main, Old: cA2, New: d2}); !v.Accepted() {
		t.Fatalf("web's group as partition steps: [%s] %s", v.Code, v.Reason)
	}
	// An unchecked candidate of lane api pushed below web's partition step
	// is not in web's group, though it stands one step below its end:
	// web's tested candidates do not stand on it.
	w.refs[main] = w.t0
	a3 := w.pr(map[string]string{"api/c": "3\n"})
	cA3 := w.candidate(w.t0, a3)
	publish(a3, cA3, w.t0, cW2)
	w.expect("vouching across lanes", Update{Ref: main, Old: w.t0, New: w.step(cA3, w2, cW2)}, CodeChecksMissing, "in no group whose last step is green")
}
