package policy

import (
	"encoding/json"
	"fmt"
	"math/rand"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/gitplus/gitplus/hubrefs"
	"github.com/gitplus/gitplus/hubrefs/pr"
	"github.com/gitplus/gitplus/hubrefs/queue"
	"github.com/gitplus/gitplus/hubrefs/trust"
)

// refMember and refTrust are a plain reference model of the trust log
// (docs/trust.md): one chain, each event judged against the state before
// it by its signer's repo.admin, then applied.
type refMember struct {
	key  string // authorized_keys line
	caps []string
}

type refTrust struct {
	tip     plumbing.Hash
	members map[string]refMember
	// granted[name][cap] is the step at which name last received cap from
	// a signer holding repo.admin at that step; removed[name] the step of
	// the last removal.
	granted map[string]map[string]int
	removed map[string]int
}

func (m *refTrust) admin(key string) (string, bool) {
	for n, mm := range m.members {
		if mm.key == key && slices.Contains(mm.caps, trust.CapAdmin) {
			return n, true
		}
	}
	return "", false
}

func (m *refTrust) admins() int {
	n := 0
	for _, mm := range m.members {
		if slices.Contains(mm.caps, trust.CapAdmin) {
			n++
		}
	}
	return n
}

// step applies one event the model accepts; it reports whether it does.
func (m *refTrust) step(i int, parents []plumbing.Hash, id plumbing.Hash, signerKey, typ, name, key string, caps []string) bool {
	if len(parents) != 1 || parents[0] != m.tip {
		return false
	}
	if _, ok := m.admin(signerKey); !ok {
		return false
	}
	old, exists := m.members[name]
	for n, mm := range m.members {
		if n != name && mm.key == key && typ != hubrefs.TypeMemberRemoved {
			return false
		}
	}
	switch typ {
	case hubrefs.TypeMemberAdded, hubrefs.TypeMemberChanged:
		if exists == (typ == hubrefs.TypeMemberAdded) {
			return false
		}
		if exists && slices.Contains(old.caps, trust.CapAdmin) && !slices.Contains(caps, trust.CapAdmin) && m.admins() == 1 {
			return false
		}
		m.members[name] = refMember{key: key, caps: caps}
		if m.granted[name] == nil {
			m.granted[name] = map[string]int{}
		}
		for _, c := range caps {
			m.granted[name][c] = i
		}
	case hubrefs.TypeMemberRemoved:
		if !exists || slices.Contains(old.caps, trust.CapAdmin) && m.admins() == 1 {
			return false
		}
		delete(m.members, name)
		m.removed[name] = i
	}
	m.tip = id
	return true
}

// TestTrustForksProperty: random trust DAGs — appends on the tip, forks on
// older events (also where a removed admin still held repo.admin), joins,
// concurrent removals — pushed one event at a time through the boundary.
// The boundary accepts exactly what the linear reference model accepts, a
// replica folding the stored log reaches the model's state, and nobody
// removed holds a capability without a later grant signed by someone
// holding repo.admin at that point.
func TestTrustForksProperty(t *testing.T) {
	for seed := int64(1); seed <= 4; seed++ {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			t.Parallel()
			trustForks(t, seed, 60)
		})
	}
}

