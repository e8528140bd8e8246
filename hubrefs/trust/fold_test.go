package trust

import (
	"encoding/json"
	"errors"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"
	"golang.org/x/crypto/ssh"

	"github.com/gitplus/gitplus/fixtures"
	"github.com/gitplus/gitplus/hubrefs"
)

const repoID = "0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b"

type key struct {
	pub  ssh.PublicKey
	line string
}

func newKey(t testing.TB) key {
	k := fixtures.NewSSHSigner(t).PublicKey()
	return key{k, strings.TrimSpace(string(ssh.MarshalAuthorizedKey(k)))}
}

func id(name string) plumbing.Hash {
	return plumbing.ComputeHash(plumbing.CommitObject, []byte(name))
}

// mk builds an event named name whose parents are named by parents.
func mk(name string, parents []string, signer key, typ string, fields map[string]any) hubrefs.Event {
	p := map[string]any{"type": typ, "repo": repoID}
	for k, v := range fields {
		p[k] = v
	}
	raw, _ := json.Marshal(p)
	ev := hubrefs.Event{ID: id(name), Type: typ, Repo: repoID, Payload: raw, Signer: signer.pub}
	for _, pn := range parents {
		ev.Parents = append(ev.Parents, id(pn))
	}
	return ev
}

func created(name string, admin key) hubrefs.Event {
	return mk(name, nil, admin, hubrefs.TypeRepoCreated, map[string]any{"name": "demo", "admin": map[string]string{"name": "alice", "key": admin.line}})
}

func added(name, parent string, signer key, member string, k key, caps ...string) hubrefs.Event {
	return mk(name, strings.Fields(parent), signer, hubrefs.TypeMemberAdded, map[string]any{"name": member, "key": k.line, "caps": caps})
}

func changed(name, parent string, signer key, member string, k key, caps ...string) hubrefs.Event {
	return mk(name, strings.Fields(parent), signer, hubrefs.TypeMemberChanged, map[string]any{"name": member, "key": k.line, "caps": caps})
}

func removed(name, parent string, signer key, member string) hubrefs.Event {
	return mk(name, strings.Fields(parent), signer, hubrefs.TypeMemberRemoved, map[string]any{"name": member})
}

func rulesSet(name, parent string, signer key, rules string) hubrefs.Event {
	return mk(name, strings.Fields(parent), signer, hubrefs.TypeRulesSet, map[string]any{"rules": json.RawMessage(rules)})
}

func TestFoldLinear(t *testing.T) {
	alice, bob, carol := newKey(t), newKey(t), newKey(t)
	evs := []hubrefs.Event{
		created("c", alice),
		added("b1", "c", alice, "bob", bob, "hub.review", "hub.check:ci"),
		added("c1", "b1", alice, "carol", carol, "hub.pr"),
		rulesSet("r1", "c1", alice, `{"protected":{"refs/heads/main":{"requiredApprovals":2}}}`),
		changed("b2", "r1", alice, "bob", bob, "hub.review"),
		removed("c2", "b2", alice, "carol"),
	}
	s, err := Fold(evs)
	if err != nil {
		t.Fatal(err)
	}
	if s.RepoID != repoID || s.Name != "demo" || s.Tip != id("c2") || s.RulesID != id("r1") {
		t.Errorf("state header %q %q %s %s", s.RepoID, s.Name, s.Tip, s.RulesID)
	}
	if got := s.MemberNames(); !reflect.DeepEqual(got, []string{"alice", "bob"}) {
		t.Errorf("members %v", got)
	}
	if b, ok := s.Rules.For("refs/heads/main"); !ok || b.RequiredApprovals != 2 {
		t.Errorf("rules not applied: %+v %v", b, ok)
	}
	has := []struct {
		k    key
		cap  string
		want bool
	}{
		{alice, "hub.check:anything", true}, // repo.admin implies all
		{alice, CapQueue, true},
		{bob, CapReview, true},
		{bob, "hub.check:ci", false}, // dropped by member.changed
		{bob, CapPR, false},
		{carol, CapPR, false}, // removed
	}
	for _, h := range has {
		if got := s.Has(h.k.pub, h.cap); got != h.want {
			m, _ := s.MemberByKey(h.k.pub)
			t.Errorf("Has(%v, %s) = %v, want %v", m, h.cap, got, h.want)
		}
	}

	// Apply over the same events gives the same state.
	inc, err := Fold(evs[:1])
	if err != nil {
		t.Fatal(err)
	}
	for _, ev := range evs[1:] {
		if err := inc.Apply(ev); err != nil {
			t.Fatal(err)
		}
	}
	if !reflect.DeepEqual(inc, s) {
		t.Errorf("Apply state differs from Fold state")
	}
}

