package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gitplus/gitplus/fixtures"
)

// TestDemo runs `git+ demo --keep DIR` from the built binary and checks the
// story it tells: three landings, two evictions with their reasons, two
// refused pushes with their codes, and verify passing.
func TestDemo(t *testing.T) {
	if testing.Short() {
		t.Skip("the demo runs about thirty git+ commands")
	}
	t.Parallel()
	bin := fixtures.Binary(t)
	keep := t.TempDir()
	cmd := exec.Command(bin, "demo", "--keep", keep)
	cmd.Env = append(os.Environ(), "GITPLUS_KEY=/nonexistent") // the demo must ignore the caller's key
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git+ demo: %v\n%s", err, out)
	}
	text := string(out)
	for _, want := range []string{
		"LANDED PR1:",
		"LANDED PR2:",
		"LANDED PR5:",
		"EVICTED PR3 (conflict): merging it onto the chain conflicts in README.md",
		"EVICTED PR4 (failed): check ci failed",
		"CI on PR4's candidate",
		"FAILURE (FAIL: add 2 3 gave 6, want 5)",
		"the queue is drained",
		"git+: refused refs/heads/main: [not-a-pr-head]",
		"git+: refused refs/heads/main: [non-fast-forward]",
		"REFUSED an unreviewed commit pushed straight to main; main did not move",
		"3 landings (0 direct covering 0 more commits, 3 candidates, 0 without pull request rules), 0 unjustified",
		"verified: every landing on main is justified",
		"Demo finished in",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("demo output lacks %q", want)
		}
	}
	if t.Failed() {
		t.Logf("demo output:\n%s", text)
	}
	// --keep leaves the repository: main carries three queue candidates
	// (two parents each) above the root.
	bare := filepath.Join(keep, "repo.git")
	log, err := fixtures.GitErr(t, bare, nil, "log", "--first-parent", "--format=%H %P", "main")
	if err != nil {
		t.Fatalf("kept repository: %v", err)
	}
	lines := strings.Split(log, "\n")
	if len(lines) != 4 {
		t.Fatalf("main's first-parent chain has %d commits, want 4:\n%s", len(lines), log)
	}
	if len(strings.Fields(lines[3])) != 1 {
		t.Errorf("main's first commit %q is not a root", lines[3])
	}
	for _, l := range lines[:3] {
		if len(strings.Fields(l)) != 3 {
			t.Errorf("landing with parents %q is not a two-parent candidate", l)
		}
	}
}
