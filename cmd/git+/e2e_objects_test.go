package main

// End-to-end tests of the object checks (docs/objects.md, issue #14): a
// commit git reads differently from what the hook would have judged, or a
// tree git's fsck refuses, never reaches a protected branch — through the
// landing of an approved head, through a queue candidate, and through a
// candidate whose merge fact the queue's publication recorded. Objects are
// built with `git hash-object --literally` and pushed with stock git;
// receive.fsckObjects is off in these repositories, so it is the hook that
// refuses (one test shows git refusing on its own with it on).

import (
	"bytes"
	"encoding/hex"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// objWorld is a repository with protected branches (main and one per
// case, so that each group of cases is one push: the hook prints one
// refusal line per refused ref), all at main0, and helpers to build
// malformed objects.
type objWorld struct {
	*e2e
	main0 string
}

func objBranch(kind string, i int) string { return fmt.Sprintf("refs/heads/%s%02d", kind, i) }

func newObjWorld(t *testing.T, perKind map[string]int) *objWorld {
	w := newE2E(t, map[string][]string{
		"dev": {"source.push", "hub.pr", "hub.queue"},
		"rev": {"hub.review"},
		"ci":  {"hub.check:ci"},
	})
	w.git(w.origin, "config", "receive.fsckObjects", "false")
	root := w.commit(nil, map[string]string{"README": "hello\n"}, "root")
	main0 := w.commit([]string{root}, map[string]string{"a.txt": "a\n"}, "second")
	branches := []string{"refs/heads/main"}
	for kind, n := range perKind {
		for i := 0; i < n; i++ {
			branches = append(branches, objBranch(kind, i))
		}
	}
	args := []string{"origin"}
	var rules []string
	for _, b := range branches {
		args = append(args, main0+":"+b)
		rules = append(rules, fmt.Sprintf(`%q: {"requiredApprovals": 1, "requiredChecks": ["ci"], "queueCandidates": true, "queueDepth": 3}`, b))
	}
	if out, err := w.push(args...); err != nil {
		t.Fatalf("creating the branches: %v\n%s", err, out)
	}
	w.mustGP("admin", w.origin, `{"protected": {`+strings.Join(rules, ",\n")+`}}`, "rules", "set", "-")
	w.git(w.work, "fetch", "-q", "origin", "+refs/hub/*:refs/hub/*")
	return &objWorld{e2e: w, main0: main0}
}

// pushRefused pushes refspecs in one git push and checks that it failed,
// that every ref in want was refused with [bad-object] and the fault's
// words, and that no ref of the repository changed.
func (w *objWorld) pushRefused(t *testing.T, want map[string]string, args ...string) {
	t.Helper()
	before := w.refs()
	out, err := w.push(append([]string{"origin"}, args...)...)
	if err == nil {
		t.Fatalf("push succeeded; want refusals:\n%s", out)
	}
	for _, line := range strings.Split(out, "\n") {
		for ref, fault := range want {
			if strings.Contains(line, "git+: refused "+ref+": [bad-object]") && strings.Contains(line, fault) {
				delete(want, ref)
			}
		}
	}
	for ref, fault := range want {
		t.Errorf("%s: no [bad-object] refusal naming %s", ref, fault)
	}
	if after := w.refs(); after != before {
		t.Fatalf("refused, but refs changed:\nbefore:\n%s\nafter:\n%s", before, after)
	}
	if t.Failed() {
		t.Logf("push output:\n%s", out)
	}
}

// rawTree stores raw tree bytes as they are (no sorting, no checks).
func (w *objWorld) rawTree(raw []byte) string {
	w.t.Helper()
	cmd := exec.Command("git", "hash-object", "-w", "-t", "tree", "--literally", "--stdin")
	cmd.Dir, cmd.Env, cmd.Stdin = w.work, w.env, bytes.NewReader(raw)
	out, err := cmd.Output()
	if err != nil {
		w.t.Fatalf("hash-object tree: %v", err)
	}
	return strings.TrimSpace(string(out))
}

// entry is one raw tree entry.
func entry(mode, name, id string) []byte {
	b, err := hex.DecodeString(id)
	if err != nil || len(b) != 20 {
		panic("bad id " + id)
	}
	return append(append([]byte(mode+" "+name), 0), b...)
}

// withSubtree returns a commit on main0 whose tree is main0's with the
// entry evil → tree sub added (the tree is written as git would).
func (w *objWorld) withSubtree(sub, msg string) string {
	w.t.Helper()
	ls := w.git(w.work, "ls-tree", w.main0)
	tree := w.gitIn(w.work, ls+"\n040000 tree "+sub+"\tevil\n", "mktree", "--missing")
	return w.commitTree(tree, []string{w.main0}, msg)
}

func ident(role string) string {
	return fmt.Sprintf("%s T Ester <t@example.com> 1700000000 +0000\n", role)
}

// TestObjectsCommitAttacks: attacks 1, 2 and 5 of issue #14, each a
// candidate whose approved head has its checks recorded on it; pushed as a
// landing (forced, where git would read a rewrite), then to the queue's
// candidate branch and landed again (the merge-fact path).
func TestObjectsCommitAttacks(t *testing.T) {
	t.Parallel()
	attacks := []struct{ name, fault string }{
		{"two tree headers", "missingAuthor"},
		{"tree repeated after the committer", "repeatedHeader"},
		{"parents after the author", "missingCommitter"},
		{"encoding between tree and parent", "missingAuthor"},
		{"mergetag between tree and parent", "missingAuthor"},
		{"gpgsig between tree and parent", "missingAuthor"},
	}
	w := newObjWorld(t, map[string]int{"a": len(attacks)})
	h := w.commit([]string{w.main0}, map[string]string{"h.txt": "h\n"}, "feature")
	merged := w.mergeTree(w.main0, h)
	evil := w.commit([]string{w.main0}, map[string]string{"backdoor.sh": "evil\n"}, "evil")
	evilTree := w.treeOf(evil)
	parents := "parent " + w.main0 + "\nparent " + h + "\n"
	raws := []string{
		"tree " + evilTree + "\n" + parents + "tree " + merged + "\n" + ident("author") + ident("committer") + "\nC\n",
		"tree " + evilTree + "\n" + parents + ident("author") + ident("committer") + "tree " + merged + "\n\nC\n",
		"tree " + merged + "\n" + ident("author") + parents + ident("committer") + "\nC\n",
		"tree " + merged + "\nencoding UTF-8\n" + parents + ident("author") + ident("committer") + "\nC\n",
		"tree " + merged + "\nmergetag object " + h + "\n type commit\n" + parents + ident("author") + ident("committer") + "\nC\n",
		"tree " + merged + "\ngpgsig -----BEGIN SSH SIGNATURE-----\n x\n -----END SSH SIGNATURE-----\n" + parents + ident("author") + ident("committer") + "\nC\n",
	}
	var prs []*localPR
	land, publish := []string{"--force"}, []string{"--force"}
	want := map[string]string{}
	for i, raw := range raws {
		id := w.writeRaw([]byte(raw))
		p := w.localPR("dev", objBranch("a", i), h).approve("rev").pass("ci", id)
		prs = append(prs, p)
		land = append(land, id+":"+objBranch("a", i))
		publish = append(publish, id+":refs/heads/queue/"+strings.TrimPrefix(objBranch("a", i), "refs/heads/")+"/"+p.ID)
		want[objBranch("a", i)] = attacks[i].fault
	}
	w.pushPRs(prs...)
	copyOf := func(m map[string]string) map[string]string {
		c := map[string]string{}
		for k, v := range m {
			c[k] = v
		}
		return c
	}
	t.Run("landing", func(t *testing.T) { w.pushRefused(t, copyOf(want), land...) })
	t.Run("landing after the queue published them", func(t *testing.T) {
		// Candidate branches are unprotected: git and the hook take them,
		// and no merge fact is recorded for a bad candidate.
		if out, err := w.push(append([]string{"origin"}, publish...)...); err != nil {
			t.Fatalf("pushing the candidate branches: %v\n%s", err, out)
		}
		// The same signed push again: git's push-certificate nonce changes
		// once a second, and a certificate used before is refused as a
		// replay (push-cert-nonce), so let the second turn first.
		time.Sleep(time.Until(time.Now().Truncate(time.Second).Add(1100 * time.Millisecond)))
		w.pushRefused(t, copyOf(want), land...)
	})
	t.Run("the well-formed candidate lands", func(t *testing.T) {
		good := w.candidate(w.main0, h, "C")
		w.pushPRs(prs[0].pass("ci", good))
		w.expectAccepted(t, objBranch("a", 0), good, "origin", good+":"+objBranch("a", 0))
	})
}

// TestObjectsTreeFaults: attack 6 of issue #14 and the spellings of .git
// and .gitmodules: a head whose tree holds a tree git's fsck refuses is
// refused when it lands (approved, checked), and so is the candidate that
// merges it (the merge copies the subtree unchanged).
func TestObjectsTreeFaults(t *testing.T) {
	t.Parallel()
	w := newObjWorld(t, map[string]int{"t": 17})
	const main = "refs/heads/main"
	blob := w.blob("x\n")
	hookBlob := w.blob("#!/bin/sh\necho pwned\n")
	empty := w.gitIn(w.work, "", "mktree")
	hooks := w.rawTree(entry("100755", "post-checkout", hookBlob))
	dotgit := w.rawTree(entry("40000", "hooks", hooks))
	cat := func(es ...[]byte) []byte { return bytes.Join(es, nil) }
	faults := []struct {
		name, code string
		tree       []byte
	}{
		{".git/hooks/post-checkout", "hasDotgit", entry("40000", ".git", dotgit)},
		{".GIT", "hasDotgit", entry("100644", ".GIT", blob)},
		{"..", "hasDotdot", entry("40000", "..", empty)},
		{".", "hasDot", entry("40000", ".", empty)},
		{"duplicate f.txt", "duplicateEntries", cat(entry("100644", "f.txt", blob), entry("100644", "f.txt", blob))},
		{"file and directory f", "duplicateEntries", cat(entry("100644", "f", blob), entry("100644", "f.txt", blob), entry("40000", "f", empty))},
		{"unsorted", "treeNotSorted", cat(entry("100644", "b", blob), entry("100644", "a", blob))},
		{"mode 100664", "badFilemode", entry("100664", "a", blob)},
		{"zero-padded mode", "zeroPaddedFilemode", entry("040000", "d", empty)},
		{"symlink .gitmodules", "gitmodulesSymlink", entry("120000", ".gitmodules", blob)},
		{"name with a slash", "fullPathname", entry("100644", "a/b", blob)},
		{"HFS .git", "hasDotgit", entry("100644", ".g\u200cit", blob)},
		{"NTFS short name git~1", "hasDotgit", entry("100644", "GIT~1", blob)},
		{"NTFS trailing dots", "hasDotgit", entry("100644", ".git. .", blob)},
		{"NTFS stream", "hasDotgit", entry("100644", ".git::$INDEX_ALLOCATION", blob)},
		{"NTFS .gitmodules short name symlink", "gitmodulesSymlink", entry("120000", "GITMOD~1", blob)},
		{"HFS .gitmodules symlink", "gitmodulesSymlink", entry("120000", ".gitmodules\u200d", blob)},
	}
	var heads, cands []string
	var prs []*localPR
	want := map[string]string{}
	for i, f := range faults {
		head := w.withSubtree(w.rawTree(f.tree), "adds "+f.name)
		cand := w.candidate(w.main0, head, "candidate "+f.name)
		b := objBranch("t", i)
		prs = append(prs, w.localPR("dev", b, head).approve("rev").pass("ci", head, cand))
		heads = append(heads, head+":"+b)
		cands = append(cands, cand+":"+b)
		want[b] = f.code
	}
	w.pushPRs(prs...)
	copyOf := func() map[string]string {
		c := map[string]string{}
		for k, v := range want {
			c[k] = v
		}
		return c
	}
	t.Run("approved heads", func(t *testing.T) { w.pushRefused(t, copyOf(), heads...) })
	t.Run("candidates", func(t *testing.T) { w.pushRefused(t, copyOf(), cands...) })
	t.Run("candidates after the queue published them", func(t *testing.T) {
		// Each candidate itself is well formed and merges cleanly (the
		// merge takes the bad subtree whole, unread): only the object
		// check when the hook learns its merge fact keeps the fact from
		// vouching for it at the landing.
		publish := []string{"origin"}
		for i, c := range cands {
			id, b, _ := strings.Cut(c, ":")
			publish = append(publish, id+":refs/heads/queue/"+strings.TrimPrefix(b, "refs/heads/")+"/"+prs[i].ID)
		}
		if out, err := w.push(publish...); err != nil {
			t.Fatalf("pushing the candidate branches: %v\n%s", err, out)
		}
		w.pushRefused(t, copyOf(), cands...)
	})

	// A gitlink names a commit of another repository, so one whose commit
	// is not here is what every submodule is: git fsck, clone and checkout
	// take it (docs/objects.md), and so does the hook.
	t.Run("gitlink to a missing commit lands", func(t *testing.T) {
		sub := w.rawTree(entry("160000", "lib", strings.Repeat("5a", 20)))
		head := w.withSubtree(sub, "adds a submodule")
		w.pushPRs(w.localPR("dev", main, head).approve("rev").pass("ci", head))
		w.expectAccepted(t, main, head, "origin", head+":"+main)
		clone := filepath.Join(t.TempDir(), "clone")
		w.git(w.work, "clone", "-q", "-b", "main", w.origin, clone)
		if out := w.git(clone, "ls-files", "--stage", "evil/lib"); !strings.HasPrefix(out, "160000 "+strings.Repeat("5a", 20)) {
			t.Fatalf("clone's index has %q for evil/lib, want the gitlink", out)
		}
	})

	// With receive.fsckObjects on (as git+ hook install sets it) git
	// refuses the pack itself, before the hook runs, on any branch.
	t.Run("git refuses with receive.fsckObjects", func(t *testing.T) {
		w.git(w.origin, "config", "receive.fsckObjects", "true")
		before := w.refs()
		fresh := w.withSubtree(w.rawTree(entry("100644", ".GIT", w.blob("fresh\n"))), "adds .GIT") // objects not pushed yet
		out, err := w.push("origin", fresh+":refs/heads/topic")
		if err == nil || !strings.Contains(out, "hasDotgit") {
			t.Fatalf("push of a .GIT tree with receive.fsckObjects: want git's hasDotgit refusal:\n%s", out)
		}
		if strings.Contains(out, "git+: refused") {
			t.Fatalf("the hook ran; git should have refused the pack first:\n%s", out)
		}
		if after := w.refs(); after != before {
			t.Fatalf("refused, but refs changed:\n%s\n%s", before, after)
		}
	})
}
