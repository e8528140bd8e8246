package main

// Issue #35 items 1 to 3, driven as an attacker would: each member works
// in a clone of their own over `git+ serve` (HTTP, every push signed with
// the member's key), a commit is put "around the hook" with git update-ref
// in the served repository (a tampered replica), and `git+ verify --branch
// main` runs on a fresh mirror clone.

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/gitplus/gitplus/hubrefs"
	"github.com/gitplus/gitplus/receive"
	"github.com/gitplus/gitplus/receive/repo"
)

// served is a repository under git+ serve with each member's own clone.
type served struct {
	*e2e
	s      *gpServer
	url    string
	clones map[string]string
}

// newServed initialises a repository with members, pushes a root commit
// of files to main (before any rules), starts git+ serve and clones it
// over HTTP for each member, whose pushes are signed with their key.
func newServed(t *testing.T, members map[string][]string, files map[string]string) *served {
	t.Helper()
	w := newE2E(t, members)
	root := w.commit(nil, files, "root")
	w.expectAccepted(t, "refs/heads/main", root, "origin", root+":refs/heads/main")
	sv := &served{e2e: w, clones: map[string]string{}}
	sv.s = startServe(t, w.bin, w.env, filepath.Dir(w.origin))
	sv.url = sv.s.URL + "/origin.git"
	names := []string{"admin"}
	for name := range members {
		names = append(names, name)
	}
	for _, name := range names {
		dir := filepath.Join(t.TempDir(), name)
		w.git(filepath.Dir(dir), "clone", "-q", sv.url, dir)
		signClone(t, dir, w.keys[name].Path, w.bin)
		w.git(dir, "config", "user.name", name)
		w.git(dir, "config", "user.email", name+"@example.invalid")
		sv.clones[name] = dir
	}
	return sv
}

// as runs git+ in who's clone, signing with who's key.
func (sv *served) as(who string, args ...string) (string, string, int) {
	sv.t.Helper()
	return sv.gp(who, sv.clones[who], "", args...)
}

func (sv *served) mustAs(who string, args ...string) string {
	sv.t.Helper()
	out, errs, code := sv.as(who, args...)
	if code != 0 {
		sv.t.Fatalf("%s: git+ %s: exit %d\n%s%s", who, strings.Join(args, " "), code, out, errs)
	}
	return out
}

// change commits files on top of parents in who's clone (no ref moves)
// and pushes it to branch br.
func (sv *served) change(who string, parents []string, files map[string]string, msg, br string) string {
	sv.t.Helper()
	dir := sv.clones[who]
	sv.fetchHub(who)
	idx := filepath.Join(sv.t.TempDir(), "index")
	env := []string{"GIT_INDEX_FILE=" + idx}
	run := func(stdin string, args ...string) string {
		out, errs, err := sv.gitRun(dir, stdin, env, args...)
		if err != nil {
			sv.t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, errs)
		}
		return out
	}
	run("", "read-tree", parents[0])
	var info strings.Builder
	for p, content := range files {
		blob := run(content, "hash-object", "-w", "--stdin")
		fmt.Fprintf(&info, "100644 %s\t%s\n", blob, p)
	}
	if info.Len() > 0 {
		run(info.String(), "update-index", "--add", "--index-info")
	}
	args := []string{"commit-tree", run("", "write-tree"), "-m", msg}
	for _, p := range parents {
		args = append(args, "-p", p)
	}
	c := run("", args...)
	sv.git(dir, "push", "-q", "origin", c+":refs/heads/"+br)
	return c
}

// merge has who merge theirs into ours as git merge does (the tree git
// merge-tree writes, parents [ours, theirs]) and push it to branch br.
func (sv *served) merge(who, ours, theirs, msg, br string) string {
	sv.t.Helper()
	dir := sv.clones[who]
	sv.fetchHub(who)
	tree := strings.Fields(sv.git(dir, "merge-tree", "--write-tree", ours, theirs))[0]
	c := sv.git(dir, "commit-tree", tree, "-p", ours, "-p", theirs, "-m", msg)
	sv.git(dir, "push", "-q", "origin", "+"+c+":refs/heads/"+br)
	return c
}

