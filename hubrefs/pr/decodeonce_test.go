package pr

import (
	"bytes"
	"encoding/json"
	"fmt"
	mrand "math/rand/v2"
	"reflect"
	"testing"
	"time"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/gitplus/gitplus/fixtures"
	"github.com/gitplus/gitplus/hubrefs"
	"github.com/gitplus/gitplus/hubrefs/sshsign"
	"github.com/gitplus/gitplus/hubrefs/trust"
)

func newSigner(t testing.TB) hubrefs.Signer { return sshsign.NewSigner(fixtures.NewSSHSigner(t)) }

// undecoded is ev as an event built in memory would be: the same fields,
// the payload in a buffer of its own, so PayloadInto decodes it again (the
// path every fold took before payloads were decoded once).
func undecoded(ev hubrefs.Event) hubrefs.Event {
	return hubrefs.Event{ID: ev.ID, Parents: ev.Parents, Type: ev.Type, Repo: ev.Repo, Payload: bytes.Clone(ev.Payload), Time: ev.Time, Signer: ev.Signer}
}

// TestDecodeOnceSameFold: random signed logs, read back through
// hubrefs.Decode as from a repository, fold to the same state or fail on
// the same event with the same error whether the fold is handed the
// payloads decoded at read time or decodes them itself as before; with
// and without decoding ahead on all CPUs. The logs mix good events with
// payloads the strict key check lets through and the fold refuses (a bad
// verdict, a non-id head, a number or null where a string goes, another
// repository, a type that is not a pull request's) and with escapes the
// read-time decoder leaves to encoding/json.
func TestDecodeOnceSameFold(t *testing.T) {
	alice, bob, ci := newSigner(t), newSigner(t), newSigner(t)
	tr := &trust.State{RepoID: repoID, Members: map[string]*trust.Member{
		"alice": {Name: "alice", Key: alice.PublicKey(), Caps: []string{"hub.pr", "hub.review"}},
		"bob":   {Name: "bob", Key: bob.PublicKey(), Caps: []string{"hub.review"}},
		"ci":    {Name: "ci", Key: ci.PublicKey(), Caps: []string{"hub.check:ci"}},
	}, Rules: trust.DefaultRules()}
	r := mrand.New(mrand.NewPCG(3, 4))
	q := func(s string) string { b, _ := json.Marshal(s); return string(b) }
	base := func(typ string) string { return `"type":` + q(typ) + `,"repo":` + q(repoID) }
	// good and bad payloads, by kind
	good := []func() (string, hubrefs.Signer){
		func() (string, hubrefs.Signer) {
			return `{` + base(hubrefs.TypeReviewSubmit) + `,"head":"` + h1 + `","base":"` + main + `","verdict":"approve"}`, bob
		},
		func() (string, hubrefs.Signer) {
			return `{` + base(hubrefs.TypeReviewSubmit) + `,"head":"` + h1 + `","base":"` + main + `","verdict":"comment","body":"a \u003c b \u0026\n\"q\" \ud83d\ude00 \ud800"}`, bob
		},
		func() (string, hubrefs.Signer) {
			return `{` + base(hubrefs.TypeCheckCompleted) + `,"name":"ci","head":"` + h1 + `","conclusion":"success","attempts":2,"url":"https://ci/x?a=1&b=2"}`, ci
		},
		func() (string, hubrefs.Signer) {
			return `{ "thread" : ` + q(fmt.Sprint("t", r.IntN(5))) + ` , ` + base(hubrefs.TypeThreadOpened) + ` }`, alice
		},
		func() (string, hubrefs.Signer) {
			return `{` + base(hubrefs.TypeThreadResolved) + `,"thread":` + q(fmt.Sprint("t", r.IntN(5))) + `}`, alice
		},
		func() (string, hubrefs.Signer) {
			return `{` + base(hubrefs.TypePRUpdated) + `,"head":"` + []string{h1, h2, h3}[r.IntN(3)] + `"}`, alice
		},
		func() (string, hubrefs.Signer) { return `{` + base(hubrefs.TypePRClosed) + `}`, alice },
		func() (string, hubrefs.Signer) { return `{` + base(hubrefs.TypePRReopened) + `}`, alice },
		func() (string, hubrefs.Signer) {
			return `{` + base(hubrefs.TypePRRetargeted) + `,"base":"refs/heads/dev"}`, alice
		},
		func() (string, hubrefs.Signer) {
			return `{` + base(hubrefs.TypePRMerged) + `,"revision":"` + h1 + `","branch":"` + main + `","commit":"` + c1 + `"}`, alice
		},
	}
	bad := []func() (string, hubrefs.Signer){
		func() (string, hubrefs.Signer) {
			return `{` + base(hubrefs.TypeReviewSubmit) + `,"head":"` + h1 + `","base":"` + main + `","verdict":"maybe"}`, bob
		},
		func() (string, hubrefs.Signer) { return `{` + base(hubrefs.TypePRUpdated) + `,"head":"HEAD"}`, alice },
		func() (string, hubrefs.Signer) { return `{` + base(hubrefs.TypePRUpdated) + `,"head":7}`, alice },
		func() (string, hubrefs.Signer) { return `{` + base(hubrefs.TypePRUpdated) + `,"head":null}`, alice },
		func() (string, hubrefs.Signer) {
			return `{` + base(hubrefs.TypeCheckCompleted) + `,"name":"ci","head":"` + h1 + `","conclusion":"success","attempts":"2"}`, ci
		},
		func() (string, hubrefs.Signer) {
			return `{` + base(hubrefs.TypeCheckCompleted) + `,"name":"ci","head":"` + h1 + `","conclusion":"success","attempts":1.5}`, ci
		},
		func() (string, hubrefs.Signer) {
			return `{"type":"pr.closed","repo":"01900000-0000-7000-8000-0000000000ff"}`, alice
		},
		func() (string, hubrefs.Signer) {
			return `{` + base(hubrefs.TypeQueueEntered) + `,"pr":"x","head":"` + h1 + `","base":"` + main + `"}`, alice
		},
		func() (string, hubrefs.Signer) {
			return `{` + base(hubrefs.TypeThreadOpened) + `,"thread":"a b"}`, alice
		},
	}
	opened := func(ok bool) string {
		title := `"Add x"`
		if !ok {
			title = []string{`" "`, `5`, `null`}[r.IntN(3)]
		}
		return `{` + base(hubrefs.TypePROpened) + `,"id":"` + prID + `","base":"` + main + `","head":"` + h1 + `","title":` + title + `,"source":"refs/heads/f\u0065at"}`
	}
	when := time.Unix(1700000000, 0)
	write := func(payload string, parent plumbing.Hash, s hubrefs.Signer) hubrefs.Event {
		var parents []plumbing.Hash
		if !parent.IsZero() {
			parents = []plumbing.Hash{parent}
		}
		when = when.Add(time.Second)
		raw, err := hubrefs.EncodeEvent(json.RawMessage(payload), parents, "x", when, s)
		if err != nil {
			t.Fatalf("%s: %v", payload, err)
		}
		ev, err := hubrefs.Decode(raw, hubrefs.Ceilings{})
		if err != nil {
			t.Fatalf("%s: %v", payload, err)
		}
		return ev
	}
	defer func(v int) { parallelDecode = v }(parallelDecode)
	outcomes := map[bool]int{}
	for i := 0; i < 120; i++ {
		n := 1 + r.IntN(30)
		badRate := []int{0, 0, 20, 5}[i%4]
		evs := []hubrefs.Event{write(opened(r.IntN(25) != 0 || badRate == 0), plumbing.ZeroHash, alice)}
		for len(evs) < n {
			mk := good[r.IntN(len(good))]
			if badRate > 0 && r.IntN(badRate) == 0 {
				mk = bad[r.IntN(len(bad))]
			}
			payload, s := mk()
			evs = append(evs, write(payload, evs[len(evs)-1].ID, s))
		}
		old := make([]hubrefs.Event, len(evs))
		for j, ev := range evs {
			old[j] = undecoded(ev)
		}
		for _, ahead := range []int{1 << 30, 2} {
			parallelDecode = ahead
			want, wantErr := Fold(old, tr)
			got, gotErr := Fold(evs, tr)
			if fmt.Sprint(gotErr) != fmt.Sprint(wantErr) {
				t.Fatalf("log %d (ahead from %d): decoded once: %v; decoded by the fold: %v", i, ahead, gotErr, wantErr)
			}
			if wantErr == nil && !reflect.DeepEqual(got, want) {
				t.Fatalf("log %d (ahead from %d): states differ:\n%+v\n%+v", i, ahead, got, want)
			}
			outcomes[wantErr == nil]++
		}
		// The hook's path: each event authorised against the state before it.
		for j := 1; j < len(evs); j++ {
			before, err := Fold(old[:j], tr)
			if err != nil {
				break
			}
			werr := Authorize(old[j], before, tr)
			gerr := Authorize(evs[j], before, tr)
			if fmt.Sprint(gerr) != fmt.Sprint(werr) {
				t.Fatalf("log %d event %d: Authorize %v, decoded by the fold %v", i, j, gerr, werr)
			}
		}
	}
	if outcomes[true] == 0 || outcomes[false] == 0 {
		t.Fatalf("outcomes %v: the logs should both fold and fail", outcomes)
	}
}
