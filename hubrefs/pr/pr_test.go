package pr

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"
	"golang.org/x/crypto/ssh"

	"github.com/gitplus/gitplus/fixtures"
	"github.com/gitplus/gitplus/hubrefs"
	"github.com/gitplus/gitplus/hubrefs/trust"
)

const (
	repoID = "0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b"
	prID   = "0190a1b2-c3d4-7e5f-8a9b-00000000beef"
	main   = "refs/heads/main"
	dev    = "refs/heads/dev"
)

var (
	h1 = strings.Repeat("1", 40)
	h2 = strings.Repeat("2", 40)
	h3 = strings.Repeat("3", 40)
	c1 = strings.Repeat("c", 40)
)

func newKey(t testing.TB) ssh.PublicKey { return fixtures.NewSSHSigner(t).PublicKey() }

type cast struct {
	alice, bob, carol, dave, ci, ci2, queue, outsider, bobOld ssh.PublicKey
	t                                                         *trust.State
}

// newCast: alice opens (hub.pr, hub.review), bob and carol review, dave is
// admin, ci and ci2 report "ci", queue runs the queue.
func newCast(t *testing.T) *cast {
	c := &cast{alice: newKey(t), bob: newKey(t), carol: newKey(t), dave: newKey(t), ci: newKey(t), ci2: newKey(t), queue: newKey(t), outsider: newKey(t), bobOld: newKey(t)}
	c.t = trustOf(
		&trust.Member{Name: "alice", Key: c.alice, Caps: []string{"hub.pr", "hub.review"}},
		&trust.Member{Name: "bob", Key: c.bob, Caps: []string{"hub.review"}},
		&trust.Member{Name: "carol", Key: c.carol, Caps: []string{"hub.pr", "hub.review"}},
		&trust.Member{Name: "dave", Key: c.dave, Caps: []string{"repo.admin"}},
		&trust.Member{Name: "ci", Key: c.ci, Caps: []string{"hub.check:ci"}},
		&trust.Member{Name: "ci2", Key: c.ci2, Caps: []string{"hub.check:ci", "hub.check:lint"}},
		&trust.Member{Name: "queue", Key: c.queue, Caps: []string{"hub.queue"}},
	)
	return c
}

func trustOf(ms ...*trust.Member) *trust.State {
	s := &trust.State{RepoID: repoID, Members: map[string]*trust.Member{}, Rules: trust.DefaultRules()}
	for _, m := range ms {
		s.Members[m.Name] = m
	}
	return s
}

// without returns t minus the named members.
func without(t *trust.State, names ...string) *trust.State {
	c := t.Clone()
	for _, n := range names {
		delete(c.Members, n)
	}
	return c
}

func id(name string) plumbing.Hash { return plumbing.ComputeHash(plumbing.CommitObject, []byte(name)) }

// ev builds event name with parents (space-separated names; "" for none).
func ev(name, parents string, signer ssh.PublicKey, typ string, fields ...any) hubrefs.Event {
	p := map[string]any{"type": typ, "repo": repoID}
	for i := 0; i+1 < len(fields); i += 2 {
		p[fields[i].(string)] = fields[i+1]
	}
	raw, _ := json.Marshal(p)
	e := hubrefs.Event{ID: id(name), Type: typ, Repo: repoID, Payload: raw, Signer: signer}
	for _, pn := range strings.Fields(parents) {
		e.Parents = append(e.Parents, id(pn))
	}
	return e
}

func opened(c *cast) hubrefs.Event {
	return ev("o", "", c.alice, hubrefs.TypePROpened, "id", prID, "base", main, "head", h1, "title", "Add x")
}

// chain links events linearly after the root: each one's parent is the one
// before it (their given parents are replaced).
func chain(evs ...hubrefs.Event) []hubrefs.Event {
	for i := 1; i < len(evs); i++ {
		evs[i].Parents = []plumbing.Hash{evs[i-1].ID}
	}
	return evs
}

func review(name string, k ssh.PublicKey, head, base, verdict string) hubrefs.Event {
	return ev(name, "", k, hubrefs.TypeReviewSubmit, "head", head, "base", base, "verdict", verdict)
}

func check(name string, k ssh.PublicKey, check, rev, conclusion string) hubrefs.Event {
	return ev(name, "", k, hubrefs.TypeCheckCompleted, "name", check, "head", rev, "conclusion", conclusion)
}

