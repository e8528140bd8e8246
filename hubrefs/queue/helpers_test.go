package queue

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"
	"golang.org/x/crypto/ssh"

	"github.com/gitplus/gitplus/fixtures"
	"github.com/gitplus/gitplus/hubrefs"
	"github.com/gitplus/gitplus/hubrefs/pr"
	"github.com/gitplus/gitplus/hubrefs/trust"
)

const (
	repoID  = "0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b"
	queueID = "0190a1b2-c3d4-7e5f-8a9b-000000000f00"
	main    = "refs/heads/main"
)

func prID(name string) string {
	return "0190a1b2-c3d4-7e5f-8a9b-0000000000" + fmt.Sprintf("%02x", name[0])
}

func hex(s string) string { return plumbing.ComputeHash(plumbing.BlobObject, []byte(s)).String() }

func newKey(t testing.TB) ssh.PublicKey { return fixtures.NewSSHSigner(t).PublicKey() }

type cast struct {
	alice, bob, ci, runner, outsider ssh.PublicKey
	t                                *trust.State
}

func newCast(t testing.TB) *cast {
	c := &cast{alice: newKey(t), bob: newKey(t), ci: newKey(t), runner: newKey(t), outsider: newKey(t)}
	c.t = &trust.State{RepoID: repoID, Rules: trust.DefaultRules(), Members: map[string]*trust.Member{
		"alice":  {Name: "alice", Key: c.alice, Caps: []string{"hub.pr"}},
		"bob":    {Name: "bob", Key: c.bob, Caps: []string{"hub.review"}},
		"ci":     {Name: "ci", Key: c.ci, Caps: []string{"hub.check:ci"}},
		"runner": {Name: "runner", Key: c.runner, Caps: []string{"hub.queue"}},
	}}
	return c
}

var seq int

// ev builds an event with the given payload fields, parented on prev (nil for a root).
func ev(prev *hubrefs.Event, signer ssh.PublicKey, typ string, fields ...any) hubrefs.Event {
	seq++
	p := map[string]any{"type": typ, "repo": repoID}
	for i := 0; i+1 < len(fields); i += 2 {
		p[fields[i].(string)] = fields[i+1]
	}
	raw, _ := json.Marshal(p)
	e := hubrefs.Event{ID: plumbing.ComputeHash(plumbing.CommitObject, fmt.Appendf(raw, "%d", seq)), Type: typ, Repo: repoID, Payload: raw, Signer: signer, Time: int64(seq)}
	if prev != nil {
		e.Parents = []plumbing.Hash{prev.ID}
	}
	return e
}

// log is a linear event log under construction.
type log struct{ evs []hubrefs.Event }

func (l *log) add(signer ssh.PublicKey, typ string, fields ...any) *log {
	var prev *hubrefs.Event
	if len(l.evs) > 0 {
		prev = &l.evs[len(l.evs)-1]
	}
	l.evs = append(l.evs, ev(prev, signer, typ, fields...))
	return l
}

// prSpec describes a pull request for a scenario.
type prSpec struct {
	head    string // entered head (name, hashed)
	moved   string // a later head (pr.updated)
	unready bool   // no approval
	closed  bool
	merged  bool // pr.merged already recorded for head
	base    string
	checks  []chk
}

type chk struct {
	rev        plumbing.Hash
	conclusion string
}

func (c *cast) pr(t testing.TB, name string, s prSpec) *pr.State {
	t.Helper()
	base := s.base
	if base == "" {
		base = main
	}
	l := &log{}
	l.add(c.alice, hubrefs.TypePROpened, "id", prID(name), "base", base, "head", hex(s.head), "title", "Change "+name)
	head := hex(s.head)
	if s.moved != "" {
		head = hex(s.moved)
		l.add(c.alice, hubrefs.TypePRUpdated, "head", head)
	}
	if !s.unready {
		l.add(c.bob, hubrefs.TypeReviewSubmit, "head", head, "base", base, "verdict", "approve")
	}
	for _, k := range s.checks {
		l.add(c.ci, hubrefs.TypeCheckCompleted, "name", "ci", "head", k.rev.String(), "conclusion", k.conclusion)
	}
	if s.merged {
		l.add(c.runner, hubrefs.TypePRMerged, "revision", hex(s.head), "branch", main, "commit", hex(s.head))
	}
	if s.closed {
		l.add(c.alice, hubrefs.TypePRClosed)
	}
	st, err := pr.Fold(l.evs, c.t)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// fakeStep is the fake candidate of head onto parent.
func fakeStep(parent plumbing.Hash, head string) plumbing.Hash {
	return plumbing.ComputeHash(plumbing.CommitObject, []byte("cand "+parent.String()+" "+head))
}

// step returns the chain commit after merging the heads (names) in order onto parent.
func step(parent plumbing.Hash, heads ...string) plumbing.Hash {
	for _, h := range heads {
		parent = fakeStep(parent, hex(h))
	}
	return parent
}

// nameOf maps a pull request id made by prID back to its name.
func nameOf(id string) string {
	var b byte
	fmt.Sscanf(id[len(id)-2:], "%02x", &b)
	return string(rune(b))
}
