package main

// End-to-end tests of git+ verify (docs/architecture.md) and whoami --branch: a
// history of direct landings and a candidate chain audits clean, on the
// server repository and on a `git clone --mirror` replica; each way around
// the boundary is caught on both.

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gitplus/gitplus/hubrefs"
	"github.com/gitplus/gitplus/receive"
	"github.com/gitplus/gitplus/receive/repo"
)

const verifyRulesJSON = `{
  "protected": {
    "refs/heads/main": {"requiredApprovals": 1, "requiredChecks": ["ci"], "queueCandidates": true, "queueDepth": 3}
  }
}`

func TestVerify(t *testing.T) {
	t.Parallel()
	w := newE2E(t, map[string][]string{
		"dev": {"source.push", "hub.pr", "hub.queue"},
		"rev": {"hub.review"},
		"ci":  {"hub.check:ci"},
	})
	const main = "refs/heads/main"
	root := w.commit(nil, map[string]string{"README": "hello\n"}, "root")
	main0 := w.commit([]string{root}, map[string]string{"a.txt": "a\n"}, "before protection")
	w.expectAccepted(t, main, main0, "origin", main0+":"+main)
	w.mustGP("admin", w.origin, verifyRulesJSON, "rules", "set", "-")
	if err := hubrefs.Fetch(t.Context(), w.work, "origin"); err != nil {
		t.Fatal(err)
	}

	// audit runs verify --branch main on dir and returns the report and exit code.
	audit := func(dir string, extra ...string) (receive.AuditJSON, string, int) {
		t.Helper()
		args := append([]string{"--repo", dir, "verify", "--branch", "main", "--json"}, extra...)
		out, errs, code := w.gp("", w.work, "", args...)
		var rep receive.AuditJSON
		if err := json.Unmarshal([]byte(out), &rep); err != nil {
			t.Fatalf("verify --json: %v\nstdout: %s\nstderr: %s", err, out, errs)
		}
		return rep, out, code
	}
	mirror := func() string {
		t.Helper()
		dir := filepath.Join(t.TempDir(), "mirror.git")
		w.git(w.work, "clone", "-q", "--mirror", w.origin, dir)
		return dir
	}
	// both audits the server and a fresh mirror and expects the same result.
	both := func(t *testing.T, wantOK bool, bad string, code string) {
		t.Helper()
		for _, dir := range []string{w.origin, mirror()} {
			rep, out, exit := audit(dir, "--since", main0)
			if wantOK {
				if exit != 0 || !rep.OK || len(rep.Unjustified) != 0 {
					t.Fatalf("audit of %s: exit %d, want a clean audit:\n%s", dir, exit, out)
				}
				continue
			}
			if exit != 1 || rep.OK || len(rep.Unjustified) != 1 || rep.Unjustified[0].Commit != bad || rep.Unjustified[0].Code != code {
				t.Fatalf("audit of %s: exit %d; want exactly %s unjustified with [%s]:\n%s", dir, exit, bad, code, out)
			}
		}
	}

	// A history of direct landings through git+ pr merge, each head two
	// commits above the branch.
	for i, name := range []string{"one", "two"} {
		base := w.ref(main)
		mid := w.commit([]string{base}, map[string]string{name + ".txt": "draft\n"}, "draft "+name)
		h := w.commit([]string{mid}, map[string]string{name + ".txt": name + "\n"}, "feature "+name)
		w.git(w.work, "push", "-q", "origin", h+":refs/heads/feature-"+name)
		id := e2eLastLine(w.mustGP("dev", w.work, "", "pr", "open", "--base", "main", "--head", h, "--title", name))
		w.mustGP("rev", w.work, "", "pr", "review", id, "--approve")
		w.mustGP("ci", w.work, "", "pr", "check", id, "--name", "ci", "--rev", h, "--conclusion", "success")
		w.mustGP("dev", w.work, "", "pr", "merge", id, "--remote", "origin")
		if w.ref(main) != h {
			t.Fatalf("landing %d: main did not move to %s", i, h)
		}
	}
	w.git(w.work, "fetch", "-q", "origin", "+refs/hub/*:refs/hub/*")

	// A 3-candidate chain (merges as git merge --no-ff writes them) pushed
	// through the hook.
	tip0 := w.ref(main)
	var prs []*localPR
	var heads []string
	for _, name := range []string{"c1", "c2", "c3"} {
		h := w.commit([]string{main0}, map[string]string{name + ".txt": name + "\n"}, "feature "+name)
		heads = append(heads, h)
		prs = append(prs, w.localPR("dev", main, h).approve("rev"))
	}
	c1 := w.candidate(tip0, heads[0], "candidate 1")
	c2 := w.candidate(c1, heads[1], "candidate 2")
	c3 := w.candidate(c2, heads[2], "candidate 3")
	for i, c := range []string{c1, c2, c3} {
		prs[i].pass("ci", c)
	}
	w.pushPRs(prs...)
	w.expectAccepted(t, main, c3, "origin", c3+":"+main)
	good := c3

	t.Run("clean history", func(t *testing.T) {
		both(t, true, "", "")
		rep, out, _ := audit(w.origin, "--since", main0)
		if rep.Direct != 2 || rep.Candidates != 3 || rep.Covered != 2 || rep.Commits != 7 {
			t.Fatalf("want 2 direct landings covering 2 commits and 3 candidates over 7 commits:\n%s", out)
		}
		// Without --since the walk goes to the root; the commit from before
		// protection is below the first direct landing, which covers it (a
		// landing may bring any commits its head descends from).
		rep, out, code := audit(w.origin)
		if code != 0 || rep.Commits != 8 || rep.Covered != 3 || rep.Since != root {
			t.Fatalf("audit to the root: want 8 commits, 3 covered, clean:\n%s", out)
		}
		// Text output.
		txt, _, code := w.gp("", w.work, "", "--repo", w.origin, "verify", "--branch", "main", "--since", main0)
		if code != 0 || !strings.Contains(txt, "0 unjustified") {
			t.Fatalf("verify text: exit %d\n%s", code, txt)
		}
	})

	// place moves main on the bare repository without the hook, audits,
	// and puts main back.
	place := func(t *testing.T, commit, code string) {
		t.Helper()
		w.git(w.work, "push", "-q", "origin", commit+":refs/heads/scratch/"+commit[:12])
		w.git(w.origin, "update-ref", main, commit, good)
		defer w.git(w.origin, "update-ref", main, good, commit)
		both(t, false, commit, code)
	}

	t.Run("commit around the boundary", func(t *testing.T) {
		rogue := w.commit([]string{good}, map[string]string{"rogue.txt": "x\n"}, "rogue")
		place(t, rogue, "not-a-pr-head")
	})

	t.Run("candidate with an altered tree", func(t *testing.T) {
		h := w.commit([]string{main0}, map[string]string{"alt.txt": "alt\n"}, "feature alt")
		altered := w.commit([]string{good, h}, map[string]string{"alt.txt": "alt\n", "smuggled.txt": "x\n"}, "candidate alt")
		p := w.localPR("dev", main, h).approve("rev").pass("ci", altered)
		w.pushPRs(p)
		place(t, altered, "candidate-tree")
	})

	t.Run("landing of a pull request never approved", func(t *testing.T) {
		h := w.commit([]string{good}, map[string]string{"na.txt": "na\n"}, "feature na")
		w.git(w.work, "push", "-q", "origin", h+":refs/heads/feature-na")
		p := w.localPR("dev", main, h).pass("ci", h)
		w.pushPRs(p)
		// A pr.merged is recorded too: the audit judges the records before it.
		// The hook accepts pr.merged only for what landed (docs/events.md),
		// so, like main below, it is placed without the hook.
		rec := w.writeEvent("dev", hubrefs.PRMerged{Base: w.base(hubrefs.TypePRMerged), Revision: h, Branch: main, Commit: h}, w.ref(p.Ref()))
		w.git(w.work, "push", "-q", "origin", rec+":refs/heads/scratch/"+rec[:12])
		w.git(w.origin, "update-ref", p.Ref(), rec)
		place(t, h, "not-approved")
	})

	t.Run("candidate checked only on the pull request head", func(t *testing.T) {
		h := w.commit([]string{main0}, map[string]string{"oh.txt": "oh\n"}, "feature oh")
		p := w.localPR("dev", main, h).approve("rev").pass("ci", h)
		w.pushPRs(p)
		cand := w.candidate(good, h, "candidate oh")
		place(t, cand, "checks-missing")
	})

	t.Run("verify --ref judges as the hook", func(t *testing.T) {
		rogue := w.commit([]string{good}, map[string]string{"r2.txt": "x\n"}, "rogue 2")
		w.git(w.work, "push", "-q", "origin", rogue+":refs/heads/scratch/r2")
		out, _, code := w.gp("", w.work, "", "--repo", w.origin, "verify", "--ref", "main", "--old", good, "--new", rogue)
		if code != 1 || !strings.Contains(out, "git+: refused refs/heads/main: [not-a-pr-head]") {
			t.Fatalf("verify --ref of a stray commit: exit %d\n%s", code, out)
		}
		h := w.commit([]string{good}, map[string]string{"ok.txt": "ok\n"}, "feature ok")
		w.git(w.work, "push", "-q", "origin", h+":refs/heads/feature-ok")
		w.pushPRs(w.localPR("dev", main, h).approve("rev").pass("ci", h))
		for _, dir := range []string{w.origin, mirror()} {
			out, errs, code := w.gp("", w.work, "", "--repo", dir, "verify", "--ref", main, "--old", good, "--new", h)
			if code != 0 || !strings.Contains(out, "git+: accepted refs/heads/main") {
				t.Fatalf("verify --ref of an approved head in %s: exit %d\n%s%s", dir, code, out, errs)
			}
		}
		if _, _, code := w.gp("", w.work, "", "--repo", w.origin, "verify", "--ref", main); code != 2 {
			t.Fatalf("verify --ref without --new: exit %d, want 2", code)
		}
	})

	t.Run("whoami --branch", func(t *testing.T) {
		out := w.mustGP("dev", w.origin, "", "whoami", "--branch", "main", "--json")
		var got repo.Identity
		if err := json.Unmarshal([]byte(out), &got); err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		b := got.Branch
		if b == nil || !b.Protected || !b.QueueCandidates || b.QueueDepth != 3 || b.RequiredApprovals != 1 ||
			len(b.RequiredChecks) != 1 || !b.MayPush || !b.MayQueue {
			t.Fatalf("whoami --branch main as dev:\n%s", out)
		}
		out = w.mustGP("rev", w.origin, "", "whoami", "--branch", "main", "--json")
		got = repo.Identity{}
		if err := json.Unmarshal([]byte(out), &got); err != nil || got.Branch.MayPush || got.Branch.MayQueue {
			t.Fatalf("whoami --branch main as rev (%v):\n%s", err, out)
		}
		txt := w.mustGP("dev", w.origin, "", "whoami", "--branch", "other")
		if !strings.Contains(txt, "not protected") {
			t.Fatalf("whoami --branch other:\n%s", txt)
		}
	})
}