func TestApprovals(t *testing.T) {
	c := newCast(t)
	tests := []struct {
		name  string
		evs   []hubrefs.Event
		trust *trust.State
		want  []string
	}{
		{"approval of the current head and base", []hubrefs.Event{review("r", c.bob, h1, main, Approve)}, c.t, []string{"bob"}},
		{"self-approval excluded", []hubrefs.Event{review("r", c.alice, h1, main, Approve)}, c.t, []string{}},
		{"head move stales", []hubrefs.Event{review("r", c.bob, h1, main, Approve), ev("u", "", c.alice, hubrefs.TypePRUpdated, "head", h2)}, c.t, []string{}},
		{"retarget stales", []hubrefs.Event{review("r", c.bob, h1, main, Approve), ev("u", "", c.alice, hubrefs.TypePRRetargeted, "base", dev)}, c.t, []string{}},
		{"head moved back: the approval of that head counts again", []hubrefs.Event{review("r", c.bob, h1, main, Approve), ev("u", "", c.alice, hubrefs.TypePRUpdated, "head", h2), ev("u2", "", c.alice, hubrefs.TypePRUpdated, "head", h1)}, c.t, []string{"bob"}},
		{"re-approval after a move", []hubrefs.Event{review("r", c.bob, h1, main, Approve), ev("u", "", c.alice, hubrefs.TypePRUpdated, "head", h2), review("r2", c.bob, h2, main, Approve)}, c.t, []string{"bob"}},
		{"changes after approve withdraws", []hubrefs.Event{review("r", c.bob, h1, main, Approve), review("r2", c.bob, h1, main, Changes)}, c.t, []string{}},
		{"approve after changes grants", []hubrefs.Event{review("r", c.bob, h1, main, Changes), review("r2", c.bob, h1, main, Approve)}, c.t, []string{"bob"}},
		{"a comment neither grants nor withdraws", []hubrefs.Event{review("r", c.bob, h1, main, Approve), review("r2", c.bob, h1, main, Comment), review("r3", c.carol, h1, main, Comment)}, c.t, []string{"bob"}},
		{"latest verdict names an old head", []hubrefs.Event{ev("u", "", c.alice, hubrefs.TypePRUpdated, "head", h2), review("r", c.bob, h2, main, Approve), review("r2", c.bob, h1, main, Approve)}, c.t, []string{}},
		{"approval for another base", []hubrefs.Event{review("r", c.bob, h1, dev, Approve)}, c.t, []string{}},
		{"removed member stops counting", []hubrefs.Event{review("r", c.bob, h1, main, Approve), review("r2", c.carol, h1, main, Approve)}, without(c.t, "bob"), []string{"carol"}},
		{"member who lost hub.review stops counting", []hubrefs.Event{review("r", c.bob, h1, main, Approve)}, trustOf(&trust.Member{Name: "bob", Key: c.bob, Caps: []string{"hub.pr"}}, &trust.Member{Name: "alice", Key: c.alice, Caps: []string{"hub.pr"}}), []string{}},
		{"a rotated-out key counts for nobody", []hubrefs.Event{review("r", c.bobOld, h1, main, Approve)}, c.t, []string{}},
		{"distinct members, sorted", []hubrefs.Event{review("r", c.carol, h1, main, Approve), review("r2", c.bob, h1, main, Approve), review("r3", c.bob, h1, main, Approve)}, c.t, []string{"bob", "carol"}},
		{"repo.admin implies hub.review", []hubrefs.Event{review("r", c.dave, h1, main, Approve)}, c.t, []string{"dave"}},
		{"opener excluded by name after a key change", []hubrefs.Event{review("r", c.carol, h1, main, Approve)}, trustOf(&trust.Member{Name: "alice", Key: c.alice, Caps: []string{"hub.pr", "hub.review"}}, &trust.Member{Name: "carol", Key: c.carol, Caps: []string{"hub.review"}}), []string{"carol"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := Fold(chain(append([]hubrefs.Event{opened(c)}, tt.evs...)...), tt.trust)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(s.Approvals, tt.want) {
				t.Errorf("approvals %v, want %v", s.Approvals, tt.want)
			}
			ok, reasons := s.Satisfies(trust.Branch{RequiredApprovals: len(tt.want)}, s.Head)
			if !ok {
				t.Errorf("Satisfies with %d approvals required: %v", len(tt.want), reasons)
			}
			if ok, _ := s.Satisfies(trust.Branch{RequiredApprovals: len(tt.want) + 1}, s.Head); ok {
				t.Errorf("Satisfies with %d approvals required: ok", len(tt.want)+1)
			}
		})
	}
}

