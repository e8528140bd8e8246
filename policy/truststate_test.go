package policy

import (
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/gitplus/gitplus/hubrefs"
	"github.com/gitplus/gitplus/hubrefs/trust"
)

func foldedTrust(t *testing.T, rules string) *trust.State {
	t.Helper()
	w := newWorld(t, rules)
	st, err := trust.Fold(mustLog(t, w, w.refs[hubrefs.TrustRef]))
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// TestTrustStateRoundTrip: what the fold gives is what the cache gives back.
func TestTrustStateRoundTrip(t *testing.T) {
	states := map[string]*trust.State{}
	for name, rules := range map[string]string{"queue": rulesQueue, "no queue": rulesNoQueue, "ff": rulesFF, "provenance": rulesProv, "default rules": ""} {
		states[name] = foldedTrust(t, rules)
	}
	odd := foldedTrust(t, `{"protected":{"refs/heads/*":{"requiredChecks":[],"requiredApprovals":0},"refs/heads/main":{"queueCandidates":true,"queueDepth":32,"requireResolvedThreads":true}},"ceilings":{"eventsPerRef":5,"eventBytes":100,"parentsPerEvent":2},"requireKnownPusher":true}`)
	odd.Skipped = []trust.Skip{{ID: plumbing.NewHash("1111111111111111111111111111111111111111"), Type: hubrefs.TypeMemberRemoved, Reason: "not a member"}}
	states["globs, empty checks, ceilings, skipped events"] = odd
	states["requireKnownPusher false"] = foldedTrust(t, `{"requireKnownPusher":false}`)
	teams := foldedTrust(t, `{"protected":{"refs/heads/main":{"blockOnChangesRequested":true},"refs/heads/dev":{"allowBypass":false}}}`)
	teams.Teams = map[string][]string{"docs": {"alice", "bob"}, "empty": {}}
	main := teams.Rules.Protected["refs/heads/main"]
	main.Approvers = []string{"team:docs", "bob"}
	teams.Rules.Protected["refs/heads/main"] = main
	states["teams, approvers, veto"] = teams
	states["squash, linear"] = foldedTrust(t, rulesLinear)
	states["squash"] = foldedTrust(t, `{"protected":{"refs/heads/main":{"mergeMethod":"squash"}}}`)
	states["owners"] = foldedTrust(t, ownersRules)
	states["requireSandbox"] = foldedTrust(t, `{"protected":{"refs/heads/main":{"requireSandbox":true}}}`)
	states["partitions"] = foldedTrust(t, fmt.Sprintf(partitionRules, ""))
	for name, st := range states {
		got, ok := decodeTrustState(st.Tip, encodeTrustState(st))
		if !ok {
			t.Fatalf("%s: the entry does not decode", name)
		}
		if !reflect.DeepEqual(got, st) {
			t.Fatalf("%s: round trip changed the state:\n%+v\nwant\n%+v", name, got, st)
		}
		if _, ok := decodeTrustState(odd.Tip, encodeTrustState(states["queue"])); ok && odd.Tip != states["queue"].Tip {
			t.Fatalf("%s: an entry decoded for another tip", name)
		}
	}
	// A state whose rules name a branch and a glob differently is still
	// told apart from another: the entry is the state, not a digest of it.
	if reflect.DeepEqual(encodeTrustState(states["queue"]), encodeTrustState(states["no queue"])) {
		t.Fatal("two different states encode the same")
	}
}

// TestTrustStateCodecCoversEveryField fails when trust's state types gain
// (or lose) a field: encodeTrustState and decodeTrustState must then carry
// it, or a cached state would silently lack it.
func TestTrustStateCodecCoversEveryField(t *testing.T) {
	for typ, want := range map[reflect.Type]int{
		reflect.TypeOf(trust.State{}):     8,  // RepoID Name Members Teams Rules RulesID Tip Skipped
		reflect.TypeOf(trust.Member{}):    5,  // Name Key KeyLine Caps wire (wire is derived from Key)
		reflect.TypeOf(trust.Rules{}):     3,  // Protected Ceilings RequireKnownPusher
		reflect.TypeOf(trust.Branch{}):    16, // ... QueueDepth CheckTimeout CheckEvery Approvers BlockOnChangesRequested ForbidBypass Landing Owners RequireSandbox Partitions
		reflect.TypeOf(trust.Partition{}): 5,  // Name Paths Reads, and their compiled globs (rebuilt by NewPartition)
		reflect.TypeOf(trust.Landing{}):   3,  // MergeMethod RequireLinearHistory (flag bits) DeleteSourceBranch (flags2)
		reflect.TypeOf(trust.Ceilings{}):  3,
		reflect.TypeOf(trust.Skip{}):      3,
	} {
		if typ.NumField() != want {
			t.Errorf("%s has %d fields, the trust state codec (policy/truststate.go) knows %d: teach it the change and bump its version", typ, typ.NumField(), want)
		}
	}
}

func TestTrustStateDamagedEntries(t *testing.T) {
	st := foldedTrust(t, rulesQueue)
	good := encodeTrustState(st)
	dup := *st
	dup.Members = map[string]*trust.Member{}
	for n, m := range st.Members {
		dup.Members[n] = m
	}
	for name, b := range map[string][]byte{
		"trailing byte": append(append([]byte{}, good...), 0),
		"truncated":     good[:len(good)-1],
		"other magic":   append([]byte("gpfc\x02"), good[len(trustStateMagic):]...),
		"empty":         nil,
	} {
		if _, ok := decodeTrustState(st.Tip, b); ok {
			t.Errorf("%s: decoded", name)
		}
	}
	// A key line that does not parse back to itself.
	m := *st.Members["bob"]
	m.KeyLine += " comment"
	bad := *st
	bad.Members = map[string]*trust.Member{"bob": &m}
	if _, ok := decodeTrustState(st.Tip, encodeTrustState(&bad)); ok {
		t.Error("a member whose key line is not normalised decoded")
	}
}

func FuzzDecodeTrustState(f *testing.F) {
	st := &trust.State{Tip: plumbing.NewHash("2222222222222222222222222222222222222222"), RepoID: repoID, Name: "demo", Members: map[string]*trust.Member{},
		Rules:   trust.Rules{Protected: map[string]trust.Branch{"refs/heads/main": trust.DefaultBranch()}, Ceilings: trust.DefaultCeilings()},
		Skipped: []trust.Skip{{Type: "x", Reason: "y"}}}
	f.Add(st.Tip[:], encodeTrustState(st))
	f.Add(st.Tip[:], []byte("gpts\x01"))
	f.Fuzz(func(t *testing.T, tipb, data []byte) {
		var tip plumbing.Hash
		copy(tip[:], tipb)
		got, ok := decodeTrustState(tip, data)
		if !ok {
			return
		}
		// What decodes is a state at tip and survives a round trip.
		again, ok := decodeTrustState(tip, encodeTrustState(got))
		if !ok || got.Tip != tip || !reflect.DeepEqual(again, got) {
			t.Fatalf("a decoded trust state does not round-trip")
		}
	})
}

// TestTrustStateKeepsCheckTimeout: the cached state carries checkTimeout.
func TestTrustStateKeepsCheckTimeout(t *testing.T) {
	st := foldedTrust(t, `{"protected":{"refs/heads/main":{"queueCandidates":true,"checkTimeout":"45m"}}}`)
	got, ok := decodeTrustState(st.Tip, encodeTrustState(st))
	if !ok || got.Rules.Protected["refs/heads/main"].CheckTimeout != 45*time.Minute {
		t.Fatalf("decoded %v: %+v", ok, got)
	}
}
