package policy

import (
	"reflect"
	"sort"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/gitplus/gitplus/hubrefs"
	"github.com/gitplus/gitplus/hubrefs/pr"
	"github.com/gitplus/gitplus/hubrefs/trust"
)

// foldAll folds every pull request ref of w from its log, with no cache:
// what Reader.PRs must return.
func foldAll(t *testing.T, w *world, ts *trust.State) map[string]*pr.State {
	t.Helper()
	out := map[string]*pr.State{}
	for ref, tip := range w.refs {
		if len(ref) <= len(hubrefs.PRRefPrefix) || ref[:len(hubrefs.PRRefPrefix)] != hubrefs.PRRefPrefix {
			continue
		}
		evs, err := hubrefs.ReadLog(w.store, tip, storedCeilings)
		if err != nil {
			t.Fatal(err)
		}
		st, err := pr.Fold(evs, ts)
		if err != nil {
			t.Fatal(err)
		}
		out[ref] = st
	}
	return out
}

// exported is st's exported fields, nil and empty slices and maps alike.
func exported(st *pr.State) pr.State {
	c := *st
	v := reflect.ValueOf(&c).Elem()
	for i := 0; i < v.NumField(); i++ {
		f := v.Field(i)
		if !v.Type().Field(i).IsExported() {
			continue
		}
		if (f.Kind() == reflect.Slice || f.Kind() == reflect.Map) && f.Len() == 0 {
			f.Set(reflect.Zero(f.Type()))
		}
	}
	return pr.State{ID: c.ID, State: c.State, Base: c.Base, Head: c.Head, Title: c.Title, Body: c.Body,
		Opener: c.Opener, Heads: c.Heads, Source: c.Source, Approvals: c.Approvals, Checks: c.Checks,
		Threads: c.Threads, UnresolvedThreads: c.UnresolvedThreads, Reviews: c.Reviews, Runs: c.Runs,
		Merged: c.Merged, Tip: c.Tip, Draft: c.Draft, ApproverTeams: c.ApproverTeams, Vetoes: c.Vetoes, Dismissals: c.Dismissals, Bypasses: c.Bypasses, Bypassed: c.Bypassed}
}

// prRefs is the pull request refs of w.
func prRefs(w *world) map[string]plumbing.Hash {
	out := map[string]plumbing.Hash{}
	for ref, tip := range w.refs {
		if _, _, ok := hubNamespace(ref); ok && ref != hubrefs.TrustRef {
			out[ref] = tip
		}
	}
	return out
}

// TestReaderPRs: pull requests read through the view equal a cold fold of
// every log; a moved ref is folded again from its new tip; a view written
// under another trust tip, or damaged, is never used.
// TestReaderPRs reads through a cache whose buffers may not be kept
// (mapCache: the view's strings are a copy) and through a FreshCache (the
// view decoded in place, as from receive.DirCache).
func TestReaderPRs(t *testing.T) {
	t.Run("copied", func(t *testing.T) { testReaderPRs(t, false) })
	t.Run("fresh", func(t *testing.T) { testReaderPRs(t, true) })
}

// freshCache is a FreshCache: every Get a new copy.
type freshCache struct{ *mapCache }

func (c freshCache) Get(k plumbing.Hash) ([]byte, bool) {
	b, ok := c.mapCache.Get(k)
	return append([]byte(nil), b...), ok
}

func (freshCache) FreshGets() {}

