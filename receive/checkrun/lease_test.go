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
		got := LiveStart(tc.evs, st, "ci", rev, lease, now)
		if (got != "") != tc.live {
			t.Errorf("%s: LiveStart = %q, want live=%v", tc.name, got, tc.live)
		}
		if tc.live && !strings.Contains(got, "by ci") {
			t.Errorf("%s: %q does not name the holder", tc.name, got)
		}
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