// open has who open a pull request of head onto main.
func (sv *served) open(who, head, title string) string {
	sv.t.Helper()
	return e2eLastLine(sv.mustAs(who, "pr", "open", "--base", "main", "--head", head, "--title", title))
}

// fetchHub brings who's clone's refs/hub/* and main up to date.
func (sv *served) fetchHub(who string) {
	sv.t.Helper()
	sv.git(sv.clones[who], "fetch", "-q", "origin", "+refs/hub/*:refs/hub/*", "+refs/heads/*:refs/remotes/origin/*")
}

// pushEvent has who sign payload as the next event of ref, dated when,
// and push it from their clone with plain git.
func (sv *served) pushEvent(who, ref string, payload any, when time.Time) (string, error) {
	sv.t.Helper()
	sv.fetchHub(who)
	dir := sv.clones[who]
	var parents []plumbing.Hash
	if tip, _, err := sv.gitRun(dir, "", nil, "rev-parse", "--verify", "-q", ref); err == nil && tip != "" {
		parents = []plumbing.Hash{plumbing.NewHash(tip)}
	}
	raw, err := hubrefs.EncodeEvent(payload, parents, who, when, sv.signer(who))
	if err != nil {
		sv.t.Fatal(err)
	}
	id, errs, err := sv.gitRun(dir, string(raw), nil, "hash-object", "-w", "-t", "commit", "--literally", "--stdin")
	if err != nil {
		sv.t.Fatalf("hash-object: %v\n%s", err, errs)
	}
	out, errs, err := sv.gitRun(dir, "", nil, "push", "origin", id+":"+ref)
	return id + "\n" + out + errs, err
}

// recordMerged has who record, with plain git, that commit carried
// revision of pull request id, dated when: as an attacker writes it for
// the server at hand, naming the trust tip it is written under where the
// server knows the field (issue #35), without where it refuses the field.
func (sv *served) recordMerged(who, id, revision, commit string, when time.Time) (string, error) {
	sv.t.Helper()
	sv.fetchHub(who)
	trustTip := sv.git(sv.clones[who], "rev-parse", hubrefs.TrustRef)
	m := hubrefs.PRMerged{Base: sv.base(hubrefs.TypePRMerged), Revision: revision, Branch: "refs/heads/main", Commit: commit, Trust: trustTip}
	out, err := sv.pushEvent(who, hubrefs.PRRefPrefix+id, m, when)
	if err != nil && strings.Contains(out, "[hub-malformed]") && strings.Contains(out, "trust") {
		m.Trust = ""
		return sv.pushEvent(who, hubrefs.PRRefPrefix+id, m, when)
	}
	return out, err
}

// around puts commit on main in the served repository itself, as a
// tampered replica would, the hook never asked: its objects reach the
// repository on a scratch branch first.
func (sv *served) around(who, commit string) {
	sv.t.Helper()
	sv.git(sv.clones[who], "push", "-q", "origin", commit+":refs/heads/scratch/"+commit[:12])
	sv.git(sv.origin, "update-ref", "refs/heads/main", commit)
}

// verifyMirror clones the served repository with --mirror, as any replica
// would, and runs verify --branch main --json there.
func (sv *served) verifyMirror() (receive.AuditJSON, string, int) {
	sv.t.Helper()
	dir := filepath.Join(sv.t.TempDir(), "mirror.git")
	sv.git(filepath.Dir(dir), "clone", "-q", "--mirror", sv.url, dir)
	out, errs, code := sv.gp("", dir, "", "verify", "--branch", "main", "--json")
	var rep receive.AuditJSON
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		sv.t.Fatalf("verify --json: exit %d: %v\n%s%s", code, err, out, errs)
	}
	return rep, out, code
}