func testReaderPRs(t *testing.T, fresh bool) {
	w := newWorld(t, `{"protected": {"refs/heads/main": {"requiredApprovals": 1, "requiredChecks": ["ci"]}}}`)
	a := w.ready(w.commit(w.c0, "a", "a\n"))
	b := w.open(w.commit(w.c0, "b", "b\n")).approve("carol")
	w.event(b.ref, "bob", hubrefs.Thread{Base: w.base(hubrefs.TypeThreadOpened), Thread: "t1", Body: "why?"})
	w.event(b.ref, "ci", hubrefs.Check{Base: w.base(hubrefs.TypeCheckCompleted), Name: "lint", Head: b.head.String(), Conclusion: "failure", URL: "https://ci.invalid/1"})
	w.open(w.commit(w.c0, "c", "c\n")).close()
	// Teams, a veto, a dismissal and a draft (docs/trust.md, "Teams",
	// "Vetoes"; docs/events.md, "Drafts") are in the view too.
	w.event(hubrefs.TrustRef, "admin", hubrefs.TeamSet{Base: w.base(hubrefs.TypeTeamSet), Team: "rev", Members: []string{"carol"}})
	w.event(b.ref, "alice", hubrefs.Base{Type: hubrefs.TypePRDraft, Repo: repoID})
	no := w.event(a.ref, "bob", hubrefs.Review{Base: w.base(hubrefs.TypeReviewSubmit), Head: a.head.String(), BaseRef: main, Verdict: "changes"})
	w.event(b.ref, "bob", hubrefs.Review{Base: w.base(hubrefs.TypeReviewSubmit), Head: b.head.String(), BaseRef: main, Verdict: "changes"})
	w.event(a.ref, "admin", hubrefs.ReviewDismissed{Base: w.base(hubrefs.TypeReviewDismiss), Review: no.String(), Reason: "overruled"})
	w.event(a.ref, "admin", hubrefs.PRBypassed{Base: w.base(hubrefs.TypePRBypassed), Head: a.head.String(), BaseRef: main, Reason: "hotfix"})
	trustTip := w.refs[hubrefs.TrustRef]

	objs := &counting{Objects: GoGitObjects(w.store), n: map[plumbing.Hash]int{}}
	c := &mapCache{m: map[plumbing.Hash][]byte{}}
	rd := &Reader{Objects: objs, Cache: c}
	if fresh {
		rd.Cache = freshCache{c}
	}
	if freshGets(rd.Cache) != fresh {
		t.Fatalf("freshGets: %v, want %v", !fresh, fresh)
	}
	ts, err := rd.Trust(trustTip)
	if err != nil {
		t.Fatal(err)
	}
	check := func(step string, folds []PRFold) {
		t.Helper()
		want := foldAll(t, w, ts)
		if len(folds) != len(want) {
			t.Fatalf("%s: %d pull requests, want %d", step, len(folds), len(want))
		}
		if !sort.SliceIsSorted(folds, func(i, j int) bool { return folds[i].Ref < folds[j].Ref }) {
			t.Fatalf("%s: not in ref order", step)
		}
		for _, f := range folds {
			if f.Err != nil {
				t.Fatalf("%s: %s: %v", step, f.Ref, f.Err)
			}
			if f.Tip != w.refs[f.Ref] {
				t.Fatalf("%s: %s at %s, ref at %s", step, f.Ref, f.Tip, w.refs[f.Ref])
			}
			if got, exp := exported(f.State), exported(want[f.Ref]); !reflect.DeepEqual(got, exp) {
				t.Fatalf("%s: %s:\n got %+v\nwant %+v", step, f.Ref, got, exp)
			}
			evs, _ := hubrefs.ReadLog(w.store, f.Tip, storedCeilings)
			if f.Events != len(evs) {
				t.Fatalf("%s: %s: %d events, want %d", step, f.Ref, f.Events, len(evs))
			}
		}
	}
	reads := func() int {
		n := 0
		for _, tip := range prRefs(w) {
			n += objs.total(tip)
		}
		return n
	}

	check("cold", rd.PRs(trustTip, ts, prRefs(w)))
	if reads() == 0 {
		t.Fatal("cold: no pull request log read")
	}
	// Warm: every pull request from the view, no log read.
	before := reads()
	check("warm", rd.PRs(trustTip, ts, prRefs(w)))
	if reads() != before {
		t.Fatal("warm: a pull request log was read again")
	}

	// One ref moves: only it is folded again, from its new tip.
	a.check("lint", a.head, "success")
	check("a moved", rd.PRs(trustTip, ts, prRefs(w)))
	if objs.total(w.refs[a.ref]) == 0 {
		t.Fatalf("the moved ref's new tip %s was not read", w.refs[a.ref])
	}
	// A view entry for one trust tip is never read for another: after the
	// trust log moves (bob loses hub.review), carol's approval of b still
	// counts, bob's of a does not.
	w.event(hubrefs.TrustRef, "admin", hubrefs.MemberAdded{Base: w.base(hubrefs.TypeMemberChanged), Name: "bob", Key: hubrefs.AuthorizedKey(w.keys["bob"].PublicKey()), Caps: []string{"hub.pr"}})
	trust2 := w.refs[hubrefs.TrustRef]
	ts2, err := rd.Trust(trust2)
	if err != nil {
		t.Fatal(err)
	}
	ts = ts2
	folds := rd.PRs(trust2, ts2, prRefs(w))
	check("trust moved", folds)
	for _, f := range folds {
		if f.Ref == a.ref && len(f.State.Approvals) != 0 {
			t.Fatalf("after bob lost hub.review, a is approved by %v", f.State.Approvals)
		}
	}
	// A view copied under the new key from the old trust tip, or damaged,
	// is not used.
	old, ok := c.m[prViewKey(trustTip)]
	if !ok {
		t.Fatal("no view for the first trust tip")
	}
	if _, ok := decodePRView(trust2, old, false); ok {
		t.Fatal("a view written for one trust tip decodes for another")
	}
	c.m[prViewKey(trust2)] = old
	check("foreign view", rd.PRs(trust2, ts2, prRefs(w)))
	good := c.m[prViewKey(trust2)]
	for i := len(prViewMagic) + 20; i < len(good); i += 7 {
		bad := append([]byte(nil), good[:i]...)
		if _, ok := decodePRView(trust2, bad, true); ok {
			t.Fatalf("a view truncated to %d of %d bytes decodes", i, len(good))
		}
	}
	c.m[prViewKey(trust2)] = good[:len(good)-3]
	check("damaged view", rd.PRs(trust2, ts2, prRefs(w)))
}

