package main

// The repository a simulation runs against, in memory: real git objects
// (blobs, trees, commits in go-git's memory storage) so the planner builds
// real candidate commits with mergetree, and real hub events (pull requests,
// the queue) folded by the real folds. Events are not signed: they carry the
// signer's key as a verified event does (hubrefs.Event.Signer), which is all
// the folds read.

import (
	"crypto/ed25519"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/storage/memory"
	"golang.org/x/crypto/ssh"

	"github.com/gitplus/gitplus/hubrefs"
	"github.com/gitplus/gitplus/hubrefs/pr"
	"github.com/gitplus/gitplus/hubrefs/queue"
	"github.com/gitplus/gitplus/hubrefs/trust"
	"github.com/gitplus/gitplus/mergetree"
	"github.com/gitplus/gitplus/receive/gitobj"
)

const (
	repoID  = "0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b"
	queueID = "0190a1b2-c3d4-7e5f-8a9b-00000000ffff"
	target  = "refs/heads/main"
	// sharedGap spaces the lines of shared.txt that conflicting pairs edit,
	// so two pairs never touch each other's hunks.
	sharedGap = 5
)

// key is a deterministic ed25519 key for member n.
func key(n byte) ssh.PublicKey {
	seed := make([]byte, ed25519.SeedSize)
	seed[0] = n
	k, err := ssh.NewPublicKey(ed25519.NewKeyFromSeed(seed).Public())
	if err != nil {
		panic(err)
	}
	return k
}

// cast is who writes what: a developer opens, a reviewer approves, CI
// checks, the runner (and a person at the queue) writes queue events.
type cast struct {
	dev, reviewer, ci, runner ssh.PublicKey
}

var people = cast{dev: key(1), reviewer: key(2), ci: key(3), runner: key(4)}

func newTrust(b trust.Branch) *trust.State {
	member := func(name string, k ssh.PublicKey, caps ...string) *trust.Member {
		line := strings.TrimSpace(string(ssh.MarshalAuthorizedKey(k)))
		return trust.NewMember(name, k, line, caps)
	}
	rules := trust.DefaultRules()
	rules.Protected[target] = b
	return &trust.State{RepoID: repoID, Rules: rules, Members: map[string]*trust.Member{
		"dev":    member("dev", people.dev, trust.CapPR),
		"rev":    member("rev", people.reviewer, trust.CapReview),
		"ci":     member("ci", people.ci, trust.CheckCap("ci")),
		"runner": member("runner", people.runner, trust.CapQueue),
	}}
}

// repo is the object store and the commits the scenario starts from.
type repo struct {
	store *mergetree.GoGitStore
	base  plumbing.Hash   // the target's first commit
	heads []plumbing.Hash // each pull request's head
}

func (r *repo) write(t plumbing.ObjectType, content []byte) plumbing.Hash {
	h, err := r.store.WriteObject(t, content)
	if err != nil {
		panic(err)
	}
	return h
}

func (r *repo) commit(tree plumbing.Hash, parents []plumbing.Hash, when int64, msg string) plumbing.Hash {
	var b strings.Builder
	fmt.Fprintf(&b, "tree %s\n", tree)
	for _, p := range parents {
		fmt.Fprintf(&b, "parent %s\n", p)
	}
	fmt.Fprintf(&b, "author Dev <dev@example.invalid> %d +0000\ncommitter Dev <dev@example.invalid> %d +0000\n\n%s\n", when, when, msg)
	return r.write(plumbing.CommitObject, []byte(b.String()))
}

// newRepo builds the base commit and one head per pull request, each adding
// its own file on the base. line[i] >= 0 makes pull request i also rewrite
// that line of a shared file with its own text: two pull requests given the
// same line are a conflicting pair, and whichever is chained second cannot
// merge onto the first. With a layout of k partitions (part, lanes.go) the
// files of a pull request are in its partition's directory.
func newRepo(line, part []int, k int, t0 int64) *repo {
	r := &repo{store: mergetree.NewGoGitStore(memory.NewStorage())}
	base, heads := layoutFiles(part, line, k)
	r.base = r.commit(r.treeOf(base), nil, t0, "base")
	for i, files := range heads {
		all := map[string]string{}
		for p, c := range base {
			all[p] = c
		}
		for p, c := range files {
			all[p] = c
		}
		r.heads = append(r.heads, r.commit(r.treeOf(all), []plumbing.Hash{r.base}, t0, fmt.Sprintf("change %d", i)))
	}
	return r
}