// TestMergedTrailersAloneE2E (issue #35 item 1): on a branch that takes
// merge steps, alice lands her own reviewed pull request whose commit
// carries bob's Git-Plus-PR and Git-Plus-Head trailers, then records bob's
// pull request as merged by that commit. The hook refuses it
// [merged-not-landed] and changes no ref; bob's pull request stays open;
// verify on a fresh mirror finds nothing wrong. The same record placed
// around the hook is what verify then reports, [merged-not-landed], naming
// bob's pull request.
func TestMergedTrailersAloneE2E(t *testing.T) {
	t.Parallel()
	sv := newServed(t, map[string][]string{
		"alice": {"source.push", "hub.pr"},
		"bob":   {"source.push", "hub.pr"},
		"rev":   {"hub.review"},
	}, map[string]string{"README": "hello\n"})
	sv.mustGP("admin", sv.origin, `{"protected":{"refs/heads/main":{"requiredApprovals":1,"requiredChecks":[],"mergeMethod":"merge"}}}`, "rules", "set", "-")
	main0 := sv.ref("refs/heads/main")

	hb := sv.change("bob", []string{main0}, map[string]string{"bob.txt": "bob's change\n"}, "bob's change", "bob")
	bob := sv.open("bob", hb, "bob's change")

	msg := fmt.Sprintf("alice's change\n\nGit-Plus-PR: %s\nGit-Plus-Head: %s\n", bob, hb)
	ha := sv.change("alice", []string{main0}, map[string]string{"alice.txt": "alice's change\n"}, msg, "alice")
	alice := sv.open("alice", ha, "alice's change")
	sv.mustAs("rev", "pr", "review", alice, "--approve")
	sv.mustAs("alice", "pr", "merge", alice)
	if got := sv.ref("refs/heads/main"); got != ha {
		t.Fatalf("alice's landing: main = %s, want %s", got, ha)
	}

	before := sv.refs()
	out, err := sv.recordMerged("alice", bob, hb, ha, time.Now())
	if err == nil || !strings.Contains(out, "[merged-not-landed]") {
		t.Fatalf("alice's pr.merged of bob's pull request by her commit: want [merged-not-landed] (err %v)\n%s", err, out)
	}
	if after := sv.refs(); after != before {
		t.Fatalf("a refused pr.merged changed refs:\nbefore:\n%s\nafter:\n%s", before, after)
	}
	var v repo.PRView
	if err := json.Unmarshal([]byte(sv.mustAs("bob", "pr", "show", bob, "--json")), &v); err != nil || v.State != "open" {
		t.Fatalf("bob's pull request after the refused record: %+v (%v)", v, err)
	}
	if rep, out, code := sv.verifyMirror(); code != 0 || !rep.OK {
		t.Fatalf("verify on a mirror after the refusal: exit %d\n%s", code, out)
	}

	// The record around the hook: verify says it is false.
	id := strings.Fields(out)[0]
	sv.git(sv.clones["alice"], "push", "-q", "origin", id+":refs/heads/scratch/record")
	sv.git(sv.origin, "update-ref", hubrefs.PRRefPrefix+bob, id)
	rep, vout, code := sv.verifyMirror()
	if code != 1 || rep.OK || len(rep.Unjustified) != 1 || rep.Unjustified[0].Commit != ha || rep.Unjustified[0].Code != "merged-not-landed" ||
		!strings.Contains(rep.Unjustified[0].Reason, bob) {
		t.Fatalf("verify on a mirror with bob's false record: exit %d, want [merged-not-landed] on %s naming %s\n%s", code, ha, bob, vout)
	}
}

