package hooks

import (
	"path/filepath"
	"testing"
)

// A hook's repository: the flag, else $GIT_DIR, else the current
// directory; AbsGitDir makes it absolute.
func TestGitDir(t *testing.T) {
	t.Setenv("GIT_DIR", "")
	if got := GitDir(""); got != "." {
		t.Fatalf("no flag, no GIT_DIR: %q", got)
	}
	t.Setenv("GIT_DIR", "env.git")
	if got := GitDir(""); got != "env.git" {
		t.Fatalf("GIT_DIR: %q", got)
	}
	if got := GitDir("flag.git"); got != "flag.git" {
		t.Fatalf("--repo: %q", got)
	}
	want, _ := filepath.Abs("env.git")
	if got := AbsGitDir(""); got != want {
		t.Fatalf("AbsGitDir: %q, want %q", got, want)
	}
}