// parents reads a commit's parents.
func (r *repo) parents(h plumbing.Hash) []plumbing.Hash {
	typ, raw, err := r.store.ReadObject(h)
	if err != nil || typ != plumbing.CommitObject {
		panic(fmt.Sprintf("commit %s: %v", h, err))
	}
	c, err := gitobj.ParseCommit(raw)
	if err != nil {
		panic(fmt.Sprintf("commit %s: %v", h, err))
	}
	return c.Parents
}

// hubLog is one hub ref's events, linear.
type hubLog struct {
	evs []hubrefs.Event
	tip plumbing.Hash
	seq *int64 // shared counter making event ids unique within a run
}

// add appends an event with payload p signed by k at time now.
func (l *hubLog) add(k ssh.PublicKey, typ string, p any, now int64) hubrefs.Event {
	raw, err := json.Marshal(p)
	if err != nil {
		panic(err)
	}
	*l.seq++
	ev := hubrefs.Event{ID: plumbing.ComputeHash(plumbing.CommitObject, fmt.Appendf(raw, " %d", *l.seq)), Type: typ, Repo: repoID,
		Payload: raw, Time: now, Signer: k}
	if !l.tip.IsZero() {
		ev.Parents = []plumbing.Hash{l.tip}
	}
	l.evs = append(l.evs, ev)
	l.tip = ev.ID
	return ev
}

func base(typ string) hubrefs.Base { return hubrefs.Base{Type: typ, Repo: repoID} }

// prID is pull request i's id.
func prID(i int) string { return fmt.Sprintf("0190a1b2-c3d4-7e5f-8a9b-%012x", i+1) }

// prIndex maps an id made by prID back to i.
func prIndex(id string) int {
	var n int
	fmt.Sscanf(id[len(id)-12:], "%x", &n)
	return n - 1
}

// pullRequest is one pull request's log and its folded state.
type pullRequest struct {
	log   hubLog
	state *pr.State
}

// openPR opens pull request i at head and approves it.
func openPR(t *trust.State, seq *int64, i int, head plumbing.Hash, now int64) *pullRequest {
	p := &pullRequest{log: hubLog{seq: seq}}
	p.log.add(people.dev, hubrefs.TypePROpened, hubrefs.PROpened{Base: base(hubrefs.TypePROpened), ID: prID(i), BaseRef: target, Head: head.String(), Title: fmt.Sprintf("change %d", i)}, now)
	st, err := pr.Fold(p.log.evs, t)
	if err != nil {
		panic(err)
	}
	p.state = st
	p.add(t, people.reviewer, hubrefs.TypeReviewSubmit, hubrefs.Review{Base: base(hubrefs.TypeReviewSubmit), Head: head.String(), BaseRef: target, Verdict: "approve"}, now)
	return p
}

// add appends an event and folds it into the state.
func (p *pullRequest) add(t *trust.State, k ssh.PublicKey, typ string, payload any, now int64) {
	ev := p.log.add(k, typ, payload, now)
	if err := p.state.Apply(ev, t); err != nil {
		panic(fmt.Sprintf("pull request %s: %v", p.state.ID, err))
	}
}

// queueLog is the queue ref; fold folds it with the real fold.
type queueLog struct {
	hubLog
	// The last fold, for the events it folded (the log only grows, and a
	// run has one trust state): a CI job polling the queue reads it.
	folded  *queue.State
	foldedN int
}

func newQueueLog(seq *int64, now int64) *queueLog {
	q := &queueLog{hubLog: hubLog{seq: seq}}
	q.add(people.runner, hubrefs.TypeQueueOpened, hubrefs.QueueOpened{Base: base(hubrefs.TypeQueueOpened), ID: queueID, Target: target}, now)
	return q
}

func (q *queueLog) fold(t *trust.State) *queue.State {
	if q.folded != nil && q.foldedN == len(q.evs) {
		return q.folded
	}
	st, err := queue.Fold(q.evs, t)
	if err != nil {
		panic(err)
	}
	q.folded, q.foldedN = st, len(q.evs)
	return st
}
