package install

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestInstallSetsFsckObjects: hook install turns on git's own object checks
// on push (docs/objects.md), and re-installing keeps them on.
func TestInstallSetsFsckObjects(t *testing.T) {
	dir := t.TempDir()
	gitDir := filepath.Join(dir, "r.git")
	if out, err := exec.Command("git", "init", "-q", "--bare", gitDir).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v\n%s", err, out)
	}
	fake := filepath.Join(dir, "git+")
	if err := os.WriteFile(fake, []byte("#!/bin/sh\nexit 0\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 2; i++ {
		if err := Install(gitDir, fake); err != nil {
			t.Fatal(err)
		}
		out, err := exec.Command("git", "--git-dir", gitDir, "config", "--bool", "receive.fsckObjects").CombinedOutput()
		if err != nil || strings.TrimSpace(string(out)) != "true" {
			t.Fatalf("install %d: receive.fsckObjects = %q (%v), want true", i+1, out, err)
		}
	}
}