// TestRulesByCausalityE2E (issue #35 item 2). (b) dev's pull request lands
// under one approval and is recorded by pr merge; the admin then requires
// two approvals in the very second the record was written: verify on a
// fresh mirror judges the landing under the rules it landed by (before:
// under the later rules, a false alarm). (a) mallory's unreviewed commit
// is put on main around the hook, and she records its pr.merged dated a
// second before repo.created, where nothing is protected: the hook takes
// the record (the commit is on main), and verify still flags the commit
// [not-approved] (before: 0 unjustified).
func TestRulesByCausalityE2E(t *testing.T) {
	t.Parallel()
	sv := newServed(t, map[string][]string{
		"dev":     {"source.push", "hub.pr"},
		"mallory": {"source.push", "hub.pr"},
		"rev":     {"hub.review"},
	}, map[string]string{"README": "hello\n"})
	const one = `{"protected":{"refs/heads/main":{"requiredApprovals":1,"requiredChecks":[]}}}`
	const two = `{"protected":{"refs/heads/main":{"requiredApprovals":2,"requiredChecks":[]}}}`
	sv.mustGP("admin", sv.origin, one, "rules", "set", "-")
	main0 := sv.ref("refs/heads/main")

	// (b) The honest side.
	h := sv.change("dev", []string{main0}, map[string]string{"dev.txt": "dev\n"}, "dev's change", "dev")
	id := sv.open("dev", h, "dev's change")
	sv.mustAs("rev", "pr", "review", id, "--approve")
	sv.mustAs("dev", "pr", "merge", id)
	recorded, err := strconv.ParseInt(sv.git(sv.origin, "log", "-1", "--format=%ct", hubrefs.PRRefPrefix+id), 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	if out, err := sv.pushEvent("admin", hubrefs.TrustRef, hubrefs.RulesSet{Base: sv.base(hubrefs.TypeRulesSet), Rules: json.RawMessage(two)}, time.Unix(recorded, 0)); err != nil {
		t.Fatalf("rules set in the second of the record: %v\n%s", err, out)
	}
	if rep, out, code := sv.verifyMirror(); code != 0 || !rep.OK {
		t.Fatalf("verify on a mirror after the rules tightened in the second of dev's record: exit %d, want 0\n%s", code, out)
	}

	// (a) Around the hook, with a backdated record.
	x := sv.change("mallory", []string{h}, map[string]string{"x.txt": "unreviewed\n"}, "unreviewed", "mallory")
	mid := sv.open("mallory", x, "unreviewed")
	sv.around("mallory", x)
	created, err := strconv.ParseInt(strings.Fields(sv.git(sv.origin, "log", "--reverse", "--format=%ct", hubrefs.TrustRef))[0], 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	if out, err := sv.recordMerged("mallory", mid, x, x, time.Unix(created-1, 0)); err != nil {
		t.Fatalf("mallory's backdated pr.merged: the hook refused it (%v):\n%s", err, out)
	}

	rep, out, code := sv.verifyMirror()
	if code != 1 || len(rep.Unjustified) != 1 || rep.Unjustified[0].Commit != x || rep.Unjustified[0].Code != "not-approved" {
		t.Fatalf("verify on a mirror: exit %d; want exactly %s unjustified [not-approved] (and dev's landing %s justified)\n%s", code, x, h, out)
	}
}

// TestOwnersMergedMainE2E (issue #35 item 3): docs/** needs its owner's
// approval. While dev works on a feature branch, an owner-approved docs
// change lands; dev merges main into the feature (its first parent is the
// feature) and lands it with a reviewer's approval: the hook judges the
// files it changes since main's tip, none of them owned, and verify on a
// fresh mirror agrees (before: it diffed from the fork point and flagged
// the docs change [owners]). mallory's head that merges main and puts the
// docs back as they were before the owner approved them is refused
// [owners]; put on main around the hook (its pr.merged recorded through
// it), verify flags it [owners] (before: 0 unjustified).
func TestOwnersMergedMainE2E(t *testing.T) {
	t.Parallel()
	sv := newServed(t, map[string][]string{
		"dev":     {"source.push", "hub.pr"},
		"mallory": {"source.push", "hub.pr"},
		"ann":     {"hub.review"},
		"doc":     {"hub.review"},
	}, map[string]string{"README": "hello\n", "manual/guide.txt": "v1\n"})
	sv.mustGP("admin", sv.origin, `{"protected":{"refs/heads/main":{"requiredApprovals":1,"requiredChecks":[],
		"owners":[{"paths":["manual/**"],"approvers":["doc"]}]}}}`, "rules", "set", "-")
	fork := sv.ref("refs/heads/main")

	// dev's feature, forked at the root.
	f1 := sv.change("dev", []string{fork}, map[string]string{"feature.txt": "feature\n"}, "feature", "feature")

	// An owner-approved docs change lands meanwhile.
	d := sv.change("dev", []string{fork}, map[string]string{"manual/guide.txt": "v2, approved by its owner\n"}, "docs v2", "docs")
	did := sv.open("dev", d, "docs v2")
	sv.mustAs("doc", "pr", "review", did, "--approve")
	sv.mustAs("dev", "pr", "merge", did)
	o := sv.ref("refs/heads/main")

	// dev merges main into the feature (git merge origin/main) and lands it.
	h := sv.merge("dev", f1, o, "Merge branch 'main' into feature", "feature")
	hid := sv.open("dev", h, "feature")
	sv.mustAs("ann", "pr", "review", hid, "--approve")
	sv.mustAs("dev", "pr", "merge", hid)
	if got := sv.ref("refs/heads/main"); got != h {
		t.Fatalf("the head that merged main did not land: main = %s, want %s", got, h)
	}
	if rep, out, code := sv.verifyMirror(); code != 0 || !rep.OK {
		t.Fatalf("verify on a mirror after an honest landing of a head that merged main: exit %d\n%s", code, out)
	}

	// mallory's rollback: her branch (forked at the root) merges main, then
	// puts manual/guide.txt back to v1.
	sv.fetchHub("mallory")
	m1 := sv.change("mallory", []string{fork}, map[string]string{"mallory.txt": "cover\n"}, "cover", "mallory")
	m2 := sv.merge("mallory", m1, h, "Merge branch 'main' into mallory", "mallory")
	r := sv.change("mallory", []string{m2}, map[string]string{"manual/guide.txt": "v1\n"}, "tidy", "mallory-r")
	rid := sv.open("mallory", r, "tidy")
	sv.mustAs("ann", "pr", "review", rid, "--approve")
	before := sv.refs()
	out, errs, code := sv.as("mallory", "pr", "merge", rid)
	if code == 0 || !strings.Contains(out+errs, "[owners]") {
		t.Fatalf("pr merge of mallory's rollback: exit %d, want [owners]\n%s%s", code, out, errs)
	}
	if after := sv.refs(); after != before {
		t.Fatalf("a refused landing changed refs:\nbefore:\n%s\nafter:\n%s", before, after)
	}
	if _, errs, err := sv.gitRun(sv.clones["mallory"], "", nil, "push", "origin", r+":refs/heads/main"); err == nil || !strings.Contains(errs, "[owners]") {
		t.Fatalf("mallory's push of the rollback onto main: want [owners]\n%s", errs)
	}

	sv.around("mallory", r)
	if out, err := sv.recordMerged("mallory", rid, r, r, time.Now()); err != nil {
		t.Fatalf("mallory's pr.merged of the rollback (on main now): %v\n%s", err, out)
	}
	// The rollback is flagged; below it only mallory's own commits, which
	// nothing landed covers.
	rep, vout, vcode := sv.verifyMirror()
	ok := vcode == 1
	flagged := false
	for _, f := range rep.Unjustified {
		switch f.Commit {
		case r:
			flagged = f.Code == "owners" && strings.Contains(f.Reason, "manual/guide.txt")
		case m1, m2:
		default:
			ok = false
		}
	}
	if !ok || !flagged {
		t.Fatalf("verify on a mirror with the rollback on main: exit %d; want %s unjustified [owners] naming manual/guide.txt (and nothing but mallory's own commits below it)\n%s", vcode, r, vout)
	}
}
