package main

// Path owners (docs/trust.md, "Path owners") and hub.bypass per branch
// ("An audited bypass"), end to end with stock git.

import (
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/gitplus/gitplus/hooks/webview"
	"github.com/gitplus/gitplus/receive/repo"
)

// TestPathOwnersE2E: an owners entry needs its approvals from its
// approvers at the pull request's current head (an owner's approval of an
// earlier head does not count), never from the opener (approvals: 2 of
// the opener and one other is not met), whatever the branch's own
// approvals say; files no entry matches need no owner. pr show --json
// previews the entries a pull request triggers and what each needs; rules
// set refuses malformed owners.
func TestPathOwnersE2E(t *testing.T) {
	t.Parallel()
	w := newE2E(t, map[string][]string{
		"dev": {"source.push", "hub.pr", "hub.review", "hub.queue"},
		"ann": {"hub.review"},
		"doc": {"hub.review"},
	})
	const main = "refs/heads/main"
	root := w.commit(nil, map[string]string{"README.md": "hello\n", "src/main.go": "package main\n"}, "root")
	w.expectAccepted(t, main, root, "origin", root+":"+main)
	w.mustGP("admin", w.work, "", "team", "set", "docs", "doc")
	for _, c := range []struct{ owners, in string }{
		{`[{"paths":["[ab]"],"approvers":["doc"]}]`, "character classes"},
		{`[{"paths":["docs/**"],"approvers":["team:nobody"]}]`, "team set nobody"},
		{`[{"paths":["docs/**"],"approvers":["doc"],"approvals":0}]`, "approvals is 0"},
	} {
		if _, errOut, code := w.gp("admin", w.work, `{"protected":{"refs/heads/main":{"requiredChecks":[],"owners":`+c.owners+`}}}`, "rules", "set", "-"); code == 0 || !strings.Contains(errOut, c.in) {
			t.Fatalf("rules set with owners %s: exit %d\n%s", c.owners, code, errOut)
		}
	}
	w.mustGP("admin", w.work, `{"protected":{"refs/heads/main":{"requiredChecks":[],
		"owners":[{"paths":["docs/**","*.md"],"approvers":["team:docs"]},{"paths":["/ops/"],"approvers":["dev","doc"],"approvals":2}]}}}`, "rules", "set", "-")

	n := 0
	open := func(files map[string]string) (id, head string) {
		t.Helper()
		n++
		head = w.commit([]string{w.ref(main)}, files, fmt.Sprintf("change %d", n))
		w.git(w.work, "push", "-q", "origin", fmt.Sprintf("%s:refs/heads/topic%d", head, n))
		id = e2eLastLine(w.mustGP("dev", w.work, "", "pr", "open", "--base", "main", "--head", head, "--title", "change"))
		return id, head
	}
	review := func(who, id string) { w.mustGP(who, w.work, "", "pr", "review", id, "--approve") }
	land := func(head, code string) { t.Helper(); w.expectLanding(t, main, head, code) }
	show := func(id string) repo.PRView {
		t.Helper()
		var v repo.PRView
		if err := json.Unmarshal([]byte(w.mustGP("", w.origin, "", "pr", "show", id, "--json")), &v); err != nil {
			t.Fatal(err)
		}
		return v
	}

	t.Run("no owned file", func(t *testing.T) {
		id, head := open(map[string]string{"src/a.go": "package main\n"})
		review("ann", id)
		if v := show(id); len(v.Owners) != 0 {
			t.Fatalf("pr show owners %+v, want none", v.Owners)
		}
		land(head, "")
	})

	t.Run("an owner's approval of an earlier head does not count", func(t *testing.T) {
		id, head := open(map[string]string{"docs/guide/intro.md": "one\n"})
		review("ann", id)
		land(head, "owners")
		if v := show(id); len(v.Owners) != 1 || v.Owners[0].Entry != 0 || v.Owners[0].Met || v.Owners[0].Matched != "docs/guide/intro.md" {
			t.Fatalf("pr show owners %+v, want entry 0 unmet", v.Owners)
		}
		if text := w.mustGP("", w.origin, "", "pr", "show", id); !strings.Contains(text, "owners:    [0] docs/**, *.md (matching docs/guide/intro.md): 0 of 1 from team:docs, needs 1 more") {
			t.Fatalf("pr show:\n%s", text)
		}
		// The page says the same.
		rec := httptest.NewRecorder()
		webview.Repo(w.origin, "").ServeHTTP(rec, httptest.NewRequest("GET", "/pr/"+id, nil))
		if body := rec.Body.String(); rec.Code != 200 || !strings.Contains(body, "owners[0] (docs/**, *.md, matching docs/guide/intro.md) has 0 of 1 approvals from team:docs") {
			t.Fatalf("the page: %d\n%s", rec.Code, body)
		}
		review("doc", id)
		if v := show(id); len(v.Owners) != 1 || !v.Owners[0].Met {
			t.Fatalf("pr show owners %+v, want entry 0 met", v.Owners)
		}
		head2 := w.commit([]string{head}, map[string]string{"docs/guide/intro.md": "two\n"}, "more")
		w.git(w.work, "push", "-q", "origin", fmt.Sprintf("%s:refs/heads/topic%d", head2, n))
		w.mustGP("dev", w.work, "", "pr", "update", id, "--head", head2)
		review("ann", id)
		land(head2, "owners")
		review("doc", id)
		land(head2, "")
	})

	t.Run("approvals 2 of the opener and one other is not met", func(t *testing.T) {
		id, head := open(map[string]string{"ops/deploy.sh": "echo\n"})
		review("doc", id)
		review("ann", id)
		if v := show(id); len(v.Owners) != 1 || v.Owners[0].Entry != 1 || v.Owners[0].Approvals != 1 || v.Owners[0].Required != 2 {
			t.Fatalf("pr show owners %+v, want entry 1 at 1 of 2", v.Owners)
		}
		land(head, "owners")
		// queue show says what the entry waits for.
		w.mustGP("dev", w.work, "", "queue", "open", "--target", "main")
		w.mustGP("dev", w.work, "", "queue", "enter", id)
		var q repo.QueueView
		if err := json.Unmarshal([]byte(w.mustGP("", w.origin, "", "queue", "show", "--target", "main", "--json")), &q); err != nil {
			t.Fatal(err)
		}
		if len(q.Active) != 1 || !strings.Contains(q.Active[0].Waiting, "waiting for path owners: owners[1] (/ops/, matching ops/deploy.sh) has 1 of 2 approvals from dev, doc") {
			t.Fatalf("queue show: %+v", q.Active)
		}
	})
}