func TestChecks(t *testing.T) {
	c := newCast(t)
	type q struct {
		name, rev, want string
		ok              bool
	}
	tests := []struct {
		name  string
		evs   []hubrefs.Event
		trust *trust.State
		qs    []q
	}{
		{"re-run after failure wins", []hubrefs.Event{check("a", c.ci, "ci", c1, Failure), ev("s", "", c.ci, hubrefs.TypeCheckStarted, "name", "ci", "head", c1), check("b", c.ci, "ci", c1, Success)}, c.t,
			[]q{{"ci", c1, Success, true}}},
		{"a later failure wins", []hubrefs.Event{check("a", c.ci, "ci", c1, Success), check("b", c.ci2, "ci", c1, Failure)}, c.t,
			[]q{{"ci", c1, Failure, true}}},
		{"check.started alone records nothing", []hubrefs.Event{ev("s", "", c.ci, hubrefs.TypeCheckStarted, "name", "ci", "head", c1)}, c.t,
			[]q{{"ci", c1, "", false}}},
		{"per revision and per name", []hubrefs.Event{check("a", c.ci, "ci", c1, Success), check("b", c.ci, "ci", h1, Failure), check("c", c.ci2, "lint", c1, Cancelled)}, c.t,
			[]q{{"ci", c1, Success, true}, {"ci", h1, Failure, true}, {"lint", c1, Cancelled, true}, {"lint", h1, "", false}}},
		{"signer without hub.check:<name> is ignored", []hubrefs.Event{check("a", c.ci, "lint", c1, Success), check("b", c.bob, "ci", c1, Success)}, c.t,
			[]q{{"lint", c1, "", false}, {"ci", c1, "", false}}},
		{"removed CI key stops counting; the result it overwrote returns", []hubrefs.Event{check("a", c.ci2, "ci", c1, Success), check("b", c.ci, "ci", c1, Failure)}, without(c.t, "ci"),
			[]q{{"ci", c1, Success, true}}},
		{"removed CI key's only result vanishes", []hubrefs.Event{check("a", c.ci, "ci", c1, Success)}, without(c.t, "ci"),
			[]q{{"ci", c1, "", false}}},
		{"repo.admin implies every check", []hubrefs.Event{check("a", c.dave, "anything", c1, Success)}, c.t,
			[]q{{"anything", c1, Success, true}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := Fold(chain(append([]hubrefs.Event{opened(c)}, tt.evs...)...), tt.trust)
			if err != nil {
				t.Fatal(err)
			}
			for _, q := range tt.qs {
				got, ok := s.Check(q.name, q.rev)
				if got != q.want || ok != q.ok {
					t.Errorf("Check(%s, %.7s) = %q, %v; want %q, %v", q.name, q.rev, got, ok, q.want, q.ok)
				}
				if ok {
					if at := s.ChecksAt(q.rev); at[q.name] != q.want {
						t.Errorf("ChecksAt(%.7s)[%s] = %q", q.rev, q.name, at[q.name])
					}
				}
				v := s.ChecksOn(trust.Branch{RequiredChecks: []string{q.name}}, q.rev)
				if v.Green() != (q.want == Success) || len(v.Passed)+len(v.Failed)+len(v.Missing) != 1 || (len(v.Failed) == 1) != (q.want == Failure) {
					t.Errorf("ChecksOn(%s, %.7s) = %+v", q.name, q.rev, v)
				}
			}
		})
	}
}

