package checkrun

import (
	"strings"
	"testing"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"golang.org/x/crypto/ssh"

	"github.com/gitplus/gitplus/fixtures"
	"github.com/gitplus/gitplus/hubrefs"
	"github.com/gitplus/gitplus/hubrefs/trust"
)

func testKey(t *testing.T) ssh.PublicKey { return fixtures.NewSSHSigner(t).PublicKey() }

// leaseWorld is a trust state where ci holds hub.check:ci and dev holds
// hub.pr only, and an event builder.
func leaseWorld(t *testing.T) (st *trust.State, ci, dev ssh.PublicKey, ev func(typ string, p hubrefs.Check, signer ssh.PublicKey, at int64) hubrefs.Event) {
	t.Helper()
	admin, ci, dev := testKey(t), testKey(t), testKey(t)
	const repo = "01a23af3-1111-7000-8000-000000000001"
	n := byte(0)
	mk := func(payload any, signer ssh.PublicKey, at int64) hubrefs.Event {
		typ, body, err := hubrefs.MarshalPayload(payload)
		if err != nil {
			t.Fatal(err)
		}
		n++
		return hubrefs.Event{ID: plumbing.Hash{n}, Type: typ, Repo: repo, Payload: body, Time: at, Signer: signer}
	}
	log := []hubrefs.Event{
		mk(hubrefs.RepoCreated{Base: hubrefs.Base{Type: hubrefs.TypeRepoCreated, Repo: repo}, Name: "r", Admin: hubrefs.Admin{Name: "admin", Key: hubrefs.AuthorizedKey(admin)}}, admin, 1),
		mk(hubrefs.MemberAdded{Base: hubrefs.Base{Type: hubrefs.TypeMemberAdded, Repo: repo}, Name: "ci", Key: hubrefs.AuthorizedKey(ci), Caps: []string{"hub.check:ci"}}, admin, 2),
		mk(hubrefs.MemberAdded{Base: hubrefs.Base{Type: hubrefs.TypeMemberAdded, Repo: repo}, Name: "dev", Key: hubrefs.AuthorizedKey(dev), Caps: []string{"hub.pr"}}, admin, 3),
	}
	for i := 1; i < len(log); i++ {
		log[i].Parents = []plumbing.Hash{log[i-1].ID}
	}
	st, err := trust.Fold(log)
	if err != nil {
		t.Fatal(err)
	}
	ev = func(typ string, p hubrefs.Check, signer ssh.PublicKey, at int64) hubrefs.Event {
		p.Base = hubrefs.Base{Type: typ, Repo: repo}
		return mk(p, signer, at)
	}
	return st, ci, dev, ev
}

// TestLiveStart: a check.started holds (name, revision) for the lease,
// unless a check.completed follows it, it has expired, or its signer does
// not hold hub.check:<name>; other names and revisions do not count.
func TestLiveStart(t *testing.T) {
	st, ci, dev, ev := leaseWorld(t)
	const rev = "1111111111111111111111111111111111111111"
	const other = "2222222222222222222222222222222222222222"
	now := time.Unix(10_000, 0)
	lease := 10 * time.Minute
	check := func(name, head string) hubrefs.Check { return hubrefs.Check{Name: name, Head: head} }
	started := func(at int64) hubrefs.Event { return ev(hubrefs.TypeCheckStarted, check("ci", rev), ci, at) }
	completed := func(at int64) hubrefs.Event {
		c := check("ci", rev)
		c.Conclusion = "success"
		return ev(hubrefs.TypeCheckCompleted, c, ci, at)
	}
	for _, tc := range []struct {
		name string
		evs  []hubrefs.Event
		live bool
	}{
		{"none", nil, false},
		{"fresh start", []hubrefs.Event{started(now.Unix() - 60)}, true},
		{"expired", []hubrefs.Event{started(now.Unix() - 600)}, false},
		{"completed after", []hubrefs.Event{started(now.Unix() - 60), completed(now.Unix() - 30)}, false},
		{"restarted after completing", []hubrefs.Event{started(now.Unix() - 90), completed(now.Unix() - 60), started(now.Unix() - 30)}, true},
		{"signer without the capability", []hubrefs.Event{ev(hubrefs.TypeCheckStarted, check("ci", rev), dev, now.Unix()-60)}, false},
		{"another check", []hubrefs.Event{ev(hubrefs.TypeCheckStarted, check("lint", rev), ci, now.Unix()-60)}, false},
		{"another revision", []hubrefs.Event{ev(hubrefs.TypeCheckStarted, check("ci", other), ci, now.Unix()-60)}, false},
	} {
		got := LiveStart(tc.evs, st, "ci", rev, lease, now, nil)
		if (got != "") != tc.live {
			t.Errorf("%s: LiveStart = %q, want live=%v", tc.name, got, tc.live)
		}
		if tc.live && !strings.Contains(got, "by ci") {
			t.Errorf("%s: %q does not name the holder", tc.name, got)
		}
	}
}

