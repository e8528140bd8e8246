package trust

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

var globPaths = []string{
	"README.md", "a.md", "md", "docs/" + "a.md", "docs/guide/b.txt", "docs/guide/deep/c.md",
	"src/docs/x.go", "src/main.go", "src/docs.go", "src/a/b/c/d.go", "abc/f", "abcd/f",
	"x/abc/f", "a/b", "a/x/b", "a/x/y/b", "b", "build/out/a.o", "lib/build/x", "foo.txt.md",
	".github/CODEOWNERS", "docs.md/z", "q/ab/r", "q/abb/r", "q/a/r",
}

var globPatterns = []string{
	"*.md", "docs/**", "docs/", "docs", "/docs", "/src/*.go", "src/*.go", "src/**/*.go", "**/docs",
	"**/docs/**", "abc/**", "a/**/b", "a/*/b", "b", "/b", "build/", "*", "**", "?.md", "a?c/f",
	"docs/guide/", "src/docs*", "*.txt", ".github/", "**/*.md", "docs/*", "q/a*/r", "q/a?/r",
	"q/***/r", "a**b", "x/abc/", "/a/b", "src/a/**/d.go", "docs/guide/**/", "*/guide",
}

// TestPathGlobMatchesCheckIgnore holds the matcher to git check-ignore:
// for each pattern alone in a .gitignore, the files it ignores are the
// files Match matches.
func TestPathGlobMatchesCheckIgnore(t *testing.T) {
	git, err := exec.LookPath("git")
	if err != nil {
		t.Skip("git not installed")
	}
	dir := t.TempDir()
	for _, p := range globPaths {
		f := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(f), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(f, nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	run := func(stdin string, args ...string) string {
		cmd := exec.Command(git, args...)
		cmd.Dir = dir
		cmd.Stdin = strings.NewReader(stdin)
		cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+dir)
		out, err := cmd.Output()
		var ee *exec.ExitError
		if err != nil && !(errors.As(err, &ee) && ee.ExitCode() == 1) { // 1: nothing ignored
			t.Fatalf("git %v: %v", args, err)
		}
		return string(out)
	}
	run("", "init", "-q")
	for _, pat := range globPatterns {
		if err := os.WriteFile(filepath.Join(dir, ".gitignore"), []byte(pat+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		ignored := map[string]bool{}
		for _, l := range strings.Split(run(strings.Join(globPaths, "\n")+"\n", "check-ignore", "--no-index", "--stdin"), "\n") {
			if l != "" {
				ignored[l] = true
			}
		}
		g, err := CompilePathGlob(pat)
		if err != nil {
			t.Fatalf("CompilePathGlob(%q): %v", pat, err)
		}
		for _, p := range globPaths {
			if got := g.Match(p); got != ignored[p] {
				t.Errorf("pattern %q, path %q: Match = %v, git check-ignore says %v", pat, p, got, ignored[p])
			}
		}
	}
}

func TestPathGlobInvalid(t *testing.T) {
	for _, p := range []string{"", " a", "a ", "!a", "#a", "[ab]", `a\*`, "/", "a//b", "a/../b", "./a", "a\nb"} {
		if _, err := CompilePathGlob(p); !errors.Is(err, ErrBadGlob) {
			t.Errorf("CompilePathGlob(%q) = %v, want ErrBadGlob", p, err)
		}
	}
}