func trustForks(t *testing.T, seed int64, steps int) {
	rng := rand.New(rand.NewSource(seed))
	w := newWorld(t, "")
	names := []string{"admin", "alice", "bob", "carol", "mallory"}
	keyOf := func(n string) string { return hubrefs.AuthorizedKey(w.keys[n].PublicKey()) }
	evs, err := hubrefs.ReadLog(w.store, w.refs[hubrefs.TrustRef], hubrefs.Ceilings{})
	if err != nil {
		t.Fatal(err)
	}
	st0, err := trust.Fold(evs)
	if err != nil {
		t.Fatal(err)
	}
	m := &refTrust{tip: st0.Tip, members: map[string]refMember{}, granted: map[string]map[string]int{}, removed: map[string]int{}}
	for n, mm := range st0.Members {
		m.members[n] = refMember{key: mm.KeyLine, caps: mm.Caps}
		m.granted[n] = map[string]int{}
		for _, c := range mm.Caps {
			m.granted[n][c] = 0
		}
	}
	all := []plumbing.Hash{}
	for _, ev := range evs {
		all = append(all, ev.ID)
	}
	accepted, refused := 0, 0
	for i := 1; i <= steps; i++ {
		var parents []plumbing.Hash
		switch r := rng.Intn(20); {
		case r < 12:
			parents = []plumbing.Hash{m.tip}
		case r < 16: // a fork on an older event
			parents = []plumbing.Hash{all[rng.Intn(len(all))]}
		default: // a join of the tip and an older event (often a fork)
			other := all[rng.Intn(len(all))]
			if other == m.tip {
				other = all[0]
			}
			fork := w.eventOn([]plumbing.Hash{other}, names[rng.Intn(len(names))], hubrefs.RulesSet{Base: w.base(hubrefs.TypeRulesSet), Rules: json.RawMessage(`{}`)})
			all = append(all, fork)
			parents = []plumbing.Hash{m.tip, fork}
		}
		signer := names[rng.Intn(len(names))]
		if rng.Intn(2) == 0 { // a current admin, so that much is accepted
			var admins []string
			for n, mm := range m.members {
				if slices.Contains(mm.caps, trust.CapAdmin) {
					admins = append(admins, n)
				}
			}
			sort.Strings(admins)
			signer = admins[rng.Intn(len(admins))]
		}
		name := names[1+rng.Intn(len(names)-1)]
		typ := []string{hubrefs.TypeMemberAdded, hubrefs.TypeMemberChanged, hubrefs.TypeMemberRemoved}[rng.Intn(3)]
		var caps []string
		for _, c := range []string{trust.CapAdmin, trust.CapPR, trust.CapReview} {
			if rng.Intn(3) == 0 {
				caps = append(caps, c)
			}
		}
		sort.Strings(caps)
		var payload any = hubrefs.MemberAdded{Base: w.base(typ), Name: name, Key: keyOf(name), Caps: caps}
		if typ == hubrefs.TypeMemberRemoved {
			payload = hubrefs.MemberRemoved{Base: w.base(typ), Name: name}
		}
		id := w.eventOn(parents, signer, payload)
		all = append(all, id)
		old := m.tip
		v := Judge(Input{Objects: GoGitObjects(w.store), Refs: w.refs, Updates: []Update{up(hubrefs.TrustRef, old, id)}})[0]
		want := m.step(i, parents, id, keyOf(signer), typ, name, keyOf(name), caps)
		if v.Accepted() != want {
			t.Fatalf("step %d: %s by %s on %v: boundary says %q (%s), the model accepts=%v", i, typ, signer, parents, v.Code, v.Reason, want)
		}
		if v.Accepted() {
			w.refs[hubrefs.TrustRef] = id
			accepted++
		} else {
			refused++
		}
	}
	if accepted < steps/10 || refused < steps/10 {
		t.Fatalf("the generator is lopsided: %d accepted, %d refused", accepted, refused)
	}
	// A replica folds the stored log to the model's state.
	evs, err = hubrefs.ReadLog(w.store, w.refs[hubrefs.TrustRef], hubrefs.Ceilings{})
	if err != nil {
		t.Fatal(err)
	}
	if evs, err = hubrefs.CausalOrder(evs); err != nil {
		t.Fatal(err)
	}
	st, err := trust.Fold(evs)
	if err != nil {
		t.Fatalf("the stored log does not fold: %v", err)
	}
	if len(st.Members) != len(m.members) {
		t.Fatalf("replica has %v, model %v", st.MemberNames(), m.members)
	}
	for n, mm := range m.members {
		got, ok := st.Members[n]
		if !ok || got.KeyLine != mm.key || !slices.Equal(got.Caps, mm.caps) {
			t.Fatalf("member %s: replica %+v, model %+v", n, got, mm)
		}
		// Nobody removed regains a capability without a later grant by
		// an admin (the model records grants only from admins).
		for _, c := range mm.caps {
			if g, ok := m.granted[n][c]; !ok || g < m.removed[n] || g == m.removed[n] && g != 0 {
				t.Fatalf("member %s holds %s (granted at %d) after being removed at %d", n, c, g, m.removed[n])
			}
		}
	}
	if len(st.Skipped) != 0 {
		t.Fatal("a linear fold skipped an event")
	}
}