func TestFoldRefuses(t *testing.T) {
	alice, bob, mallory := newKey(t), newKey(t), newKey(t)
	base := []hubrefs.Event{created("c", alice), added("b", "c", alice, "bob", bob, "hub.review")}
	bad := func(ev hubrefs.Event, f func(*hubrefs.Event)) hubrefs.Event { f(&ev); return ev }
	tests := []struct {
		name string
		evs  []hubrefs.Event
		want error
		text string
	}{
		{"member without repo.admin", append(base, added("x", "b", bob, "eve", mallory, "hub.pr")), ErrUnauthorized, `"bob" does not hold repo.admin`},
		{"signer not a member", append(base, added("x", "b", mallory, "eve", mallory, "repo.admin")), ErrUnauthorized, "not a member"},
		{"unsigned", append(base, bad(added("x", "b", alice, "eve", mallory), func(e *hubrefs.Event) { e.Signer = nil })), ErrUnsigned, ""},
		{"unknown capability", append(base, added("x", "b", alice, "eve", mallory, "hub.merge")), ErrUnknownCap, "hub.merge"},
		{"duplicate capability", append(base, added("x", "b", alice, "eve", mallory, "hub.pr", "hub.pr")), ErrMalformed, "twice"},
		{"malformed key", append(base, mk("x", []string{"b"}, alice, hubrefs.TypeMemberAdded, map[string]any{"name": "eve", "key": "ssh-ed25519 AAAAnotbase64", "caps": []string{}})), ErrBadKey, "key"},
		{"key with options", append(base, mk("x", []string{"b"}, alice, hubrefs.TypeMemberAdded, map[string]any{"name": "eve", "key": `command="x" ` + mallory.line, "caps": []string{}})), ErrBadKey, "options"},
		{"bad member name", append(base, added("x", "b", alice, "eve smith", mallory)), ErrMalformed, "eve smith"},
		{"added twice", append(base, added("x", "b", alice, "bob", mallory)), ErrMemberExists, "bob"},
		{"changed unknown", append(base, changed("x", "b", alice, "eve", mallory)), ErrNoMember, "eve"},
		{"removed unknown", append(base, removed("x", "b", alice, "eve")), ErrNoMember, "eve"},
		{"key shared", append(base, added("x", "b", alice, "eve", bob)), ErrKeyInUse, "bob"},
		{"last admin removed", append(base, removed("x", "b", alice, "alice")), ErrLastAdmin, "alice"},
		{"last admin demoted", append(base, changed("x", "b", alice, "alice", alice, "hub.pr")), ErrLastAdmin, "alice"},
		{"other repository", append(base, bad(added("x", "b", alice, "eve", mallory), func(e *hubrefs.Event) {
			e.Payload = []byte(strings.Replace(string(e.Payload), repoID, "0190a1b2-c3d4-7e5f-8a9b-000000000000", 1))
			e.Repo = ""
		})), ErrRepoMismatch, "0190a1b2-c3d4-7e5f-8a9b-000000000000"},
		{"payload type differs", append(base, bad(removed("x", "b", alice, "bob"), func(e *hubrefs.Event) { e.Type = hubrefs.TypeMemberAdded })), ErrMalformed, "type"},
		{"malformed JSON", append(base, bad(removed("x", "b", alice, "bob"), func(e *hubrefs.Event) { e.Payload = []byte(`{"type":`) })), ErrMalformed, ""},
		{"missing name", append(base, mk("x", []string{"b"}, alice, hubrefs.TypeMemberRemoved, nil)), ErrMalformed, "name"},
		{"bad rules", append(base, rulesSet("x", "b", alice, `{"protected":{"main":{}}}`)), ErrBadRef, "main"},
		{"rules missing", append(base, mk("x", []string{"b"}, alice, hubrefs.TypeRulesSet, nil)), ErrMalformed, "rules"},
		{"unknown type", append(base, mk("x", []string{"b"}, alice, hubrefs.TypePROpened, nil)), ErrUnknownType, "pr.opened"},
		{"second repo.created", append(base, bad(created("x", alice), func(e *hubrefs.Event) { e.Parents = []plumbing.Hash{id("b")} })), ErrOrder, "written once"},
		{"root not repo.created", []hubrefs.Event{added("x", "", alice, "eve", mallory)}, ErrOrder, "root"},
		{"second root", append(base, created("x", alice)), ErrOrder, "second root"},
		{"parent missing", append(base, added("x", "nope", alice, "eve", mallory)), ErrOrder, "not the tip"},
		{"child before parent", []hubrefs.Event{base[1], base[0]}, ErrOrder, ""},
		{"repo.created by another key", []hubrefs.Event{bad(created("c", alice), func(e *hubrefs.Event) { e.Signer = bob.pub })}, ErrUnauthorized, "admin key"},
		{"repo id not a UUID", []hubrefs.Event{bad(created("c", alice), func(e *hubrefs.Event) {
			e.Payload = []byte(strings.Replace(string(e.Payload), repoID, "main", 1))
			e.Repo = "main"
		})}, ErrMalformed, "UUID"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Fold(tt.evs)
			if !errors.Is(err, tt.want) {
				t.Fatalf("err = %v, want %v", err, tt.want)
			}
			if !strings.Contains(err.Error(), tt.text) {
				t.Errorf("error %q does not say %q", err, tt.text)
			}
			var ee *EventError
			if !errors.As(err, &ee) || !strings.Contains(err.Error(), ee.ID.String()) {
				t.Errorf("error %q does not name the event", err)
			}
			if tt.want != ErrOrder && !errors.Is(err, ErrInvalidStored) {
				t.Errorf("stored-log error %q is not ErrInvalidStored", err)
			}
			// The boundary's judgement of the same event agrees.
			if tt.want != ErrOrder && len(tt.evs) == 3 {
				st, ferr := Fold(tt.evs[:2])
				if ferr != nil {
					t.Fatal(ferr)
				}
				before := st.Clone()
				if err := st.Apply(tt.evs[2]); !errors.Is(err, tt.want) {
					t.Errorf("Apply: %v, want %v", err, tt.want)
				}
				if !reflect.DeepEqual(st, before) {
					t.Errorf("a refused Apply changed the state")
				}
			}
		})
	}
}

