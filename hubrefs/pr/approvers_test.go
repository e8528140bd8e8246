package pr

import (
	"errors"
	"reflect"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"
	"golang.org/x/crypto/ssh"

	"github.com/gitplus/gitplus/hubrefs"
	"github.com/gitplus/gitplus/hubrefs/trust"
)

// withTeams returns t with teams set.
func withTeams(t *trust.State, teams map[string][]string) *trust.State {
	c := t.Clone()
	c.Teams = teams
	return c
}

// withCaps returns t with member name holding caps.
func withCaps(t *trust.State, name string, caps ...string) *trust.State {
	c := t.Clone()
	m := *c.Members[name]
	m.Caps = caps
	c.Members[name] = trust.NewMember(m.Name, m.Key, m.KeyLine, m.Caps)
	return c
}

func dismiss(name string, k ssh.PublicKey, review string) hubrefs.Event {
	return ev(name, "", k, hubrefs.TypeReviewDismiss, "review", id(review).String(), "reason", "stale objection")
}

// TestReviewAtWhoCountsVetoDraft: the one review rule with approvers
// (members and teams, as the trust state given to the fold has them),
// blockOnChangesRequested and drafts.
func TestReviewAtWhoCountsVetoDraft(t *testing.T) {
	c := newCast(t)
	teams := withTeams(c.t, map[string][]string{"docs": {"carol"}, "empty": {}})
	bypass := withCaps(teams, "dave", "repo.admin") // admin implies hub.bypass
	b := func(approvers []string, required int, veto bool) trust.Branch {
		br := trust.DefaultBranch()
		br.Approvers, br.RequiredApprovals, br.BlockOnChangesRequested = approvers, required, veto
		return br
	}
	bob := review("rb", c.bob, h1, main, Approve)
	carol := review("rc", c.carol, h1, main, Approve)
	bobNo := review("rb2", c.bob, h1, main, Changes)
	tests := []struct {
		name   string
		evs    []hubrefs.Event
		trust  *trust.State
		branch trust.Branch
		ok     bool
		count  int
		vetoes []string
		draft  bool
	}{
		{"no approvers: any reviewer", []hubrefs.Event{bob}, teams, b(nil, 1, false), true, 1, nil, false},
		{"named member counts", []hubrefs.Event{bob}, teams, b([]string{"bob"}, 1, false), true, 1, nil, false},
		{"other member does not", []hubrefs.Event{bob}, teams, b([]string{"carol"}, 1, false), false, 0, nil, false},
		{"team member counts", []hubrefs.Event{bob, carol}, teams, b([]string{"team:docs"}, 1, false), true, 1, nil, false},
		{"team of two needed, one in it", []hubrefs.Event{bob, carol}, teams, b([]string{"team:docs"}, 2, false), false, 1, nil, false},
		{"team and member", []hubrefs.Event{bob, carol}, teams, b([]string{"team:docs", "bob"}, 2, false), true, 2, nil, false},
		{"empty team counts nobody", []hubrefs.Event{bob, carol}, teams, b([]string{"team:empty"}, 1, false), false, 0, nil, false},
		{"team changed after the approval: judged as it stands", []hubrefs.Event{carol}, withTeams(c.t, map[string][]string{"docs": {"bob"}}), b([]string{"team:docs"}, 1, false), false, 0, nil, false},
		{"team joined after the approval counts", []hubrefs.Event{bob}, withTeams(c.t, map[string][]string{"docs": {"bob"}}), b([]string{"team:docs"}, 1, false), true, 1, nil, false},
		{"changes without the veto rule: just no approval", []hubrefs.Event{carol, bobNo}, teams, b(nil, 1, false), true, 1, nil, false},
		{"veto blocks", []hubrefs.Event{carol, bobNo}, teams, b(nil, 1, true), false, 1, []string{"bob"}, false},
		{"veto blocks at any head", []hubrefs.Event{carol, bobNo, ev("u", "", c.alice, hubrefs.TypePRUpdated, "head", h2), review("rc2", c.carol, h2, main, Approve)}, teams, b(nil, 1, true), false, 1, []string{"bob"}, false},
		{"a comment does not lift the veto", []hubrefs.Event{carol, bobNo, review("rb3", c.bob, h1, main, Comment)}, teams, b(nil, 1, true), false, 1, []string{"bob"}, false},
		{"reviewing again lifts it", []hubrefs.Event{carol, bobNo, review("rb3", c.bob, h1, main, Approve)}, teams, b(nil, 1, true), true, 2, nil, false},
		{"dismissal lifts it", []hubrefs.Event{carol, bobNo, dismiss("d", c.dave, "rb2")}, bypass, b(nil, 1, true), true, 1, nil, false},
		{"dismissal by one who lost hub.bypass does not", []hubrefs.Event{carol, bobNo, dismiss("d", c.dave, "rb2")}, withCaps(bypass, "dave", "hub.pr"), b(nil, 1, true), false, 1, []string{"bob"}, false},
		{"a new changes request after a dismissal vetoes again", []hubrefs.Event{carol, bobNo, dismiss("d", c.dave, "rb2"), review("rb4", c.bob, h1, main, Changes)}, bypass, b(nil, 1, true), false, 1, []string{"bob"}, false},
		{"a removed reviewer's veto stops counting", []hubrefs.Event{carol, bobNo}, without(teams, "bob"), b(nil, 1, true), true, 1, nil, false},
		{"draft never passes", []hubrefs.Event{carol, ev("dr", "", c.alice, hubrefs.TypePRDraft)}, teams, b(nil, 1, false), false, 1, nil, true},
		{"ready again passes", []hubrefs.Event{carol, ev("dr", "", c.alice, hubrefs.TypePRDraft), ev("rd", "", c.alice, hubrefs.TypePRReady)}, teams, b(nil, 1, false), true, 1, nil, false},
	}
	for _, tc := range tests {
		st, err := Fold(chain(append([]hubrefs.Event{opened(c)}, tc.evs...)...), tc.trust)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		v := st.ReviewAt(tc.branch, st.Head)
		if v.OK() != tc.ok || v.Approvals != tc.count || !reflect.DeepEqual(v.Vetoes, tc.vetoes) || v.Draft != tc.draft {
			t.Errorf("%s: ok %v approvals %d vetoes %v draft %v; want %v %d %v %v (reasons %v)", tc.name, v.OK(), v.Approvals, v.Vetoes, v.Draft, tc.ok, tc.count, tc.vetoes, tc.draft, v.Reasons())
		}
		if ok, reasons := st.Satisfies(tc.branch, st.Head); ok != tc.ok || ok != (len(reasons) == 0) {
			t.Errorf("%s: Satisfies %v %v", tc.name, ok, reasons)
		}
	}
}