func TestChecksOnRequiredOrder(t *testing.T) {
	c := newCast(t)
	s, err := Fold(chain(opened(c), check("a", c.ci, "ci", c1, Success), check("b", c.ci2, "lint", c1, Failure), check("d", c.ci2, "lint", h2, Cancelled)), c.t)
	if err != nil {
		t.Fatal(err)
	}
	v := s.ChecksOn(trust.Branch{RequiredChecks: []string{"lint", "ci", "e2e"}}, c1)
	if v.Green() || !reflect.DeepEqual(v.Failed, []string{"lint"}) || !reflect.DeepEqual(v.Missing, []string{"e2e"}) || !reflect.DeepEqual(v.Passed, []string{"ci"}) {
		t.Errorf("ChecksOn = %+v", v)
	}
	// Cancelled is not a conclusion the rule counts: the check is missing.
	if v := s.ChecksOn(trust.Branch{RequiredChecks: []string{"lint"}}, h2); v.Green() || !reflect.DeepEqual(v.Missing, []string{"lint"}) {
		t.Errorf("cancelled: %+v", v)
	}
	if v := s.ChecksOn(trust.Branch{}, c1); !v.Green() {
		t.Errorf("no required checks: %+v", v)
	}
}

// A pull request log is linear (docs/trust.md): two reviews written on the
// same event (a fork), and their join, are refused whatever their order.
func TestFoldRefusesForks(t *testing.T) {
	c := newCast(t)
	a := review("a", c.bob, h1, main, Approve)
	a.Parents = []plumbing.Hash{id("o")}
	b := review("b", c.bob, h1, main, Changes)
	b.Parents = []plumbing.Hash{id("o")}
	j := ev("j", "a b", c.carol, hubrefs.TypeThreadOpened, "thread", "t1")
	for _, order := range [][]hubrefs.Event{
		{opened(c), a, b},
		{opened(c), b, a},
		{opened(c), a, j},
	} {
		if _, err := Fold(order, c.t); !errors.Is(err, hubrefs.ErrNotLinear) || !errors.Is(err, ErrOrder) {
			t.Errorf("order %s, %s: err = %v, want a refused fork", order[1].ID, order[2].ID, err)
		}
	}
}

func TestFoldStructure(t *testing.T) {
	c := newCast(t)
	s, err := Fold(chain(
		opened(c),
		ev("u", "", c.alice, hubrefs.TypePRUpdated, "head", h2),
		ev("t", "", c.bob, hubrefs.TypeThreadOpened, "thread", "t1"),
		ev("t2", "", c.bob, hubrefs.TypeThreadOpened, "thread", "t2"),
		ev("tr", "", c.alice, hubrefs.TypeThreadResolved, "thread", "t1"),
		ev("cl", "", c.alice, hubrefs.TypePRClosed),
		ev("ro", "", c.dave, hubrefs.TypePRReopened),
		ev("m", "", c.queue, hubrefs.TypePRMerged, "revision", h2, "branch", main, "commit", c1),
		ev("ro2", "", c.alice, hubrefs.TypePRReopened), // concurrent in real life; never undoes merged
	), without(c.t, "alice")) // the opener has left: structural events still apply
	if err != nil {
		t.Fatal(err)
	}
	want := MergedRecord{Event: id("m"), Revision: h2, Branch: main, Commit: c1}
	if s.ID != prID || s.State != Merged || s.Head != h2 || s.Base != main || s.Title != "Add x" || s.UnresolvedThreads != 1 ||
		!reflect.DeepEqual(s.Heads, []string{h1, h2}) || !reflect.DeepEqual(s.Merged, []MergedRecord{want}) || s.Opener.Name != "" || s.Tip != id("ro2") {
		t.Errorf("state %+v", s)
	}

	bad := func(e hubrefs.Event, f func(*hubrefs.Event)) hubrefs.Event { f(&e); return e }
	errs := []struct {
		name string
		evs  []hubrefs.Event
		want error
	}{
		{"root not pr.opened", []hubrefs.Event{review("r", c.bob, h1, main, Approve)}, ErrOrder},
		{"pr.opened again", chain(opened(c), bad(opened(c), func(e *hubrefs.Event) { e.ID = id("o2") })), ErrOrder},
		{"parent missing", []hubrefs.Event{opened(c), ev("r", "zz", c.bob, hubrefs.TypePRClosed)}, ErrOrder},
		{"second root", []hubrefs.Event{opened(c), ev("r", "", c.bob, hubrefs.TypePRClosed)}, ErrOrder},
		{"malformed stored payload", chain(opened(c), review("r", c.bob, h1, main, "lgtm")), ErrMalformed},
		{"other repository", chain(opened(c), bad(review("r", c.bob, h1, main, Approve), func(e *hubrefs.Event) {
			e.Payload = []byte(strings.Replace(string(e.Payload), repoID, prID, 1))
			e.Repo = prID
		})), ErrRepoMismatch},
		{"queue event in a pull request", chain(opened(c), ev("q", "", c.queue, hubrefs.TypeQueueEntered, "pr", prID)), ErrUnknownType},
	}
	for _, tt := range errs {
		_, err := Fold(tt.evs, c.t)
		var ee *EventError
		if !errors.Is(err, tt.want) || !errors.As(err, &ee) || !strings.Contains(err.Error(), ee.ID.String()) {
			t.Errorf("%s: err = %v, want %v naming the event", tt.name, err, tt.want)
		}
	}
}

