package main

// Verbs report the read errors they hit (docs/operating.md, "git's
// maintenance beside git+"): a reader that cannot read what it needs
// fails saying what, never answers as if the thing were absent.

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestQueueShowReportsReadErrors: with the queue's target unreadable,
// `git+ queue show` exits 1 naming it; it used to print the entries with
// no reason why they wait, and exit 0.
func TestQueueShowReportsReadErrors(t *testing.T) {
	t.Parallel()
	qw := newQWorld(t, 2, true)
	if out, errs, code := qw.gp("", qw.origin, "", "queue", "show", "--target", "main"); code != 0 || !strings.Contains(out, "no candidate yet") {
		t.Fatalf("queue show before: exit %d\n%s%s", code, out, errs)
	}
	// The target's loose ref file holds something that is no ref.
	if err := os.WriteFile(filepath.Join(qw.origin, "refs", "heads", "main"), []byte("not an id\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, errs, code := qw.gp("", qw.origin, "", "queue", "show", "--target", "main")
	if code != 1 || !strings.Contains(errs, "refs/heads/main") {
		t.Fatalf("queue show with an unreadable target: exit %d, want 1 naming refs/heads/main\nstdout: %s\nstderr: %s", code, out, errs)
	}
}