// TestQueueHookFoldAgree: generated queue events, valid and mutated (bad
// ids, wrong candidate parents, unknown and folded keys, unknown reasons),
// pushed one at a time through the boundary: whatever it accepts, the queue
// fold reads; and an event signed by a hub.queue holder on the tip that the
// fold reads without error, the boundary accepts.
func TestQueueHookFoldAgree(t *testing.T) {
	rng := rand.New(rand.NewSource(7))
	w := newWorld(t, "")
	qID := "01900000-0000-7000-8000-0000000000bb"
	qRef := hubrefs.QueueRefPrefix + qID
	w.event(qRef, "queuer", hubrefs.QueueOpened{Base: w.base(hubrefs.TypeQueueOpened), ID: qID, Target: main})
	c1 := w.commit(w.c0, "a.txt", "1\n")
	pick := func(xs ...string) string { return xs[rng.Intn(len(xs))] }
	oid := func() string {
		return pick(w.c0.String(), c1.String(), c1.String(), strings.ToUpper(c1.String()), "abc")
	}
	prID := func() string {
		return pick("01900000-0000-7000-8000-0000000000a1", "01900000-0000-7000-8000-0000000000a2", "01900000-0000-7000-8000-0000000000a2", "pr")
	}
	accepted, refused := 0, 0
	for i := 0; i < 120; i++ {
		typ := pick(hubrefs.TypeQueueEntered, hubrefs.TypeQueueCandidate, hubrefs.TypeQueueLeft, hubrefs.TypeQueueReset, hubrefs.TypeQueueClosed, hubrefs.TypeQueueOpened, hubrefs.TypeQueuePaused, hubrefs.TypeQueueResumed)
		p := map[string]any{"type": typ, "repo": repoID}
		switch typ {
		case hubrefs.TypeQueueOpened:
			p["id"], p["target"] = qID, main
		case hubrefs.TypeQueueEntered:
			p["pr"], p["head"], p["base"] = prID(), oid(), pick(main, "main")
			if rng.Intn(3) == 0 {
				p["priority"] = pick("high", "normal", "urgent")
			}
		case hubrefs.TypeQueueCandidate:
			head := oid()
			p["pr"], p["head"], p["step"], p["branch"] = prID(), head, oid(), pick("refs/heads/queue/main/x", "bad ref")
			switch rng.Intn(4) {
			case 0:
				p["parents"] = []string{oid(), oid()}
			case 1:
				p["parents"] = []string{oid()}
			default:
				p["parents"] = []string{oid(), head}
			}
		case hubrefs.TypeQueueLeft:
			p["pr"], p["head"], p["reason"] = prID(), oid(), pick("landed", "failed", "stale", "bored")
		case hubrefs.TypeQueueReset:
			p["tip"] = oid()
		case hubrefs.TypeQueuePaused:
			if rng.Intn(4) > 0 {
				p["reason"] = pick("incident 12", "", "two\nlines", "release freeze")
			}
		}
		body, _ := json.Marshal(p)
		switch rng.Intn(8) {
		case 0:
			body = []byte(strings.Replace(string(body), `"type"`, `"extra":1,"type"`, 1))
		case 1:
			body = []byte(strings.Replace(string(body), `"repo"`, `"repſ":"x","repo"`, 1))
		}
		signer := "queuer"
		if rng.Intn(10) == 0 {
			signer = "alice"
		}
		old := w.refs[qRef]
		id := w.craft([]plumbing.Hash{old}, signer, typ+"\n\n"+string(body)+"\n", true, false)
		v := Judge(Input{Objects: GoGitObjects(w.store), Refs: w.refs, Updates: []Update{up(qRef, old, id)}})[0]
		evs, err := hubrefs.ReadLog(w.store, id, hubrefs.Ceilings{})
		var foldErr error
		if err != nil {
			foldErr = err
		} else if evs, err = hubrefs.CausalOrder(evs); err != nil {
			foldErr = err
		} else {
			tevs, _ := hubrefs.CausalOrder(mustLog(t, w, w.refs[hubrefs.TrustRef]))
			st, _ := trust.Fold(tevs)
			_, foldErr = queue.Fold(evs, st)
		}
		if v.Accepted() && foldErr != nil {
			t.Fatalf("event %d (%s): the boundary accepted what the fold cannot read: %v\n%s", i, typ, foldErr, body)
		}
		if !v.Accepted() && foldErr == nil && signer == "queuer" {
			t.Fatalf("event %d (%s): the fold reads it but the boundary refused: %s %s\n%s", i, typ, v.Code, v.Reason, body)
		}
		if v.Accepted() {
			w.refs[qRef] = id
			accepted++
		} else {
			refused++
		}
	}
	if accepted < 10 || refused < 10 {
		t.Fatalf("the generator is lopsided: %d accepted, %d refused", accepted, refused)
	}
}