func TestSatisfiesReasons(t *testing.T) {
	c := newCast(t)
	base := []hubrefs.Event{opened(c), review("r", c.bob, h1, main, Approve), ev("t", "", c.bob, hubrefs.TypeThreadOpened, "thread", "t1")}
	tests := []struct {
		name    string
		extra   []hubrefs.Event
		branch  trust.Branch
		rev     string
		reasons []string // substrings, one per reason
	}{
		{"ok", nil, trust.Branch{RequiredApprovals: 1}, h1, nil},
		{"threads required", nil, trust.Branch{RequiredApprovals: 1, RequireResolvedThreads: true}, h1, []string{"1 unresolved"}},
		{"threads resolved", []hubrefs.Event{ev("tr", "", c.alice, hubrefs.TypeThreadResolved, "thread", "t1")}, trust.Branch{RequiredApprovals: 1, RequireResolvedThreads: true}, h1, nil},
		{"not the head", nil, trust.Branch{RequiredApprovals: 1}, h2, []string{"not the head", "0 of 1"}},
		{"closed", []hubrefs.Event{ev("cl", "", c.alice, hubrefs.TypePRClosed)}, trust.Branch{}, h1, []string{"is closed"}},
		{"two needed", nil, trust.Branch{RequiredApprovals: 2}, h1, []string{"1 of 2"}},
	}
	for _, tt := range tests {
		s, err := Fold(chain(append(append([]hubrefs.Event{}, base...), tt.extra...)...), c.t)
		if err != nil {
			t.Fatal(err)
		}
		ok, reasons := s.Satisfies(tt.branch, tt.rev)
		if ok != (len(tt.reasons) == 0) || len(reasons) != len(tt.reasons) {
			t.Errorf("%s: %v %q", tt.name, ok, reasons)
			continue
		}
		for i := range reasons {
			if !strings.Contains(reasons[i], tt.reasons[i]) {
				t.Errorf("%s: reason %q lacks %q", tt.name, reasons[i], tt.reasons[i])
			}
		}
	}
}

