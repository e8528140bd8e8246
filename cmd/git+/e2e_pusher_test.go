package main

// End-to-end tests of the default a user meets (docs/serving.md "Who must
// be known"): a repository made by git+ init refuses an unidentified push
// even by path, takes a signed push from a member with source.push, and
// git+'s own verbs identify themselves.

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestInitRequiresKnownPusher(t *testing.T) {
	t.Parallel()
	w := newE2E(t, map[string][]string{"dev": {"source.push", "hub.pr"}, "rev": {"hub.review"}}, "out")
	c := w.commit(nil, map[string]string{"a.txt": "a\n"}, "one")

	// The rules git+ init wrote say so.
	if out := w.mustGP("", w.work, "", "--repo", w.origin, "rules", "show", "--json"); !strings.Contains(out, `"requireKnownPusher": true`) {
		t.Fatalf("rules after git+ init:\n%s", out)
	}

	// A plain unsigned push by path: refused, naming the ways that exist
	// off git+ serve (signing, the operator's gitplus.pusher), not serve's.
	w.signPushes(w.work, "")
	w.expectRefused(t, "refs/heads/feature", "unknown-pusher", w.origin, c+":refs/heads/feature")
	out, _ := w.push(w.origin, c+":refs/heads/feature")
	for _, way := range []string{"git push --signed", "gitplus.pusher"} {
		if !strings.Contains(out, way) {
			t.Errorf("the refusal does not name %q:\n%s", way, out)
		}
	}
	if strings.Contains(out, "member token issue") {
		t.Errorf("the refusal of a push by path offers serve's HTTP token:\n%s", out)
	}
	// `git push .` inside the repository itself: refused too.
	_, errs, err := w.gitRun(w.origin, "", nil, "fetch", "-q", w.work, c+":refs/x/c")
	if err != nil {
		t.Fatalf("fetching the commit into the origin: %v\n%s", err, errs)
	}
	_, errs, err = w.gitRun(w.origin, "", nil, "push", ".", "refs/x/c:refs/heads/dot")
	if err == nil || !strings.Contains(errs, "[unknown-pusher]") || w.ref("refs/heads/dot") != "" {
		t.Fatalf("git push . without identity: %v\n%s", err, errs)
	}

	// Signed: a member with source.push is accepted; a non-member and a
	// member without it are refused.
	w.signPushes(w.work, "dev")
	w.expectAccepted(t, "refs/heads/feature", c, w.origin, c+":refs/heads/feature")
	w.signPushes(w.work, "out")
	w.expectRefused(t, "refs/heads/other", "not-member", w.origin, c+":refs/heads/other")
	w.signPushes(w.work, "rev")
	w.expectRefused(t, "refs/heads/feature", "missing-capability", w.origin, ":refs/heads/feature")

	// git+ pr open --push pushes its source branch signed with its key
	// (--create-base: main, unprotected here, does not exist).
	w.signPushes(w.work, "")
	c2 := w.commit([]string{c}, map[string]string{"b.txt": "b\n"}, "two")
	w.git(w.work, "update-ref", "refs/heads/topic", c2)
	w.mustGP("dev", w.work, "", "pr", "open", "--base", "main", "--create-base", "--head", "topic", "--title", "t", "--push", "--remote", "origin")
	if got := w.ref("refs/heads/topic"); got != c2 {
		t.Fatalf("pr open --push: topic = %q, want %s", got, c2)
	}

	// rules set without the field keeps it; naming it false turns it off.
	rules := filepath.Join(t.TempDir(), "rules.json")
	writeRules(t, rules, `{"protected":{"refs/heads/release":{}}}`)
	w.mustGP("admin", w.work, "", "--repo", w.origin, "rules", "set", rules)
	w.expectRefused(t, "refs/heads/after", "unknown-pusher", w.origin, c+":refs/heads/after")
	writeRules(t, rules, `{"requireKnownPusher":false}`)
	w.mustGP("admin", w.work, "", "--repo", w.origin, "rules", "set", rules)
	w.expectAccepted(t, "refs/heads/after", c, w.origin, c+":refs/heads/after")
}

// TestInitOpen: git+ init --open writes no requireKnownPusher, so a push by
// path needs no identity (a push through git+ serve still does).
func TestInitOpen(t *testing.T) {
	t.Parallel()
	w := newE2E(t, nil)
	open := filepath.Join(t.TempDir(), "open.git")
	w.mustGP("admin", w.work, "", "init", "--open", open)
	w.signPushes(w.work, "")
	c := w.commit(nil, map[string]string{"a.txt": "a\n"}, "one")
	if out, err := w.push(open, c+":refs/heads/feature"); err != nil {
		t.Fatalf("an unsigned push into an --open repository: %v\n%s", err, out)
	}
	if out := w.mustGP("", w.work, "", "--repo", open, "rules", "show"); !strings.Contains(out, "no rules.set yet") {
		t.Fatalf("rules of an --open repository:\n%s", out)
	}
}

func writeRules(t *testing.T, path, rules string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(rules), 0o644); err != nil {
		t.Fatal(err)
	}
}
