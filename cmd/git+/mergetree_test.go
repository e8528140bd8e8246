package main

import (
	"bytes"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func mtGit(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = []string{
		"GIT_CONFIG_NOSYSTEM=1", "HOME=" + dir, "GIT_CONFIG_GLOBAL=/dev/null",
		"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.invalid",
		"GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.invalid",
		"GIT_AUTHOR_DATE=1600000000 +0000", "GIT_COMMITTER_DATE=1600000000 +0000",
		"PATH=" + os.Getenv("PATH"),
	}
	out, err := cmd.CombinedOutput()
	if err != nil && !(len(args) > 0 && args[0] == "merge-tree") {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

// runCaptured runs the CLI with stdin and returns its exit code and stdout.
func runCaptured(t *testing.T, stdin string, args ...string) (int, string) {
	t.Helper()
	outF, err := os.CreateTemp(t.TempDir(), "out")
	if err != nil {
		t.Fatal(err)
	}
	inF, err := os.CreateTemp(t.TempDir(), "in")
	if err != nil {
		t.Fatal(err)
	}
	inF.WriteString(stdin)
	inF.Seek(0, 0)
	oldOut, oldIn := os.Stdout, os.Stdin
	os.Stdout, os.Stdin = outF, inF
	code := run(append([]string{"git+"}, args...))
	os.Stdout, os.Stdin = oldOut, oldIn
	outF.Seek(0, 0)
	b, _ := io.ReadAll(outF)
	return code, string(b)
}

func TestMergeTreeVerb(t *testing.T) {
	dir := t.TempDir()
	w := filepath.Join(dir, "w")
	mtGit(t, dir, "init", "-q", "-b", "main", w)
	write := func(name, content string) {
		if err := os.WriteFile(filepath.Join(w, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("f", "1\n2\n3\n4\n5\n")
	write("g", "g\n")
	mtGit(t, w, "add", ".")
	mtGit(t, w, "commit", "-qm", "base")
	mtGit(t, w, "checkout", "-qb", "side")
	write("f", "1\n2\n3\n4\nfive\n")
	write("g", "side\n")
	mtGit(t, w, "commit", "-qam", "side")
	mtGit(t, w, "checkout", "-q", "main")
	write("f", "one\n2\n3\n4\n5\n")
	mtGit(t, w, "commit", "-qam", "main")
	mtGit(t, w, "checkout", "-qb", "other", "main~1")
	write("g", "other\n")
	mtGit(t, w, "commit", "-qam", "other")
	mtGit(t, w, "checkout", "-q", "--orphan", "lonely")
	mtGit(t, w, "commit", "-qm", "lonely")
	mtGit(t, w, "checkout", "-q", "main")
	gitDir := filepath.Join(w, ".git")

	want := mtGit(t, w, "merge-tree", "--write-tree", "main", "side")
	code, out := runCaptured(t, "", "merge-tree", "--git-dir", gitDir, "main", "side")
	if code != 0 || strings.TrimSpace(out) != want {
		t.Fatalf("clean merge: exit %d, out %q, want %q", code, out, want)
	}
	// The builder wrote the tree: git can read it.
	if ls := mtGit(t, w, "ls-tree", want); !strings.Contains(ls, "\tf") {
		t.Fatalf("merged tree not readable by git: %q", ls)
	}
	// Short ids and HEAD resolve; discovery from the working directory.
	short := mtGit(t, w, "rev-parse", "--short=7", "side")
	wd, _ := os.Getwd()
	if err := os.Chdir(w); err != nil {
		t.Fatal(err)
	}
	code, out = runCaptured(t, "", "merge-tree", "HEAD", short)
	os.Chdir(wd)
	if code != 0 || strings.TrimSpace(out) != want {
		t.Fatalf("HEAD + short id: exit %d, out %q", code, out)
	}

	code, out = runCaptured(t, "", "--repo", gitDir, "merge-tree", "side", "other")
	if code != 1 || out != "CONFLICT (content): g\n" {
		t.Fatalf("conflict: exit %d, out %q", code, out)
	}
	if code, _ = runCaptured(t, "", "merge-tree", "--git-dir", gitDir, "main", "nosuch"); code != 128 {
		t.Fatalf("unknown revision: exit %d, want 128", code)
	}
	if code, _ = runCaptured(t, "", "merge-tree", "--git-dir", gitDir, "main", "lonely"); code != 128 {
		t.Fatalf("unrelated: exit %d, want 128", code)
	}
	if code, _ = runCaptured(t, "", "merge-tree", "--git-dir", gitDir, "main"); code != 2 {
		t.Fatalf("one argument: exit %d, want 2", code)
	}

	code, out = runCaptured(t, "main side\nside other\n\nmain side\n", "merge-tree", "--git-dir", gitDir, "--stdin")
	wantOut := want + "\nconflict g\n" + want + "\n"
	if code != 0 || out != wantOut {
		t.Fatalf("--stdin: exit %d, out %q, want %q", code, out, wantOut)
	}
	code, out = runCaptured(t, "main side\nmain nosuch\n", "merge-tree", "--git-dir", gitDir, "--stdin")
	if code != 128 || !bytes.HasPrefix([]byte(out), []byte(want)) {
		t.Fatalf("--stdin with a bad line: exit %d, out %q", code, out)
	}
}