func TestAuthorize(t *testing.T) {
	c := newCast(t)
	foldOf := func(evs ...hubrefs.Event) *State {
		s, err := Fold(chain(append([]hubrefs.Event{opened(c)}, evs...)...), c.t)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	open := foldOf()
	closed := foldOf(ev("cl", "", c.alice, hubrefs.TypePRClosed))
	merged := foldOf(ev("u", "", c.alice, hubrefs.TypePRUpdated, "head", h2), ev("m", "", c.queue, hubrefs.TypePRMerged, "revision", h1, "branch", main, "commit", c1))
	threaded := foldOf(ev("t", "", c.bob, hubrefs.TypeThreadOpened, "thread", "t1"), ev("tr", "", c.bob, hubrefs.TypeThreadResolved, "thread", "t1"))
	root := func(k ssh.PublicKey, fields ...any) hubrefs.Event {
		f := []any{"id", prID, "base", main, "head", h1, "title", "Add x"}
		for i := 0; i < len(fields); i += 2 {
			for j := 0; j < len(f); j += 2 {
				if f[j] == fields[i] {
					f[j+1] = fields[i+1]
				}
			}
		}
		return ev("o", "", k, hubrefs.TypePROpened, f...)
	}
	next := func(e hubrefs.Event) hubrefs.Event { e.Parents = []plumbing.Hash{id("o")}; return e }
	unsigned := next(ev("x", "", nil, hubrefs.TypePRClosed))
	tests := []struct {
		name   string
		ev     hubrefs.Event
		before *State
		want   error
	}{
		{"open by hub.pr", root(c.alice), nil, nil},
		{"open without hub.pr", root(c.bob), nil, ErrUnauthorized},
		{"open by a non-member", root(c.outsider), nil, ErrUnauthorized},
		{"open unsigned", root(nil), nil, ErrUnsigned},
		{"open with a non-UUID id", root(c.alice, "id", "42"), nil, ErrMalformed},
		{"open on a short base", root(c.alice, "base", "main"), nil, ErrMalformed},
		{"open on a tag", root(c.alice, "base", "refs/tags/v1"), nil, ErrMalformed},
		{"open with an upper-case head", root(c.alice, "head", strings.Repeat("A", 40)), nil, ErrMalformed},
		{"open with a short head", root(c.alice, "head", "abc"), nil, ErrMalformed},
		{"open with an empty title", root(c.alice, "title", " "), nil, ErrMalformed},
		{"open with ESC in the title", root(c.alice, "title", "ok\x1b[2K"), nil, ErrMalformed},
		{"open with CR in the title", root(c.alice, "title", "fail\rpass"), nil, ErrMalformed},
		{"open with a tab in the title", root(c.alice, "title", "a\tb"), nil, ErrMalformed},
		{"open with DEL in the title", root(c.alice, "title", "a\x7f"), nil, ErrMalformed},
		{"open with a C1 control in the title", root(c.alice, "title", "a\u009b2J"), nil, ErrMalformed},
		{"open with a right-to-left override in the title", root(c.alice, "title", "a\u202eb"), nil, ErrMalformed},
		{"open with a backslash and emoji in the title", root(c.alice, "title", `fix C:\dir \x1b 🚀 é`), nil, nil},
		{"open twice", next(root(c.alice)), open, ErrOrder},
		{"no root yet", next(ev("x", "", c.alice, hubrefs.TypePRClosed)), nil, ErrOrder},
		{"update by the opener", next(ev("x", "", c.alice, hubrefs.TypePRUpdated, "head", h2)), open, nil},
		{"update by an admin", next(ev("x", "", c.dave, hubrefs.TypePRUpdated, "head", h2)), open, nil},
		{"update by another hub.pr holder", next(ev("x", "", c.carol, hubrefs.TypePRUpdated, "head", h2)), open, ErrUnauthorized},
		{"update to the same head", next(ev("x", "", c.alice, hubrefs.TypePRUpdated, "head", h1)), open, ErrState},
		{"update when closed", next(ev("x", "", c.alice, hubrefs.TypePRUpdated, "head", h2)), closed, ErrState},
		{"retarget", next(ev("x", "", c.alice, hubrefs.TypePRRetargeted, "base", dev)), open, nil},
		{"retarget to the same base", next(ev("x", "", c.alice, hubrefs.TypePRRetargeted, "base", main)), open, ErrState},
		{"close", next(ev("x", "", c.alice, hubrefs.TypePRClosed)), open, nil},
		{"close by a reviewer", next(ev("x", "", c.bob, hubrefs.TypePRClosed)), open, ErrUnauthorized},
		{"close unsigned", unsigned, open, ErrUnsigned},
		{"close twice", next(ev("x", "", c.alice, hubrefs.TypePRClosed)), closed, ErrState},
		{"reopen", next(ev("x", "", c.alice, hubrefs.TypePRReopened)), closed, nil},
		{"reopen when open", next(ev("x", "", c.alice, hubrefs.TypePRReopened)), open, ErrState},
		{"reopen after merge", next(ev("x", "", c.dave, hubrefs.TypePRReopened)), merged, ErrState},
		{"close after merge", next(ev("x", "", c.dave, hubrefs.TypePRClosed)), merged, ErrState},
		{"review", next(review("x", c.bob, h1, main, Approve)), open, nil},
		{"review of a merged pull request", next(review("x", c.bob, h1, main, Comment)), merged, nil},
		{"review with an unknown verdict", next(review("x", c.bob, h1, main, "lgtm")), open, ErrMalformed},
		{"review without hub.review", next(review("x", c.queue, h1, main, Approve)), open, ErrUnauthorized},
		{"self-approval", next(review("x", c.alice, h1, main, Approve)), open, ErrUnauthorized},
		{"opener's comment", next(review("x", c.alice, h1, main, Comment)), open, nil},
		{"thread by a reviewer", next(ev("x", "", c.bob, hubrefs.TypeThreadOpened, "thread", "t2")), threaded, nil},
		{"thread by hub.pr", next(ev("x", "", c.carol, hubrefs.TypeThreadOpened, "thread", "t2")), threaded, nil},
		{"thread by CI", next(ev("x", "", c.ci, hubrefs.TypeThreadOpened, "thread", "t2")), threaded, ErrUnauthorized},
		{"thread id reused", next(ev("x", "", c.bob, hubrefs.TypeThreadOpened, "thread", "t1")), threaded, ErrState},
		{"bad thread id", next(ev("x", "", c.bob, hubrefs.TypeThreadOpened, "thread", "a b")), threaded, ErrMalformed},
		{"resolve unknown thread", next(ev("x", "", c.bob, hubrefs.TypeThreadResolved, "thread", "t9")), threaded, ErrState},
		{"resolve twice", next(ev("x", "", c.bob, hubrefs.TypeThreadResolved, "thread", "t1")), threaded, ErrState},
		{"check by its holder", next(check("x", c.ci, "ci", c1, Success)), open, nil},
		{"check of another name", next(check("x", c.ci, "lint", c1, Success)), open, ErrUnauthorized},
		{"check with a bad conclusion", next(check("x", c.ci, "ci", c1, "passed")), open, ErrMalformed},
		{"check with no conclusion", next(check("x", c.ci, "ci", c1, "")), open, ErrMalformed},
		{"check.started with a conclusion", next(ev("x", "", c.ci, hubrefs.TypeCheckStarted, "name", "ci", "head", c1, "conclusion", Success)), open, ErrMalformed},
		{"check.started", next(ev("x", "", c.ci, hubrefs.TypeCheckStarted, "name", "ci", "head", c1)), open, nil},
		{"check on a merged pull request", next(check("x", c.ci, "ci", c1, Success)), merged, nil},
		{"merged by the queue", next(ev("x", "", c.queue, hubrefs.TypePRMerged, "revision", h1, "branch", main, "commit", c1)), open, nil},
		{"merged names an old head", next(ev("x", "", c.queue, hubrefs.TypePRMerged, "revision", h1, "branch", main, "commit", c1)), foldOf(ev("u", "", c.alice, hubrefs.TypePRUpdated, "head", h2)), nil},
		{"merged names a head never proposed", next(ev("x", "", c.queue, hubrefs.TypePRMerged, "revision", h3, "branch", main, "commit", c1)), open, ErrState},
		{"merged by hub.pr only", next(ev("x", "", c.carol, hubrefs.TypePRMerged, "revision", h1, "branch", main, "commit", c1)), open, ErrUnauthorized},
		{"merged twice", next(ev("x", "", c.queue, hubrefs.TypePRMerged, "revision", h1, "branch", main, "commit", c1)), merged, ErrState},
		{"merged with a bad branch", next(ev("x", "", c.queue, hubrefs.TypePRMerged, "revision", h1, "branch", "main", "commit", c1)), open, ErrMalformed},
		{"unknown type", next(ev("x", "", c.queue, hubrefs.TypeQueueLeft)), open, ErrUnknownType},
		{"other repository", func() hubrefs.Event {
			e := next(ev("x", "", c.alice, hubrefs.TypePRClosed))
			e.Payload = []byte(strings.Replace(string(e.Payload), repoID, prID, 1))
			e.Repo = ""
			return e
		}(), open, ErrRepoMismatch},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := Authorize(tt.ev, tt.before, c.t)
			if tt.want == nil {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			var ee *EventError
			if !errors.Is(err, tt.want) || !errors.As(err, &ee) || ee.ID != tt.ev.ID {
				t.Fatalf("err = %v, want %v naming the event", err, tt.want)
			}
		})
	}
}

