package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gitplus/gitplus/fixtures"
)

// TestSquashMergeHeadChecksE2E (issue #30): on a squash branch `pr merge`
// lands the squash step of a head that is not rebased on the tip (the tip
// moved meanwhile) with the required checks green on the head only, as a
// direct landing of the head is judged: one parent, the trailers, and
// verify --branch main passes on a mirror. With the head's checks missing
// pr merge is refused [checks-missing] with every ref unchanged; a
// hand-built step whose tree adds one file, its head green, is refused
// [candidate-tree]; pr merge lands while the queue is paused (the pause
// stops the queue, not the branch).
func TestSquashMergeHeadChecksE2E(t *testing.T) {
	t.Parallel()
	e := newHubEnv(t, "admin", "dev", "rev", "ci", "q")
	bare, _, ids := squashSetup(t, e, squashRules, [][3]string{
		{"m1", "m1.txt", "one\n"}, {"m2", "m2.txt", "two\n"}, {"m3", "m3.txt", "three\n"},
	})
	c0 := strings.TrimSpace(fixtures.Git(t, bare, "rev-parse", "main"))
	headOf := func(br string) string { return strings.TrimSpace(fixtures.Git(t, bare, "rev-parse", br)) }
	h1, h2, h3 := headOf("m1"), headOf("m2"), headOf("m3")
	ci := func(id, rev string) {
		t.Helper()
		e.ok(bare, "ci", "check", "run", "--pr", id, "--rev", rev, "--name", "ci", "--", "true")
	}

	// The first lands: the tip moves away from the others' base.
	ci(ids[0], h1)
	e.ok(bare, "q", "pr", "merge", ids[0])
	t1 := headOf("main")
	if t1 == c0 || t1 == h1 {
		t.Fatalf("pr merge of %s left main at %s", ids[0], t1)
	}

	// Checks missing on the head: refused, nothing moves.
	before := refsOf(t, bare)
	out, errs, code := e.run(bare, "q", nil, "pr", "merge", ids[1])
	if code == 0 || !strings.Contains(out+errs, "[checks-missing]") {
		t.Fatalf("pr merge without checks on the head: exit %d\n%s%s", code, out, errs)
	}
	if after := refsOf(t, bare); after != before {
		t.Fatalf("a refused pr merge changed refs:\nbefore:\n%s\nafter:\n%s", before, after)
	}

	// Green on the head, not rebased: pr merge lands the squash step.
	ci(ids[1], h2)
	if out := e.ok(bare, "q", "pr", "merge", ids[1]); !strings.Contains(out, "as squash step") {
		t.Fatalf("pr merge on a squash branch: %s", out)
	}
	t2 := headOf("main")
	if got := strings.TrimSpace(fixtures.Git(t, bare, "log", "-1", "--format=%P|%(trailers:key=Git-Plus-PR,valueonly,separator=)|%(trailers:key=Git-Plus-Head,valueonly,separator=)", "main")); got != t1+"|"+ids[1]+"|"+h2 {
		t.Fatalf("pr merge landed %q, want one parent %s and the trailers %s, %s", got, t1, ids[1], h2)
	}

	// A hand-built single step for the third, its head green, whose tree
	// adds one file: the tree is recomputed whatever the checks say.
	ci(ids[2], h3)
	clone := landingClone(t, e, bare, "q")
	fixtures.Git(t, clone, "fetch", "-q", "origin", "main", "m3")
	merged := strings.Fields(fixtures.Git(t, clone, "merge-tree", "--write-tree", t2, h3))[0]
	fixtures.Git(t, clone, "read-tree", merged)
	evil := filepath.Join(t.TempDir(), "evil.txt")
	if err := os.WriteFile(evil, []byte("evil\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	blob := strings.TrimSpace(fixtures.Git(t, clone, "hash-object", "-w", evil))
	fixtures.Git(t, clone, "update-index", "--add", "--cacheinfo", "100644,"+blob+",evil.txt")
	evilTree := strings.TrimSpace(fixtures.Git(t, clone, "write-tree"))
	bad := strings.TrimSpace(fixtures.Git(t, clone, "commit-tree", evilTree, "-p", t2, "-m", "m3\n\nGit-Plus-PR: "+ids[2]+"\nGit-Plus-Head: "+h3))
	pushRefused(t, e, clone, bare, "refs/heads/main", "candidate-tree", bad+":refs/heads/main")

	// pr merge lands it while the queue is paused.
	e.ok(bare, "q", "queue", "pause", "--target", "main", "--reason", "release freeze")
	e.ok(bare, "q", "pr", "merge", ids[2])
	e.ok(bare, "q", "queue", "resume", "--target", "main")

	steps := strings.Fields(fixtures.Git(t, bare, "rev-list", "--first-parent", c0+"..main"))
	if len(steps) != 3 {
		t.Fatalf("%d commits landed, want 3", len(steps))
	}
	if merges := strings.TrimSpace(fixtures.Git(t, bare, "log", "--merges", "--format=%H", "main")); merges != "" {
		t.Fatalf("git log --merges main: %s", merges)
	}
	mirror := filepath.Join(t.TempDir(), "mirror.git")
	fixtures.Git(t, bare, "clone", "-q", "--mirror", bare, mirror)
	out, errs, code = e.run(mirror, "", nil, "verify", "--branch", "main", "--since", c0, "--json")
	if code != 0 || strings.Count(out, `"kind": "squash"`)+strings.Count(out, `"kind":"squash"`) != 3 {
		t.Fatalf("verify --branch main on a mirror: exit %d\n%s%s", code, out, errs)
	}
}