// TestAuthorizeDraftsAndDismissals: who may write pr.draft, pr.ready and
// review.dismissed, and in which state.
func TestAuthorizeDraftsAndDismissals(t *testing.T) {
	c := newCast(t)
	tr := withCaps(c.t, "carol", "hub.review", "hub.bypass")
	fold := func(evs ...hubrefs.Event) *State {
		st, err := Fold(chain(append([]hubrefs.Event{opened(c)}, evs...)...), tr)
		if err != nil {
			t.Fatal(err)
		}
		return st
	}
	plain := fold(review("rb", c.bob, h1, main, Changes), review("ra", c.carol, h1, main, Approve))
	draft := fold(ev("dr", "", c.alice, hubrefs.TypePRDraft))
	draftOpened, err := Fold([]hubrefs.Event{ev("o", "", c.alice, hubrefs.TypePROpened, "id", prID, "base", main, "head", h1, "title", "x", "draft", true)}, tr)
	if err != nil || !draftOpened.Draft {
		t.Fatalf("opened as a draft: %v %+v", err, draftOpened)
	}
	dismissed := fold(review("rb", c.bob, h1, main, Changes), dismiss("d", c.carol, "rb"))
	for _, tc := range []struct {
		name   string
		before *State
		ev     hubrefs.Event
		want   error
	}{
		{"opener marks draft", plain, ev("x", "o", c.alice, hubrefs.TypePRDraft), nil},
		{"admin marks draft", plain, ev("x", "o", c.dave, hubrefs.TypePRDraft), nil},
		{"reviewer may not", plain, ev("x", "o", c.bob, hubrefs.TypePRDraft), ErrUnauthorized},
		{"draft twice", draft, ev("x", "o", c.alice, hubrefs.TypePRDraft), ErrState},
		{"ready a draft", draft, ev("x", "o", c.alice, hubrefs.TypePRReady), nil},
		{"ready a draft opened as one", draftOpened, ev("x", "o", c.alice, hubrefs.TypePRReady), nil},
		{"ready what is not a draft", plain, ev("x", "o", c.alice, hubrefs.TypePRReady), ErrState},
		{"dismiss with hub.bypass", plain, dismiss("x", c.carol, "rb"), nil},
		{"dismiss as admin", plain, dismiss("x", c.dave, "rb"), nil},
		{"dismiss without hub.bypass", plain, dismiss("x", c.bob, "rb"), ErrUnauthorized},
		{"dismiss an approval", plain, dismiss("x", c.carol, "ra"), ErrState},
		{"dismiss an unknown review", plain, dismiss("x", c.carol, "nope"), ErrState},
		{"dismiss twice", dismissed, dismiss("x", c.carol, "rb"), ErrState},
		{"dismiss without a reason", plain, ev("x", "o", c.carol, hubrefs.TypeReviewDismiss, "review", id("rb").String(), "reason", " "), ErrMalformed},
	} {
		e := tc.ev
		e.Parents = []plumbing.Hash{tc.before.Tip}
		err := Authorize(e, tc.before, tr)
		if tc.want == nil && err != nil || tc.want != nil && !errors.Is(err, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, err, tc.want)
		}
	}
}

