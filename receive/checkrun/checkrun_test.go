package checkrun

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gitplus/gitplus/fixtures"
)

// TestCheckoutRelativeGitDir: Checkout works when the git
// directory is given relative to the current directory, for a work tree's
// .git and for a bare repository (git prints the objects path relative to
// where it ran, not to the git directory).
func TestCheckoutRelativeGitDir(t *testing.T) {
	work := filepath.Join(t.TempDir(), "w")
	run := func(dir string, args ...string) string {
		t.Helper()
		return fixtures.Git(t, dir, args...)
	}
	run(filepath.Dir(work), "init", "-q", work)
	if err := os.WriteFile(filepath.Join(work, "f.txt"), []byte("content\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	run(work, "add", ".")
	run(work, "commit", "-q", "-m", "one")
	commit := strings.TrimSpace(run(work, "rev-parse", "HEAD"))
	bare := filepath.Join(t.TempDir(), "b.git")
	run(filepath.Dir(bare), "clone", "-q", "--bare", work, bare)

	for _, tc := range []struct{ cwd, gitDir string }{{work, ".git"}, {bare, "."}} {
		t.Chdir(tc.cwd)
		dir := filepath.Join(t.TempDir(), "tree")
		if err := Checkout(tc.gitDir, dir, commit); err != nil {
			t.Fatalf("checkout with git dir %q from %s: %v", tc.gitDir, tc.cwd, err)
		}
		got, err := os.ReadFile(filepath.Join(dir, "f.txt"))
		if err != nil || string(got) != "content\n" {
			t.Fatalf("checked-out f.txt: %q, %v", got, err)
		}
	}
}

// TestBelowWait: how long a retry waits for a step below (docs/queue.md,
// "Retries below a red step").
func TestBelowWait(t *testing.T) {
	for _, tt := range []struct {
		o       Options
		grouped bool
		want    time.Duration
	}{
		{Options{}, false, 0},                                      // strict: no wait by default
		{Options{}, true, 10 * time.Minute},                        // a group end, no timeout
		{Options{Timeout: 3 * time.Minute}, true, 3 * time.Minute}, // a group end waits the timeout
		{Options{BelowWait: time.Minute}, false, time.Minute},      // asked for: strict waits too
		{Options{BelowWait: -1, Timeout: time.Minute}, true, 0},    // --below-wait 0: never
		{Options{BelowWait: 2 * time.Minute, Timeout: 9}, true, 2 * time.Minute},
	} {
		if got := tt.o.belowWait(tt.grouped); got != tt.want {
			t.Errorf("%+v grouped %v: %v, want %v", tt.o, tt.grouped, got, tt.want)
		}
	}
}
