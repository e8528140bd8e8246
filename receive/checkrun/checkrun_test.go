package checkrun

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

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