// TestBypassAt: which bypass lets a head land directly (docs/trust.md, "An
// audited bypass").
func TestBypassAt(t *testing.T) {
	c := newCast(t)
	tr := withCaps(c.t, "carol", "hub.review", "hub.bypass")
	bypass := func(name string, k ssh.PublicKey, head string) hubrefs.Event {
		return ev(name, "", k, hubrefs.TypePRBypassed, "head", head, "base", main, "reason", "hotfix")
	}
	forbid := trust.DefaultBranch()
	forbid.ForbidBypass = true
	for _, tc := range []struct {
		name   string
		evs    []hubrefs.Event
		trust  *trust.State
		branch trust.Branch
		rev    string
		by     string // "" none
	}{
		{"a bypass of the head", []hubrefs.Event{bypass("b", c.carol, h1)}, tr, trust.DefaultBranch(), h1, "carol"},
		{"by an admin", []hubrefs.Event{bypass("b", c.dave, h1)}, tr, trust.DefaultBranch(), h1, "dave"},
		{"allowBypass false", []hubrefs.Event{bypass("b", c.carol, h1)}, tr, forbid, h1, ""},
		{"the signer lost hub.bypass", []hubrefs.Event{bypass("b", c.carol, h1)}, c.t, trust.DefaultBranch(), h1, ""},
		{"the head moved on", []hubrefs.Event{bypass("b", c.carol, h1), ev("u", "", c.alice, hubrefs.TypePRUpdated, "head", h2)}, tr, trust.DefaultBranch(), h2, ""},
		{"an older head", []hubrefs.Event{bypass("b", c.carol, h1), ev("u", "", c.alice, hubrefs.TypePRUpdated, "head", h2)}, tr, trust.DefaultBranch(), h1, ""},
		{"retargeted", []hubrefs.Event{bypass("b", c.carol, h1), ev("r", "", c.alice, hubrefs.TypePRRetargeted, "base", dev)}, tr, trust.DefaultBranch(), h1, ""},
		{"a draft", []hubrefs.Event{bypass("b", c.carol, h1), ev("d", "", c.alice, hubrefs.TypePRDraft)}, tr, trust.DefaultBranch(), h1, ""},
		{"closed", []hubrefs.Event{bypass("b", c.carol, h1), ev("x", "", c.alice, hubrefs.TypePRClosed)}, tr, trust.DefaultBranch(), h1, ""},
	} {
		st, err := Fold(chain(append([]hubrefs.Event{opened(c)}, tc.evs...)...), tc.trust)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		bp, ok := st.BypassAt(tc.branch, tc.rev)
		if ok != (tc.by != "") || bp.By != tc.by || ok && (bp.Reason != "hotfix" || bp.Head != tc.rev) {
			t.Errorf("%s: %+v %v, want by %q", tc.name, bp, ok, tc.by)
		}
	}
	// Who may write it, on what.
	before, err := Fold(chain(opened(c), ev("u", "", c.alice, hubrefs.TypePRUpdated, "head", h2)), tr)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		ev   hubrefs.Event
		want error
	}{
		{"holder of hub.bypass", bypass("x", c.carol, h2), nil},
		{"without hub.bypass", bypass("x", c.bob, h2), ErrUnauthorized},
		{"not the current head", bypass("x", c.carol, h1), ErrState},
		{"not the current base", ev("x", "", c.carol, hubrefs.TypePRBypassed, "head", h2, "base", dev, "reason", "r"), ErrState},
		{"no reason", ev("x", "", c.carol, hubrefs.TypePRBypassed, "head", h2, "base", main, "reason", ""), ErrMalformed},
	} {
		e := tc.ev
		e.Parents = []plumbing.Hash{before.Tip}
		if err := Authorize(e, before, tr); tc.want == nil && err != nil || tc.want != nil && !errors.Is(err, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, err, tc.want)
		}
	}
}