// TestLeaseClocks (docs/queue.md, "Clocks and leases"): a reader without
// memory does not believe a start dated more than twice the bound after its
// clock, and believes one dated less; a reader with memory counts a start
// that appeared while it watched from when it saw it, whatever its time
// says (days behind, days ahead), and a start already there at its first
// look by its time, unless dated beyond the cap (then from that first
// look).
func TestLeaseClocks(t *testing.T) {
	st, ci, _, ev := leaseWorld(t)
	const rev = "1111111111111111111111111111111111111111"
	const day = 86400
	lease := 2 * time.Minute
	t0 := time.Unix(1_800_000_000, 0)
	started := func(at int64) []hubrefs.Event {
		return []hubrefs.Event{ev(hubrefs.TypeCheckStarted, hubrefs.Check{Name: "ci", Head: rev}, ci, at)}
	}
	live := func(evs []hubrefs.Event, now time.Time, seen *Sightings) bool {
		return LiveStart(evs, st, "ci", rev, lease, now, seen) != ""
	}

	// Without memory.
	for _, tc := range []struct {
		name string
		at   int64
		live bool
	}{
		{"three days ahead", t0.Unix() + 3*day, false},
		{"ahead by more than twice the bound", t0.Unix() + 601, false},
		{"ahead by twice the bound", t0.Unix() + 600, true},
		{"ahead within the bound", t0.Unix() + 60, true},
		{"a minute old", t0.Unix() - 60, true},
		{"three days old", t0.Unix() - 3*day, false},
	} {
		if got := live(started(tc.at), t0, nil); got != tc.live {
			t.Errorf("without memory, a start %s: live=%v, want %v", tc.name, got, tc.live)
		}
	}

	// With memory: a first look, then starts appearing while it watches.
	seen := NewSightings(time.Hour)
	old := started(t0.Unix() - 3*day)    // dead for days when first seen
	future := started(t0.Unix() + 3*day) // written by a clock days ahead
	seen.See(append(append([]hubrefs.Event{}, old...), future...), t0)
	seen.Watch()
	if live(old, t0, seen) {
		t.Errorf("a start days old at the first look holds the lease")
	}
	if !live(future, t0.Add(lease-time.Second), seen) || live(future, t0.Add(lease), seen) {
		t.Errorf("a start days ahead at the first look does not hold exactly one lease from that look")
	}
	behind := started(t0.Unix() - 3*day) // appears now, from a clock days behind
	behind[0].ID[1] = 1
	ahead := started(t0.Unix() + 3*day) // appears now, from a clock days ahead
	ahead[0].ID[1] = 2
	at := t0.Add(10 * time.Minute)
	seen.See(append(append([]hubrefs.Event{}, behind...), ahead...), at)
	for name, evs := range map[string][]hubrefs.Event{"behind": behind, "ahead": ahead} {
		if !live(evs, at.Add(lease-time.Second), seen) {
			t.Errorf("a start appearing from a clock days %s does not hold the lease from when it was seen", name)
		}
		if live(evs, at.Add(lease), seen) {
			t.Errorf("a start appearing from a clock days %s holds the lease past one lease from when it was seen", name)
		}
	}
	// Forgotten after keep: seen anew.
	seen.See(nil, at.Add(2*time.Hour))
	if !live(behind, at.Add(2*time.Hour), seen) {
		t.Errorf("a start seen again after its sighting was forgotten is not counted from then")
	}
}

// TestCompletions: a lost lease race re-reads and compares the completions
// of (name, revision) by capability holders with its first read; only
// those count.
func TestCompletions(t *testing.T) {
	st, ci, dev, ev := leaseWorld(t)
	const rev = "1111111111111111111111111111111111111111"
	done := func(name, head string, signer ssh.PublicKey) hubrefs.Event {
		return ev(hubrefs.TypeCheckCompleted, hubrefs.Check{Name: name, Head: head, Conclusion: "success"}, signer, 5)
	}
	evs := []hubrefs.Event{
		ev(hubrefs.TypeCheckStarted, hubrefs.Check{Name: "ci", Head: rev}, ci, 4),
		done("ci", rev, ci),
		done("ci", rev, dev),  // no hub.check:ci
		done("lint", rev, ci), // another check
		done("ci", "2222222222222222222222222222222222222222", ci), // another revision
		done("ci", rev, ci),
	}
	if n := completions(evs, st, "ci", rev); n != 2 {
		t.Fatalf("completions = %d, want 2", n)
	}
}