// TestReaderLogAndTrust: a log and a trust state read through the cache
// equal those read from objects; a log entry stored under another tip is
// not used.
func TestReaderLogAndTrust(t *testing.T) {
	w := newWorld(t, "")
	tip := w.refs[hubrefs.TrustRef]
	want, err := hubrefs.ReadLog(w.store, tip, storedCeilings)
	if err != nil {
		t.Fatal(err)
	}
	c := &mapCache{m: map[plumbing.Hash][]byte{}}
	rd := &Reader{Objects: GoGitObjects(w.store), Cache: c}
	for _, pass := range []string{"cold", "warm"} {
		got, err := rd.Log(tip)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(eventIDs(got), eventIDs(want)) {
			t.Fatalf("%s: log differs", pass)
		}
		ts, err := rd.Trust(tip)
		if err != nil {
			t.Fatal(err)
		}
		if len(ts.Members) != 6 || ts.Tip != tip {
			t.Fatalf("%s: trust state %d members at %s", pass, len(ts.Members), ts.Tip)
		}
	}
	// The entry of the trust log's first event, put under the tip's key,
	// is refused: the log is read from the objects again.
	first := want[0].ID
	if _, err := rd.Log(first); err != nil {
		t.Fatal(err)
	}
	c.m[tip] = c.m[first]
	got, err := rd.Log(tip)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) {
		t.Fatalf("read %d events through a foreign entry, want %d", len(got), len(want))
	}
}

func eventIDs(evs []hubrefs.Event) []plumbing.Hash {
	out := make([]plumbing.Hash, len(evs))
	for i, e := range evs {
		out[i] = e.ID
	}
	return out
}
