package gitio

// Finding a repository's git directory: FindGitDir asks git (worktrees,
// GIT_DIR, safe.directory and all), DiscoverGitDir walks up from a
// directory without starting a process (git+ merge-tree, where a process
// start is a large part of the run), ResolveGitDir (push.go) checks a path
// already named.

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// FindGitDir resolves dir (a bare repository, a work tree or its .git; ""
// means discover from the current directory as git does).
func FindGitDir(dir string) (gitDir string, bare bool, err error) {
	args := []string{"rev-parse", "--absolute-git-dir", "--is-bare-repository"}
	if dir != "" {
		args = append([]string{"-C", dir}, args...)
	}
	stdout, stderr, err := RunGit(context.Background(), "", nil, args...)
	out := string(bytes.TrimSpace(stdout))
	if err != nil {
		where := dir
		if where == "" {
			where, _ = os.Getwd()
		}
		if derr := dubiousError(where, stderr); derr != nil {
			return "", false, derr
		}
		return "", false, fmt.Errorf("%s is not a git repository (pass --repo DIR or run inside one): %w: %s", where, err, bytes.TrimSpace(stderr))
	}
	lines := strings.Split(out, "\n")
	if len(lines) != 2 {
		return "", false, fmt.Errorf("git rev-parse in %s: unexpected output %q", dir, out)
	}
	return lines[0], lines[1] == "true", nil
}

// DiscoverGitDir returns the git directory of the repository containing wd:
// the first directory up from wd that holds a .git directory, a .git file
// naming one ("gitdir: PATH"), or is itself a bare git directory.
func DiscoverGitDir(wd string) (string, error) {
	for d := wd; ; d = filepath.Dir(d) {
		dotgit := filepath.Join(d, ".git")
		if st, err := os.Stat(dotgit); err == nil {
			if st.IsDir() {
				return dotgit, nil
			}
			b, err := os.ReadFile(dotgit)
			if err == nil && strings.HasPrefix(string(b), "gitdir: ") {
				g := strings.TrimSpace(strings.TrimPrefix(string(b), "gitdir: "))
				if !filepath.IsAbs(g) {
					g = filepath.Join(d, g)
				}
				return g, nil
			}
		}
		if isBareGitDir(d) {
			return d, nil
		}
		if filepath.Dir(d) == d {
			return "", fmt.Errorf("not a git repository (or any parent up to /): %s", wd)
		}
	}
}

func isBareGitDir(d string) bool {
	for _, p := range []string{"HEAD", "objects", "refs"} {
		if _, err := os.Stat(filepath.Join(d, p)); err != nil {
			return false
		}
	}
	return true
}
