package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gitplus/gitplus/hooks/config"
	"github.com/gitplus/gitplus/hooks/delivery"
)

// TestMirrorHookedLanding: a mirror that runs git+'s hooks itself takes a
// landing by pr merge and its pr.merged in one sync (docs/delivery.md, "A
// mirror that runs git+'s hooks"). Before, the records went in a push of
// their own first, the mirror's hook refused the pr.merged naming a commit
// its main did not hold yet (merged-not-landed), and every later sync
// failed the same way. Branches deleted here are deleted there, records
// only the mirror holds stay; a sync carrying a pull request's whole life
// is refused there, naming the fetch that catches the mirror up.
func TestMirrorHookedLanding(t *testing.T) {
	t.Parallel()
	w := newE2E(t, map[string][]string{"dev": {"source.push", "hub.pr", "hub.queue"}, "ann": {"hub.review"}, "server": {"source.push"}})
	w.git(w.origin, "config", "gitplus.serverKey", w.keys["server"].Path)
	const main = "refs/heads/main"
	root := w.commit(nil, map[string]string{"README": "hello\n"}, "root")
	w.expectAccepted(t, main, root, "origin", root+":"+main)
	w.mustGP("admin", w.work, `{"protected":{"refs/heads/main":{"requiredChecks":[]}}}`, "rules", "set", "-")
	mirror := filepath.Join(t.TempDir(), "mirror.git")
	w.git(filepath.Dir(mirror), "clone", "-q", "--mirror", w.origin, mirror)
	w.mustGP("", mirror, "", "--repo", mirror, "hook", "install")

	head := w.commit([]string{root}, map[string]string{"f.txt": "x\n"}, "change")
	w.git(w.work, "push", "-q", "origin", head+":refs/heads/topic")
	id := e2eLastLine(w.mustGP("dev", w.work, "", "pr", "open", "--base", "main", "--head", head, "--title", "change"))
	w.mustGP("ann", w.work, "", "pr", "review", id, "--approve")
	remotes := filepath.Join(w.origin, config.RemotesFile)
	online := func() {
		t.Helper()
		writeJSONFile(t, remotes, delivery.RemotesConfig{Remotes: []delivery.Remote{{Name: "m", URL: mirror}}})
	}
	online()
	if out, errs, code := w.gp("", w.origin, "", "mirror", "sync"); code != 0 {
		t.Fatalf("mirror sync: exit %d\n%s%s", code, out, errs)
	}
	if err := os.Remove(remotes); err != nil {
		t.Fatal(err)
	}
	w.mustGP("dev", w.work, "", "pr", "merge", id, "--remote", "origin")
	// The mirror comes back (or is configured) after the landing: one
	// sync carries main and the pr.merged that names its new commit.
	online()
	t.Cleanup(func() { stopWorker(t, w.origin) })
	if out, errs, code := w.gp("", w.origin, "", "mirror", "sync"); code != 0 {
		t.Fatalf("mirror sync: exit %d\n%s%s", code, out, errs)
	}
	if got, want := hubAndHeads(w, mirror), hubAndHeads(w, w.origin); got != want {
		t.Fatalf("mirror:\n%s\nprimary:\n%s\n%s", got, want, w.mustGP("", w.origin, "", "mirror", "status"))
	}

	// Branches deleted here go on the mirror too; a record only the mirror
	// holds stays (hub refs are never pruned).
	w.git(w.origin, "update-ref", "-d", "refs/heads/topic")
	w.git(mirror, "update-ref", "refs/hub/mirror-only", root)
	if out, errs, code := w.gp("", w.origin, "", "mirror", "sync"); code != 0 {
		t.Fatalf("mirror sync after a branch deletion: exit %d\n%s%s", code, out, errs)
	}
	heads := w.git(mirror, "for-each-ref", "--format=%(refname)", "refs/heads/", "refs/hub/mirror-only")
	if strings.Contains(heads, "refs/heads/topic") || !strings.Contains(heads, "refs/hub/mirror-only") || !strings.Contains(heads, "refs/heads/main") {
		t.Fatalf("mirror refs after the deletion of topic:\n%s", heads)
	}
	if out, errs, code := w.gp("", mirror, "", "verify", "--branch", "main"); code != 0 {
		t.Fatalf("verify --branch main on the mirror: exit %d\n%s%s", code, out, errs)
	}

	// A pull request opened and landed while the mirror was away: its
	// hooks cannot judge the landing (its pull request is merged in the
	// records that come with it), and the error says how to catch it up;
	// the fetch it names does.
	if err := os.Remove(remotes); err != nil {
		t.Fatal(err)
	}
	head2 := w.commit([]string{w.ref(main)}, map[string]string{"g.txt": "y\n"}, "second")
	w.git(w.work, "push", "-q", "origin", head2+":refs/heads/topic2")
	id2 := e2eLastLine(w.mustGP("dev", w.work, "", "pr", "open", "--base", "main", "--head", head2, "--title", "second"))
	w.mustGP("ann", w.work, "", "pr", "review", id2, "--approve")
	w.mustGP("dev", w.work, "", "pr", "merge", id2, "--remote", "origin")
	online()
	if out, errs, code := w.gp("", w.origin, "", "mirror", "sync"); code != 1 || !strings.Contains(errs, "git+'s hooks") || !strings.Contains(errs, "git fetch") {
		t.Fatalf("mirror sync of a whole pull request to a hooked mirror: exit %d, want 1 naming the fetch that catches it up\n%s%s", code, out, errs)
	}
	w.git(mirror, "fetch", "-q", w.origin, "+refs/hub/*:refs/hub/*", "+refs/heads/*:refs/heads/*")
	if out, errs, code := w.gp("", w.origin, "", "mirror", "sync"); code != 0 {
		t.Fatalf("mirror sync after the fetch: exit %d\n%s%s", code, out, errs)
	}
	if out, errs, code := w.gp("", mirror, "", "verify", "--branch", "main"); code != 0 || w.git(mirror, "rev-parse", main) != w.ref(main) {
		t.Fatalf("verify --branch main on the mirror after the fetch: exit %d\n%s%s", code, out, errs)
	}
}