// TestBypassPerBranchE2E: hub.bypass:<pattern> bypasses only pull requests
// based on a branch the pattern matches; the hook refuses a pr.bypassed by
// a holder whose pattern does not match (missing-capability).
func TestBypassPerBranchE2E(t *testing.T) {
	t.Parallel()
	w := newE2E(t, map[string][]string{
		"dev": {"source.push", "hub.pr"},
		"rel": {"hub.bypass:refs/heads/release/*"},
	})
	const main, release = "refs/heads/main", "refs/heads/release/1"
	root := w.commit(nil, map[string]string{"README": "hello\n"}, "root")
	w.expectAccepted(t, main, root, "origin", root+":"+main, root+":"+release)
	w.mustGP("admin", w.work, `{"protected":{"refs/heads/main":{"requiredChecks":[]},"refs/heads/release/*":{"requiredChecks":[]}}}`, "rules", "set", "-")
	n := 0
	open := func(base string) (id, head string) {
		t.Helper()
		n++
		head = w.commit([]string{w.ref(base)}, map[string]string{fmt.Sprintf("f%d.txt", n): "x\n"}, fmt.Sprintf("change %d", n))
		w.git(w.work, "push", "-q", "origin", fmt.Sprintf("%s:refs/heads/topic%d", head, n))
		id = e2eLastLine(w.mustGP("dev", w.work, "", "pr", "open", "--base", strings.TrimPrefix(base, "refs/heads/"), "--head", head, "--title", "change"))
		return id, head
	}
	id, _ := open(main)
	if _, errOut, code := w.gp("rel", w.work, "", "pr", "bypass", id, "--reason", "urgent"); code != 1 || !strings.Contains(errOut, "hub.bypass") {
		t.Fatalf("bypass on main with hub.bypass:refs/heads/release/*: exit %d\n%s", code, errOut)
	}
	id2, head2 := open(release)
	w.mustGP("rel", w.work, "", "pr", "bypass", id2, "--reason", "urgent")
	w.mustGP("dev", w.work, "", "pr", "merge", id2, "--remote", "origin")
	if w.ref(release) != head2 {
		t.Fatalf("after pr merge of a bypassed head: %s = %s, want %s", release, w.ref(release), head2)
	}
}
