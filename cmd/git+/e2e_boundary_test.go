package main

// End-to-end tests of the boundary: the built binary installed as the hooks
// of a real bare repository, judging real `git push`es (through a clone's
// origin and over a path). Every refusal is checked for its code and for
// every ref of the repository being unchanged.

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/google/uuid"

	"github.com/gitplus/gitplus/fixtures"
	"github.com/gitplus/gitplus/hubrefs"
	"github.com/gitplus/gitplus/policy"
)

const boundaryRulesJSON = `{
  "protected": {
    "refs/heads/main":   {"requiredApprovals": 1, "requiredChecks": ["ci"], "queueCandidates": true, "queueDepth": 3},
    "refs/heads/nocand": {"requiredApprovals": 1, "requiredChecks": ["ci"]},
    "refs/heads/prov":   {"requiredApprovals": 1, "requiredChecks": ["ci"], "queueCandidates": true, "requireProvenance": true}
  }
}`

// TestBoundary runs every refusal and acceptance through each pre-receive
// command the installed script may run: `git+ hook pre-receive` and the
// lean `git+hook pre-receive` (which git+ hook install picks only for a
// clean build, so both are forced here).
func TestBoundary(t *testing.T) {
	t.Run("git+ hook pre-receive", func(t *testing.T) { boundary(t, false) })
	t.Run("git+hook pre-receive", func(t *testing.T) { boundary(t, true) })
}