func FuzzPayload(f *testing.F) {
	types := []string{
		hubrefs.TypePROpened, hubrefs.TypePRUpdated, hubrefs.TypePRRetargeted, hubrefs.TypePRClosed, hubrefs.TypePRReopened,
		hubrefs.TypePRMerged, hubrefs.TypeReviewSubmit, hubrefs.TypeThreadOpened, hubrefs.TypeThreadResolved,
		hubrefs.TypeCheckStarted, hubrefs.TypeCheckCompleted, "queue.left", "",
	}
	f.Add(uint8(0), []byte(`{"type":"pr.opened","repo":"`+repoID+`","id":"`+prID+`","base":"refs/heads/main","head":"`+h1+`","title":"x"}`))
	f.Add(uint8(6), []byte(`{"type":"review.submitted","repo":"`+repoID+`","head":"`+h1+`","base":"refs/heads/main","verdict":"approve"}`))
	f.Add(uint8(10), []byte(`{"type":"check.completed","repo":"`+repoID+`","name":"ci","head":"`+h1+`","conclusion":"success"}`))
	f.Add(uint8(10), []byte(`{"type":"check.completed","repo":"`+repoID+`","name":"ci","head":"`+h1+`","conclusion":"success","sandbox":"landlock-7"}`))
	f.Add(uint8(9), []byte(`{"type":"check.started","repo":"`+repoID+`","name":"ci","head":"`+h1+`","sandbox":"env-only"}`))
	f.Add(uint8(5), []byte(`{"type":"pr.merged","repo":"`+repoID+`","revision":"`+h1+`","branch":"refs/heads/main","commit":"`+c1+`"}`))
	f.Add(uint8(5), []byte(`{"type":"pr.merged","repo":"`+repoID+`","revision":"`+h1+`","branch":"refs/heads/main","commit":"`+c1+`","trust":"`+h1+`"}`))
	f.Add(uint8(5), []byte(`{"type":"pr.merged","repo":"`+repoID+`","revision":"`+h1+`","branch":"refs/heads/main","commit":"`+c1+`","trust":"x"}`))
	f.Add(uint8(7), []byte(`{"type":"thread.opened","repo":"x","thread":"t1","extra":[1,{}]}`))
	f.Fuzz(func(t *testing.T, which uint8, data []byte) {
		typ := types[int(which)%len(types)]
		e := hubrefs.Event{ID: id("x"), Type: typ, Payload: data}
		p, err := decode(e, "")
		if err != nil {
			if !errors.Is(err, ErrMalformed) && !errors.Is(err, ErrUnknownType) && !errors.Is(err, ErrRepoMismatch) {
				t.Fatalf("unclassified error: %v", err)
			}
			return
		}
		for _, oid := range []string{p.head, p.revision, p.commit, p.trust} {
			if oid != "" && ValidOID(oid) != nil {
				t.Fatalf("accepted bad oid %q", oid)
			}
		}
		switch typ {
		case hubrefs.TypeReviewSubmit:
			if p.verdict != Approve && p.verdict != Changes && p.verdict != Comment {
				t.Fatalf("accepted verdict %q", p.verdict)
			}
		case hubrefs.TypeCheckCompleted:
			if p.conclusion != Success && p.conclusion != Failure && p.conclusion != Cancelled {
				t.Fatalf("accepted conclusion %q", p.conclusion)
			}
			if p.sandbox != "" && ValidSandbox(p.sandbox) != nil {
				t.Fatalf("accepted sandbox %q", p.sandbox)
			}
		case hubrefs.TypeCheckStarted:
			if p.sandbox != "" {
				t.Fatalf("check.started accepted sandbox %q", p.sandbox)
			}
		case hubrefs.TypePROpened:
			if trust.ValidUUID(p.id) != nil || trust.ValidBranch(p.base) != nil {
				t.Fatalf("accepted id %q base %q", p.id, p.base)
			}
		}
		// What decodes on its own folds, as a root or after one.
		var b hubrefs.Base
		_ = json.Unmarshal(data, &b)
		tr := &trust.State{RepoID: b.Repo, Members: map[string]*trust.Member{}}
		evs := []hubrefs.Event{e}
		if typ != hubrefs.TypePROpened {
			root := hubrefs.Event{ID: id("o"), Type: hubrefs.TypePROpened}
			root.Payload, _ = json.Marshal(hubrefs.PROpened{Base: hubrefs.Base{Type: root.Type, Repo: b.Repo}, ID: prID, BaseRef: main, Head: h1, Title: "t"})
			e.Parents = []plumbing.Hash{root.ID}
			evs = []hubrefs.Event{root, e}
		}
		if _, err := Fold(evs, tr); err != nil {
			t.Fatalf("decoded but did not fold: %v", err)
		}
	})
}
