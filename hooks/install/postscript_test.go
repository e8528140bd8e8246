package install

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gitplus/gitplus/hooks/config"
)

// TestPostReceiveScriptStartsWhenUnjudged: the post-receive script starts
// nothing without an after-push configuration file, but only while git+'s
// pre-receive is the one beside it; once an operator drops it (replaced or
// removed), git+'s post-receive runs on every push, so that it can raise
// the unjudged-update alarm (docs/operating.md).
func TestPostReceiveScriptStartsWhenUnjudged(t *testing.T) {
	gitDir := t.TempDir()
	hooksDir := filepath.Join(gitDir, "hooks")
	if err := os.MkdirAll(filepath.Join(gitDir, "hub"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(hooksDir, 0o755); err != nil {
		t.Fatal(err)
	}
	ran := filepath.Join(t.TempDir(), "ran")
	bin := filepath.Join(t.TempDir(), "git+")
	if err := os.WriteFile(bin, []byte("#!/bin/sh\ncat >/dev/null\necho \"$@\" >>"+ran+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	write := func(name, content string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(hooksDir, name), []byte(content), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	write("post-receive", script("post-receive", bin, ""))
	push := func() bool {
		t.Helper()
		_ = os.Remove(ran)
		for _, sh := range []string{"sh", "bash"} {
			if _, err := exec.LookPath(sh); err != nil {
				continue
			}
			cmd := exec.Command(sh, filepath.Join(hooksDir, "post-receive"))
			cmd.Dir = gitDir
			cmd.Env = append(os.Environ(), "GIT_DIR="+gitDir)
			cmd.Stdin = strings.NewReader("0000000000000000000000000000000000000000 1111111111111111111111111111111111111111 refs/heads/main\n")
			if out, err := cmd.CombinedOutput(); err != nil || len(out) != 0 {
				t.Fatalf("%s post-receive: %v\n%s", sh, err, out)
			}
		}
		b, err := os.ReadFile(ran)
		return err == nil && strings.Count(string(b), "hook post-receive") >= 1
	}
	write("pre-receive", script("pre-receive", bin, ""))
	if push() {
		t.Fatal("git+'s pre-receive in place, no after-push configuration: post-receive started git+")
	}
	write("pre-receive", "#!/bin/sh\ncat >/dev/null\nexit 0\n")
	if !push() {
		t.Fatal("pre-receive replaced: post-receive did not start git+ (no alarm possible)")
	}
	if err := os.Remove(filepath.Join(hooksDir, "pre-receive")); err != nil {
		t.Fatal(err)
	}
	if !push() {
		t.Fatal("pre-receive removed: post-receive did not start git+")
	}
	write("pre-receive", script("pre-receive", bin, ""))
	if err := os.WriteFile(filepath.Join(gitDir, config.WakeFile), []byte(`{"rules":[]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if !push() {
		t.Fatal("a wake.json: post-receive did not start git+")
	}
}