func boundary(t *testing.T, lean bool) {
	w := newE2E(t, map[string][]string{
		"dev":  {"source.push", "hub.pr", "hub.queue"},
		"rev":  {"hub.review"},
		"ci":   {"hub.check:ci"},
		"gone": {"hub.pr", "hub.review"},
	}, "outsider")
	w.forcePreReceive(t, lean)
	const main, nocand, prov = "refs/heads/main", "refs/heads/nocand", "refs/heads/prov"

	// Branches exist before they are protected.
	root := w.commit(nil, map[string]string{"README": "hello\n"}, "root")
	main0 := w.commit([]string{root}, map[string]string{"a.txt": "a\n"}, "second")
	w.expectAccepted(t, main, main0, "origin", main0+":"+main, main0+":"+nocand, main0+":"+prov)
	w.mustGP("admin", w.origin, boundaryRulesJSON, "rules", "set", "-")
	w.mustGP("admin", w.origin, "", "member", "remove", "gone")
	if err := hubrefs.Fetch(t.Context(), w.work, "origin"); err != nil {
		t.Fatal(err)
	}

	// Pull requests on main0.
	head := func(name string) string {
		return w.commit([]string{main0}, map[string]string{name + ".txt": name + "\n"}, "feature "+name)
	}
	approved := func(base, h string, checkAt ...string) *localPR {
		return w.localPR("dev", base, h).approve("rev").pass("ci", checkAt...)
	}
	hU := head("unapproved")
	prU := w.localPR("dev", main, hU).pass("ci", hU)
	hS1, hS2 := head("stale1"), head("stale2")
	prS := approved(main, hS1).update("dev", hS2).pass("ci", hS2)
	hN := head("nochecks")
	prN := approved(main, hN)
	hR := head("otherrev")
	prR := approved(main, hR, hU)

	h1, h2, h3, h4 := head("c1"), head("c2"), head("c3"), head("c4")
	pr1, pr2, pr3 := approved(main, h1, h1), approved(main, h2), approved(main, h3)
	pr4 := approved(main, h4, h4) // checks only on the PR head
	hX := head("closed")
	prX := approved(main, hX, hX).add("dev", w.base(hubrefs.TypePRClosed))
	hNC := head("nocand")
	prNC := approved(nocand, hNC, hNC)
	hP := head("prov")
	candP := w.candidate(main0, hP, "candidate prov")
	prP := approved(prov, hP, hP, candP)
	hProvDirect := head("provdirect") // unsigned, approved, checked
	prPD := approved(prov, hProvDirect, hProvDirect)

	// Candidates on main (queueDepth 3).
	c1 := w.candidate(main0, h1, "candidate 1")
	badTree := w.commit([]string{main0, h1}, map[string]string{"c1.txt": "c1\n", "extra.txt": "smuggled\n"}, "candidate with an extra file")
	pr1.pass("ci", badTree, c1)
	w.pushPRs(prU, prS, prN, prR, pr1, pr2, pr3, pr4, prX, prNC, prP, prPD)
	swapped := w.commitTree(w.treeOf(c1), []string{h1, main0}, "swapped")
	three := w.commitTree(w.mergeTree(c1, h2), []string{main0, h1, h2}, "three parents")
	stray := head("stray")
	notPR := w.candidate(main0, stray, "not a pr head")
	closedC := w.candidate(main0, hX, "closed pr")
	onlyHead := w.candidate(main0, h4, "checks on the head only")
	d1 := c1
	d2 := w.candidate(d1, h2, "d2")
	d3 := w.candidate(d2, h3, "d3")
	d4 := w.candidate(d3, h4, "d4")
	candNC := w.candidate(main0, hNC, "candidate nocand")

	// Hub events.
	trustTip := w.ref(hubrefs.TrustRef)
	prUTip := w.ref(prU.Ref())
	prURef := prU.Ref()
	review := func(repo string) hubrefs.Review {
		return hubrefs.Review{Base: hubrefs.Base{Type: hubrefs.TypeReviewSubmit, Repo: repo}, Head: hU, BaseRef: main, Verdict: "approve"}
	}
	reviewJSON := fmt.Sprintf(`{"type":"review.submitted","repo":%q,"head":%q,"base":%q,"verdict":"approve"}`, w.repoID, hU, main)
	unsigned := w.writeRaw(w.rawEvent("", []string{prUTip}, "review.submitted\n\n"+reviewJSON+"\n"))
	byOutsider := w.writeEvent("outsider", review(w.repoID), prUTip)
	byRemoved := w.writeEvent("gone", review(w.repoID), prUTip)
	lackingCap := w.writeEvent("ci", review(w.repoID), prUTip)
	foreign := w.writeEvent("rev", review(uuid.Must(uuid.NewV7()).String()), prUTip)
	malformed := w.writeRaw(w.rawEvent("rev", []string{prUTip}, "review.submitted\n\n"+reviewJSON[:len(reviewJSON)-20]+"\n"))
	big := review(w.repoID)
	big.Body = strings.Repeat("x", 70<<10)
	overCeiling := w.writeEvent("rev", big, prUTip)
	trustParent := w.git(w.origin, "rev-parse", trustTip+"^")
	sourceParent := w.writeEvent("rev", review(w.repoID), main0) // hub logs are linear: its one parent (docs/trust.md)
	otherID, rootID := uuid.Must(uuid.NewV7()).String(), uuid.Must(uuid.NewV7()).String()
	misnamed := w.writeEvent("dev", hubrefs.PROpened{Base: w.base(hubrefs.TypePROpened), ID: rootID, BaseRef: main, Head: hU, Title: "misnamed"})

	originPath := w.origin // pushes over a path as well as through "origin"
	cases := []struct {
		name, ref, code string
		args            []string
	}{
		{"unsigned event", prURef, "unsigned", []string{"origin", unsigned + ":" + prURef}},
		{"signed by a non-member", prURef, "not-member", []string{originPath, byOutsider + ":" + prURef}},
		{"signed by a removed member", prURef, "not-member", []string{"origin", byRemoved + ":" + prURef}},
		{"member lacking the capability", prURef, "missing-capability", []string{originPath, lackingCap + ":" + prURef}},
		{"event bound to another RepoID", prURef, "wrong-repo", []string{"origin", foreign + ":" + prURef}},
		{"malformed payload", prURef, "hub-malformed", []string{originPath, malformed + ":" + prURef}},
		{"payload over the ceiling", prURef, "hub-ceiling", []string{"origin", overCeiling + ":" + prURef}},
		{"hub ref deleted", prURef, "hub-delete", []string{originPath, ":" + prURef}},
		{"hub ref rewound", hubrefs.TrustRef, "hub-rewind", []string{"origin", "--force", trustParent + ":" + hubrefs.TrustRef}},
		{"hub ref at a source commit", hubrefs.PRRefPrefix + otherID, "hub-malformed", []string{originPath, main0 + ":" + hubrefs.PRRefPrefix + otherID}},
		{"event with a source-commit parent", prURef, "foreign-parent", []string{"origin", "+" + sourceParent + ":" + prURef}},
		{"pr ref named unlike its root", hubrefs.PRRefPrefix + otherID, "ref-name", []string{originPath, misnamed + ":" + hubrefs.PRRefPrefix + otherID}},

		{"protected branch deleted", main, "protected-delete", []string{"origin", ":" + main}},
		{"protected branch force-pushed", main, "non-fast-forward", []string{originPath, "--force", root + ":" + main}},
		{"unapproved head", main, "not-approved", []string{"origin", hU + ":" + main}},
		{"approval stale after an update", main, "not-approved", []string{originPath, hS2 + ":" + main}},
		{"approved head without checks", main, "checks-missing", []string{"origin", hN + ":" + main}},
		{"checks on another revision", main, "checks-missing", []string{originPath, hR + ":" + main}},

		{"candidate with parents swapped", main, "candidate-parents", []string{"origin", swapped + ":" + main}},
		{"candidate with three parents", main, "candidate-parents", []string{originPath, three + ":" + main}},
		{"candidate tree adds a file", main, "candidate-tree", []string{"origin", badTree + ":" + main}},
		{"candidate head not a PR head", main, "not-a-pr-head", []string{originPath, notPR + ":" + main}},
		{"candidate of a closed PR", main, "pr-closed", []string{"origin", closedC + ":" + main}},
		{"candidate with checks only on the PR head", main, "checks-missing", []string{originPath, onlyHead + ":" + main}},
		{"chain longer than queueDepth", main, "chain-too-deep", []string{"origin", d4 + ":" + main}},
		{"candidate on a branch with queueCandidates off", nocand, "candidates-off", []string{originPath, candNC + ":" + nocand}},
		{"candidate on a requireProvenance branch", prov, "provenance", []string{"origin", candP + ":" + prov}},
		{"unsigned approved head on a requireProvenance branch", prov, "provenance", []string{originPath, hProvDirect + ":" + prov}},
		{"atomic push with one refused ref", main, "not-approved", []string{"origin", "--atomic", hU + ":" + main, hU + ":refs/heads/free"}},
	}
	t.Run("refusals", func(t *testing.T) {
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				t.Parallel()
				w.expectRefused(t, tc.ref, tc.code, tc.args...)
			})
		}
	})
	if t.Failed() {
		return
	}

	// Positive paths, in order: each moves main.
	t.Run("unprotected branch is not judged", func(t *testing.T) {
		w.expectAccepted(t, "refs/heads/free", stray, "origin", stray+":refs/heads/free")
	})

	t.Run("plain push of an approved head arriving as a pack", func(t *testing.T) {
		files := map[string]string{}
		for i := 0; i < 160; i++ {
			files[fmt.Sprintf("big/f%03d.txt", i)] = fmt.Sprintf("file %d\n", i)
		}
		hB := w.commit([]string{main0}, files, "160 files")
		w.pushPRs(approved(main, hB, hB))
		before := w.ref(main)
		if before != main0 {
			t.Fatalf("main moved before the landing: %s", before)
		}
		packs := func() int {
			m, _ := filepath.Glob(filepath.Join(w.origin, "objects", "pack", "*.pack"))
			return len(m)
		}
		n := packs()
		w.expectAccepted(t, main, hB, "origin", hB+":"+main)
		if packs() != n+1 {
			t.Fatalf("the push did not arrive as a pack (%d packs before, %d after)", n, packs())
		}
	})

	t.Run("git+ pr merge lands an approved head", func(t *testing.T) {
		base := w.ref(main)
		hA := w.commit([]string{base}, map[string]string{"merged-by-verb.txt": "yes\n"}, "feature A")
		w.git(w.work, "push", "-q", "origin", hA+":refs/heads/feature-a")
		// Through the CLI verbs.
		prA := e2eLastLine(w.mustGP("dev", w.work, "", "pr", "open", "--base", "main", "--head", hA, "--title", "A"))
		w.mustGP("rev", w.work, "", "pr", "review", prA, "--approve")
		w.mustGP("ci", w.work, "", "pr", "check", prA, "--name", "ci", "--rev", hA, "--conclusion", "success")
		out := w.mustGP("dev", w.work, "", "pr", "merge", prA, "--remote", "origin")
		if got := w.ref(main); got != hA {
			t.Fatalf("after pr merge: main = %s, want %s\n%s", got, hA, out)
		}
		w.git(w.work, "fetch", "-q", "origin", "+refs/hub/*:refs/hub/*")
		typ := w.git(w.work, "log", "-1", "--format=%s", hubrefs.PRRefPrefix+prA)
		if typ != hubrefs.TypePRMerged {
			t.Fatalf("latest event of %s is %q, want pr.merged", prA, typ)
		}
		// A second run lands nothing and records nothing new.
		tip := w.ref(hubrefs.PRRefPrefix + prA)
		w.mustGP("dev", w.work, "", "pr", "merge", prA, "--remote", "origin")
		if w.ref(hubrefs.PRRefPrefix+prA) != tip {
			t.Fatalf("a second pr merge appended to %s", prA)
		}
	})

	t.Run("git+ pr merge of an unapproved head is refused", func(t *testing.T) {
		base := w.ref(main)
		hV := w.commit([]string{base}, map[string]string{"v.txt": "v\n"}, "feature V")
		w.git(w.work, "push", "-q", "origin", hV+":refs/heads/feature-v")
		prV := w.localPR("dev", main, hV).pass("ci", hV)
		w.pushPRs(prV)
		before := w.refs()
		_, errs, code := w.gp("dev", w.work, "", "pr", "merge", prV.ID, "--remote", "origin")
		if code != 1 || !strings.Contains(errs, "git+: refused "+main+": [not-approved]") {
			t.Fatalf("pr merge of an unapproved head: exit %d, stderr:\n%s", code, errs)
		}
		if after := w.refs(); after != before {
			t.Fatalf("refused pr merge changed refs:\n%s\n---\n%s", before, after)
		}
	})

	t.Run("chain of three candidates built with git merge lands", func(t *testing.T) {
		base := w.ref(main)
		w.git(w.work, "fetch", "-q", "origin")
		w.git(w.work, "checkout", "-q", "-B", "land", base)
		var steps []string
		for i, h := range []string{h1, h2, h3} {
			w.git(w.work, "merge", "--no-ff", "-q", "-m", fmt.Sprintf("land %d", i+1), h)
			steps = append(steps, w.git(w.work, "rev-parse", "HEAD"))
		}
		pr1.pass("ci", steps[0])
		pr2.pass("ci", steps[1])
		pr3.pass("ci", steps[2])
		w.pushPRs(pr1, pr2, pr3)
		// The fold cache is trusted for speed only: damage every entry and
		// the landing is still judged (and accepted) correctly.
		entries, _ := filepath.Glob(filepath.Join(w.origin, "gitplus", "foldcache", "*"))
		if len(entries) == 0 {
			t.Fatalf("no fold cache entries under %s", filepath.Join(w.origin, "gitplus", "foldcache"))
		}
		for _, e := range entries {
			if err := os.WriteFile(e, []byte("garbage"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		w.expectRefused(t, main, "checks-missing", "origin", w.candidate(steps[0], h4, "not checked")+":"+main)
		w.expectAccepted(t, main, steps[2], "origin", "land:"+main)
	})

	t.Run("candidates published on their branches land from merge facts", func(t *testing.T) {
		base := w.ref(main)
		h5, h6 := head("c5"), head("c6")
		f1 := w.candidate(base, h5, "candidate 5")
		f2 := w.candidate(f1, h6, "candidate 6")
		pr5, pr6 := approved(main, h5, f1), approved(main, h6, f2)
		w.pushPRs(pr5, pr6)
		b5, b6 := "refs/heads/queue/main/"+pr5.ID, "refs/heads/queue/main/"+pr6.ID
		w.expectAccepted(t, b6, f2, "origin", f1+":"+b5, f2+":"+b6)
		fact := func(c string) string {
			return filepath.Join(w.origin, "gitplus", "foldcache", policy.MergeFactKey(plumbing.NewHash(c)).String())
		}
		for _, c := range []string{f1, f2} {
			if _, err := os.Stat(fact(c)); err != nil {
				t.Fatalf("publishing candidate %s on its branch recorded no merge fact: %v", c, err)
			}
		}
		w.expectAccepted(t, main, f2, "origin", f2+":"+main)
		// The queue deletes the branches of what landed: their facts go too.
		if out, err := w.push("origin", ":"+b5, ":"+b6); err != nil {
			t.Fatalf("deleting the candidate branches: %v\n%s", err, out)
		}
		for _, c := range []string{f1, f2} {
			if _, err := os.Stat(fact(c)); !os.IsNotExist(err) {
				t.Fatalf("the merge fact of %s outlived its candidate branch (%v)", c, err)
			}
		}
	})
}

func e2eLastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.TrimSpace(lines[len(lines)-1])
}

func TestHookInstallAndNoTrust(t *testing.T) {
	w := &e2e{t: t, home: t.TempDir()}
	w.bin = fixtures.Binary(t)
	w.env = fixtures.GitEnv(w.home)
	bare := filepath.Join(t.TempDir(), "plain.git")
	w.git(".", "init", "-q", "--bare", "-b", "main", bare)
	hooksDir := filepath.Join(bare, "hooks")
	log := filepath.Join(t.TempDir(), "chained.log")
	old := "#!/bin/sh\ncat >> " + log + "\nexit ${CHAINED_EXIT:-0}\n"
	if err := os.WriteFile(filepath.Join(hooksDir, "pre-receive"), []byte(old), 0o755); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 2; i++ { // idempotent
		if _, errs, code := w.gp("", ".", "", "hook", "install", "--repo", bare); code != 0 {
			t.Fatalf("hook install (run %d): exit %d: %s", i+1, code, errs)
		}
	}
	entries, _ := os.ReadDir(hooksDir)
	var names []string
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".sample") {
			names = append(names, e.Name())
		}
	}
	if got := strings.Join(names, " "); got != "post-receive pre-receive pre-receive.chained" {
		t.Fatalf("hooks after two installs: %s", got)
	}
	script, _ := os.ReadFile(filepath.Join(hooksDir, "pre-receive"))
	if !strings.Contains(string(script), w.bin) {
		t.Fatalf("pre-receive does not run %s by absolute path:\n%s", w.bin, script)
	}
	if v := w.git(bare, "config", "receive.advertisePushOptions"); v != "true" {
		t.Fatalf("receive.advertisePushOptions = %q", v)
	}

	work := filepath.Join(t.TempDir(), "work")
	w.git(".", "clone", "-q", bare, work)
	w.work = work
	c := w.commit(nil, map[string]string{"f": "1\n"}, "first")
	w.origin = bare
	// No refs/hub/trust: every push is refused, naming git+ init; the
	// chained hook ran first with the same input.
	w.expectRefused(t, "refs/heads/main", "no-trust", "origin", c+":refs/heads/main", c+":refs/heads/other")
	out, _ := w.push("origin", c+":refs/heads/main")
	if !strings.Contains(out, "git+ init") {
		t.Fatalf("no-trust refusal does not say to run git+ init:\n%s", out)
	}
	data, _ := os.ReadFile(log)
	if !strings.Contains(string(data), c+" refs/heads/main") || !strings.Contains(string(data), c+" refs/heads/other") {
		t.Fatalf("chained hook did not get every input line:\n%s", data)
	}
	// A failing chained hook refuses the push before git+ runs.
	cmdEnv := append([]string{}, w.env...)
	w.env = append(w.env, "CHAINED_EXIT=3")
	before := w.refs()
	out, err := w.push("origin", c+":refs/heads/main")
	w.env = cmdEnv
	if err == nil || strings.Contains(out, "git+: refused") || w.refs() != before {
		t.Fatalf("failing chained hook: err=%v\n%s", err, out)
	}

	// Input the hook cannot parse refuses the whole push (fail closed).
	_, errs, code := w.gp("", bare, "not a hook line\n", "hook", "pre-receive")
	if code != 1 || !strings.Contains(errs, "[internal-error]") {
		t.Fatalf("malformed hook input: exit %d, stderr %s", code, errs)
	}
	// post-receive reads its input and succeeds.
	if _, errs, code := w.gp("", bare, strings.Repeat("0", 40)+" "+c+" refs/heads/main\n", "hook", "post-receive"); code != 0 {
		t.Fatalf("post-receive: exit %d: %s", code, errs)
	}
}
