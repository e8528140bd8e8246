package install

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestReachHook: how a pre-receive reaches git+ is read as git finds the
// hook (core.hooksPath) and from what the script runs; a comment naming
// git+ is not a run, and a dangling symlink is a hook git skips.
func TestReachHook(t *testing.T) {
	dir := t.TempDir()
	gitDir := filepath.Join(dir, "r.git")
	if out, err := exec.Command("git", "init", "-q", "--bare", gitDir).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v\n%s", err, out)
	}
	shared := filepath.Join(dir, "shared-hooks")
	if err := os.Mkdir(shared, 0o755); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("git", "--git-dir="+gitDir, "config", "core.hooksPath", shared).CombinedOutput(); err != nil {
		t.Fatalf("git config: %v\n%s", err, out)
	}
	write := func(body string) {
		t.Helper()
		p := filepath.Join(shared, "pre-receive")
		os.Remove(p)
		if err := os.WriteFile(p, []byte("#!/bin/sh\n"+body), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	reach := func() Reach {
		t.Helper()
		hd, err := hooksPath(gitDir)
		if err != nil {
			t.Fatal(err)
		}
		if hd != shared {
			t.Fatalf("hooks directory %s, not core.hooksPath %s", hd, shared)
		}
		return reachHook(hd, "pre-receive")
	}

	if r := reach(); r.Via != ViaNone || !strings.Contains(r.Why, "there is no") {
		t.Fatalf("no hook: %+v", r)
	}
	write("# runs /usr/local/bin/git+ hook pre-receive one day\nexit 0\n")
	if r := reach(); r.Via != ViaNone {
		t.Fatalf("a comment naming git+: %+v", r)
	}
	write("/srv/site/check || exit 1\nexec \"/usr/local/bin/git+hook\" pre-receive\n")
	if r := reach(); r.Via != ViaScript || r.Binary != "/usr/local/bin/git+hook" {
		t.Fatalf("a script running git+hook: %+v", r)
	}
	write("exec /opt/gitplus/git+ hook post-receive\n")
	if r := reach(); r.Via != ViaNone {
		t.Fatalf("a script running git+'s post-receive as pre-receive: %+v", r)
	}
	os.Remove(filepath.Join(shared, "pre-receive"))
	if err := os.Symlink(filepath.Join(dir, "gone"), filepath.Join(shared, "pre-receive")); err != nil {
		t.Fatal(err)
	}
	if r := reach(); r.Via != ViaNone || !strings.Contains(r.Why, "symlink to nothing") {
		t.Fatalf("a dangling symlink: %+v", r)
	}
	os.Remove(filepath.Join(shared, "pre-receive"))
	if err := os.WriteFile(filepath.Join(shared, "pre-receive"), []byte(script("pre-receive", "/opt/x/git+", "/opt/x/git+hook")), 0o755); err != nil {
		t.Fatal(err)
	}
	if r := reach(); r.Via != ViaDirect || r.Binary != "/opt/x/git+hook" {
		t.Fatalf("git+'s script: %+v", r)
	}
}
