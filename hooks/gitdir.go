package hooks

import (
	"os"
	"path/filepath"
)

// GitDir is the repository a hook runs for: dir (a verb's --repo) when
// given, else $GIT_DIR, else the current directory, where git runs hooks.
func GitDir(dir string) string {
	if dir == "" {
		dir = os.Getenv("GIT_DIR")
	}
	if dir == "" {
		dir = "."
	}
	return dir
}

// AbsGitDir is GitDir made absolute (as it is when that fails): what the
// post-receive chain, the delivery worker and a wake rule's supervisor run
// in, and hand to the processes they start.
func AbsGitDir(dir string) string {
	d := GitDir(dir)
	if a, err := filepath.Abs(d); err == nil {
		return a
	}
	return d
}