func TestApplyNeedsTip(t *testing.T) {
	alice, bob := newKey(t), newKey(t)
	s, err := Fold([]hubrefs.Event{created("c", alice), added("b", "c", alice, "bob", bob)})
	if err != nil {
		t.Fatal(err)
	}
	for _, ev := range []hubrefs.Event{
		removed("x", "c", alice, "bob"),   // parent is not the tip
		removed("x", "b c", alice, "bob"), // a join
	} {
		if err := s.Apply(ev); !errors.Is(err, ErrOrder) {
			t.Errorf("Apply(%v) = %v, want ErrOrder", ev.Parents, err)
		}
	}
}

// DAG-aware judgement. Shapes are written root first; "x y" parents join.
// TestFoldRefusesForks: the trust log is linear (docs/trust.md). Every
// fork or join, whoever signed it and whatever a merge rule could make of
// it, is refused, so no replica has to decide what a fork means.
func TestFoldRefusesForks(t *testing.T) {
	alice, bob, carol, dave, eve := newKey(t), newKey(t), newKey(t), newKey(t), newKey(t)
	head := []hubrefs.Event{
		created("c", alice),
		added("b", "c", alice, "bob", bob, "repo.admin"),
	}
	tests := []struct {
		name string
		evs  []hubrefs.Event
	}{
		{
			// alice removes bob; concurrently bob (still admin on his side)
			// adds carol as an admin. Revocation wins: carol never counts.
			name: "attack 3: a removed admin's grant on a fork, joined back",
			evs: append(head[:2:2],
				removed("rm", "b", alice, "bob"),
				added("add", "b", bob, "carol", carol, "repo.admin"),
				added("join", "rm add", alice, "dave", dave, "hub.pr"),
			),
		},
		{
			// Same, order of the two branches swapped (as committer times could).
			name: "the same fork, branches in the other order",
			evs: append(head[:2:2],
				added("add", "b", bob, "carol", carol, "repo.admin"),
				removed("rm", "b", alice, "bob"),
				added("join", "add rm", alice, "dave", dave, "hub.pr"),
			),
		},
		{
			// What the dropped grant would have authorised falls with it: a
			// join signed by carol is refused.
			name: "a join signed by the fork's grantee",
			evs: append(head[:2:2],
				removed("rm", "b", alice, "bob"),
				added("add", "b", bob, "carol", carol, "repo.admin"),
				added("join", "rm add", carol, "dave", dave, "hub.pr"),
			),
		},
		{
			// carol is made admin on one side; on the other side she writes as
			// if she were. Judged against its own parents, her event is refused
			// even though causal order puts the grant first.
			name: "a fork signed by someone granted on the other branch",
			evs: append(head[:2:2],
				added("grant", "b", alice, "carol", carol, "repo.admin"),
				added("use", "b", carol, "dave", dave),
			),
		},
		{
			name: "concurrent grants by two admins, joined",
			evs: append(head[:2:2],
				added("x", "b", alice, "carol", carol, "hub.pr"),
				added("y", "b", bob, "dave", dave, "hub.review"),
				rulesSet("j", "x y", alice, `{}`),
			),
		},
		{
			name: "two admins removing each other concurrently",
			evs: append(head[:2:2],
				removed("x", "b", alice, "bob"),
				removed("y", "b", bob, "alice"),
				rulesSet("j", "x y", alice, `{}`),
			),
		},
		{
			name: "one key added under two names concurrently",
			evs: append(head[:2:2],
				added("x", "b", alice, "carol", eve),
				added("y", "b", bob, "dave", eve),
				rulesSet("j", "x y", alice, `{}`),
			),
		},
		{
			name: "two admins demoting themselves concurrently",
			evs: append(head[:2:2],
				changed("x", "b", alice, "alice", alice, "hub.pr"),
				changed("y", "b", bob, "bob", bob, "hub.pr"),
			),
		},
		{
			name: "concurrent rules",
			evs: append(head[:2:2],
				rulesSet("x", "b", alice, `{"protected":{"refs/heads/main":{"requiredApprovals":2}}}`),
				rulesSet("y", "b", bob, `{"protected":{"refs/heads/main":{"requiredApprovals":3}}}`),
			),
		},
		{
			name: "concurrent rules, the other order",
			evs: append(head[:2:2],
				rulesSet("y", "b", bob, `{"protected":{"refs/heads/main":{"requiredApprovals":3}}}`),
				rulesSet("x", "b", alice, `{"protected":{"refs/heads/main":{"requiredApprovals":2}}}`),
			),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Fold(tt.evs)
			if !errors.Is(err, hubrefs.ErrNotLinear) || !errors.Is(err, ErrOrder) {
				t.Fatalf("err = %v, want a refused fork (ErrNotLinear)", err)
			}
			var ee *EventError
			if !errors.As(err, &ee) {
				t.Errorf("error %q does not name the event", err)
			}
		})
	}
}

// BenchmarkFoldLinear folds a trust log at the event ceiling.
func BenchmarkFoldLinear(b *testing.B) {
	alice := newKey(b)
	keys := make([]key, 50)
	for i := range keys {
		keys[i] = newKey(b)
	}
	evs := []hubrefs.Event{created("e0", alice)}
	for i := 1; i < 10000; i++ {
		name, parent := "e"+strconv.Itoa(i), "e"+strconv.Itoa(i-1)
		k := keys[i%len(keys)]
		member := "m" + strconv.Itoa(i%len(keys))
		switch {
		case i <= len(keys):
			evs = append(evs, added(name, parent, alice, member, k, "hub.review"))
		case i%2 == 0:
			evs = append(evs, changed(name, parent, alice, member, k, "hub.pr"))
		default:
			evs = append(evs, rulesSet(name, parent, alice, `{"protected":{"refs/heads/main":{}}}`))
		}
	}
	b.ResetTimer()
	for b.Loop() {
		if _, err := Fold(evs); err != nil {
			b.Fatal(err)
		}
	}
}
