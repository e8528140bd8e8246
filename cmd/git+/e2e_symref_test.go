package main

// End-to-end tests of two boundary holes: a symbolic ref in the served
// repository that points at a protected branch or hub ref (git writes an
// update of it through to its target), and an unrelated history pushed at a
// protected branch (refused before the hook walks it). docs/boundary.md.

import (
	"fmt"
	"strings"
	"testing"

	"github.com/gitplus/gitplus/hubrefs"
)

const symrefRulesJSON = `{"protected": {"refs/heads/main": {"requiredApprovals": 1, "requiredChecks": ["ci"], "queueCandidates": true, "queueDepth": 4}}}`

func TestSymbolicRefsJudgedAsTheirTarget(t *testing.T) {
	w := newE2E(t, map[string][]string{
		"dev": {"source.push", "hub.pr"},
		"rev": {"hub.review"},
		"ci":  {"hub.check:ci"},
	})
	const main, trunk = "refs/heads/main", "refs/heads/trunk"
	main0 := w.commit(nil, map[string]string{"README": "hello\n"}, "root")
	w.expectAccepted(t, main, main0, "origin", main0+":"+main)
	w.mustGP("admin", w.origin, symrefRulesJSON, "rules", "set", "-")
	if err := hubrefs.Fetch(t.Context(), w.work, "origin"); err != nil {
		t.Fatal(err)
	}
	// Symbolic refs made by the server's operator (a push cannot make one).
	w.git(w.origin, "symbolic-ref", trunk, main)
	w.git(w.origin, "symbolic-ref", "refs/heads/alias2", trunk) // a chain of two
	w.git(w.origin, "symbolic-ref", "refs/hub/alias", hubrefs.TrustRef)

	evil := w.commit([]string{main0}, map[string]string{"evil.txt": "nobody reviewed this\n"}, "unreviewed")
	t.Run("unreviewed commit through a symbolic ref to main", func(t *testing.T) {
		w.expectRefused(t, trunk, "not-a-pr-head", "origin", evil+":"+trunk)
		w.expectRefused(t, "refs/heads/alias2", "not-a-pr-head", "origin", evil+":refs/heads/alias2")
		if got := w.ref(main); got != main0 {
			t.Fatalf("main moved to %s", got)
		}
	})
	t.Run("deleting main through a symbolic ref", func(t *testing.T) {
		// Whatever git would delete, the hook judges the deletion of
		// the target, a protected branch, and refuses it.
		w.expectRefused(t, trunk, "protected-delete", "origin", ":"+trunk)
	})
	t.Run("non-event through a symbolic ref to refs/hub/trust", func(t *testing.T) {
		w.expectRefused(t, "refs/hub/alias", "hub-malformed", "origin", "--force", evil+":refs/hub/alias")
	})
	t.Run("an approved head through the symbolic ref lands on main", func(t *testing.T) {
		h := w.commit([]string{main0}, map[string]string{"ok.txt": "reviewed\n"}, "reviewed")
		pr := w.localPR("dev", main, h).approve("rev").pass("ci", h)
		w.pushPRs(pr)
		w.expectAccepted(t, main, h, "origin", h+":"+trunk)
		if target := w.git(w.origin, "symbolic-ref", trunk); target != main {
			t.Fatalf("%s is no longer a symbolic ref to main: %q", trunk, target)
		}
	})
}

// TestUnrelatedHistoryRefusedUnwalked pushes a long history unrelated to
// main: it is neither an open pull request's head nor a candidate chain
// within queueDepth, so the hook refuses it as not-a-pr-head without an
// ancestry walk (the refusal names the rule, not a non-fast-forward).
func TestUnrelatedHistoryRefusedUnwalked(t *testing.T) {
	w := newE2E(t, map[string][]string{"dev": {"source.push", "hub.pr"}})
	const main = "refs/heads/main"
	main0 := w.commit(nil, map[string]string{"README": "hello\n"}, "root")
	w.expectAccepted(t, main, main0, "origin", main0+":"+main)
	w.mustGP("admin", w.origin, symrefRulesJSON, "rules", "set", "-")

	// 500 commits of an unrelated history through fast-import, ending in a
	// two-parent merge so that it looks like a candidate at its tip.
	var fi strings.Builder
	for i := 1; i <= 500; i++ {
		fmt.Fprintf(&fi, "commit refs/heads/other\nmark :%d\ncommitter x <x@example.invalid> %d +0000\ndata 2\nc\n", i, 1700000000+i)
		if i > 1 {
			fmt.Fprintf(&fi, "from :%d\n", i-1)
		}
		fmt.Fprintf(&fi, "M 644 inline f.txt\ndata %d\n%d\n\n", len(fmt.Sprint(i))+1, i)
	}
	fmt.Fprintf(&fi, "commit refs/heads/other\nmark :501\ncommitter x <x@example.invalid> 1700001000 +0000\ndata 2\nm\nfrom :500\nmerge :250\n\n")
	w.gitIn(w.work, fi.String(), "fast-import", "--quiet")
	tip := w.git(w.work, "rev-parse", "refs/heads/other")
	w.expectRefused(t, main, "chain-too-deep", "origin", "--force", tip+":"+main)
	linear := w.git(w.work, "rev-parse", "refs/heads/other^")
	w.expectRefused(t, main, "not-a-pr-head", "origin", "--force", linear+":"+main)
	// A rewind of main is still refused as non-fast-forward: TestBoundary.
}