// TestPRHookFoldAgree: generated pull request events, valid and mutated
// (bad ids and verdicts, unknown and folded keys, forks), pushed one at a
// time through the boundary: whatever it accepts, the pull request fold
// reads.
func TestPRHookFoldAgree(t *testing.T) {
	rng := rand.New(rand.NewSource(11))
	w := newWorld(t, "")
	h1 := w.commit(w.c0, "a.txt", "1\n")
	h2 := w.commit(h1, "a.txt", "2\n")
	p := w.open(h1)
	pick := func(xs ...string) string { return xs[rng.Intn(len(xs))] }
	oid := func() string {
		return pick(h1.String(), h2.String(), w.c0.String(), strings.ToUpper(h2.String()), "abc")
	}
	var all []plumbing.Hash
	all = append(all, w.refs[p.ref])
	accepted, refused := 0, 0
	for i := 0; i < 80; i++ {
		typ := pick(hubrefs.TypePRUpdated, hubrefs.TypePRRetargeted, hubrefs.TypePRClosed, hubrefs.TypePRReopened, hubrefs.TypePRMerged,
			hubrefs.TypeReviewSubmit, hubrefs.TypeThreadOpened, hubrefs.TypeThreadResolved, hubrefs.TypeCheckCompleted, hubrefs.TypeCheckStarted,
			hubrefs.TypePRDraft, hubrefs.TypePRReady, hubrefs.TypeReviewDismiss, hubrefs.TypePRBypassed)
		m := map[string]any{"type": typ, "repo": repoID}
		signer := "alice"
		switch typ {
		case hubrefs.TypePRUpdated:
			m["head"] = oid()
		case hubrefs.TypePRRetargeted:
			m["base"] = pick(main, "refs/heads/dev", "main")
		case hubrefs.TypePRMerged:
			m["revision"], m["branch"], m["commit"] = oid(), pick(main, "refs/heads/dev"), oid()
			if tip := w.refs[hubrefs.TrustRef].String(); rng.Intn(6) != 0 {
				m["trust"] = pick(tip, tip, tip, h1.String(), "", "abc")
			}
			signer = "queuer"
		case hubrefs.TypeReviewSubmit:
			m["head"], m["base"], m["verdict"] = oid(), main, pick("approve", "changes", "comment", "lgtm")
			signer = "bob"
		case hubrefs.TypeThreadOpened, hubrefs.TypeThreadResolved:
			m["thread"] = pick("t1", "t2", "bad id")
			signer = pick("alice", "bob")
		case hubrefs.TypeCheckCompleted, hubrefs.TypeCheckStarted:
			m["name"], m["head"] = pick("ci", "lint"), oid()
			if typ == hubrefs.TypeCheckCompleted || rng.Intn(4) == 0 {
				m["conclusion"] = pick("success", "failure", "cancelled", "meh")
			}
			signer = "ci"
		case hubrefs.TypePRDraft, hubrefs.TypePRReady:
			signer = pick("alice", "alice", "bob")
		case hubrefs.TypePRBypassed:
			m["head"], m["base"], m["reason"] = oid(), pick(main, "refs/heads/dev"), pick("hotfix", "")
			signer = pick("admin", "bob")
		case hubrefs.TypeReviewDismiss:
			// An event of this log (maybe a changes request), or not.
			m["review"], m["reason"] = all[rng.Intn(len(all))].String(), pick("overruled", " ")
			signer = pick("admin", "admin", "bob")
		}
		body, _ := json.Marshal(m)
		switch rng.Intn(8) {
		case 0:
			body = []byte(strings.Replace(string(body), `"type"`, `"extra":1,"type"`, 1))
		case 1:
			body = []byte(strings.Replace(string(body), `"repo"`, `"repſ":"x","repo"`, 1))
		}
		parent := w.refs[p.ref]
		if rng.Intn(8) == 0 {
			parent = all[rng.Intn(len(all))]
		}
		if rng.Intn(10) == 0 {
			signer = "mallory"
		}
		old := w.refs[p.ref]
		id := w.craft([]plumbing.Hash{parent}, signer, typ+"\n\n"+string(body)+"\n", true, false)
		all = append(all, id)
		upd := []Update{up(p.ref, old, id)}
		if typ == hubrefs.TypePRMerged && rng.Intn(2) == 0 {
			upd = append(upd, up(main, w.refs[main], h2)) // landing and record together
		}
		v := Judge(Input{Objects: GoGitObjects(w.store), Refs: w.refs, Updates: upd})
		ok := true
		for _, x := range v {
			ok = ok && x.Accepted()
		}
		if !ok {
			refused++
			continue
		}
		accepted++
		for _, u := range upd {
			w.refs[u.Ref] = u.New
		}
		tevs, _ := hubrefs.CausalOrder(mustLog(t, w, w.refs[hubrefs.TrustRef]))
		st, err := trust.Fold(tevs)
		if err != nil {
			t.Fatal(err)
		}
		evs, err := hubrefs.CausalOrder(mustLog(t, w, id))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := pr.Fold(evs, st); err != nil {
			t.Fatalf("event %d (%s): the boundary accepted what the fold cannot read: %v\n%s", i, typ, err, body)
		}
	}
	if accepted < 8 || refused < 8 {
		t.Fatalf("the generator is lopsided: %d accepted, %d refused", accepted, refused)
	}
}
