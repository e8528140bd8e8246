package gitio

import (
	"os/exec"
	"testing"
)

// TestSymbolicTarget: a symbolic ref (and a chain of them) resolves to the
// ref it writes through to, read from loose files only; a packed ref, a
// missing ref and an ordinary loose ref are their own targets.
func TestSymbolicTarget(t *testing.T) {
	dir := t.TempDir()
	run := func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", append([]string{"--git-dir", dir}, args...)...)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	run("init", "-q", "--bare")
	out, err := exec.Command("git", "--git-dir", dir, "-c", "user.name=t", "-c", "user.email=t@example.invalid", "commit-tree", "-m", "x", "4b825dc642cb6eb9a060e54bf8d69288fbee4904").Output()
	if err != nil {
		t.Fatal(err)
	}
	c := string(out[:40])
	run("update-ref", "refs/heads/packed", c)
	run("pack-refs", "--all")
	run("update-ref", "refs/heads/loose", c)
	run("symbolic-ref", "refs/heads/a", "refs/heads/packed")
	run("symbolic-ref", "refs/heads/b", "refs/heads/a")
	run("symbolic-ref", "refs/heads/dangling", "refs/heads/nothing-yet")
	for name, want := range map[string]string{
		"refs/heads/a":        "refs/heads/packed",
		"refs/heads/b":        "refs/heads/packed",
		"refs/heads/dangling": "refs/heads/nothing-yet",
		"refs/heads/packed":   "refs/heads/packed",
		"refs/heads/loose":    "refs/heads/loose",
		"refs/heads/absent":   "refs/heads/absent",
		"refs/heads":          "refs/heads", // a directory is no ref
	} {
		got, err := SymbolicTarget(dir, name)
		if err != nil || got != want {
			t.Errorf("SymbolicTarget(%s) = %q, %v; want %q", name, got, err, want)
		}
	}
	if _, err := SymbolicTarget(dir, "refs/../config"); err == nil {
		t.Error("a name leaving refs/ was resolved")
	}
}
