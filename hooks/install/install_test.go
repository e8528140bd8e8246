package install

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gitplus/gitplus/hooks/config"
)

// TestPostReceiveStartsNothingWithoutConfiguration: the post-receive script
// runs git+ only when an after-push configuration file exists (or a hook is
// chained); otherwise it exits 0 without starting a process.
func TestPostReceiveStartsNothingWithoutConfiguration(t *testing.T) {
	dir := t.TempDir()
	gitDir := filepath.Join(dir, "r.git")
	if out, err := exec.Command("git", "init", "-q", "--bare", gitDir).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v\n%s", err, out)
	}
	calls := filepath.Join(dir, "calls")
	fake := filepath.Join(dir, "git+")
	if err := os.WriteFile(fake, []byte("#!/bin/sh\necho \"$*\" >> "+calls+"\ncat > /dev/null\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := Install(gitDir, fake); err != nil {
		t.Fatal(err)
	}
	hook := filepath.Join(gitDir, "hooks", "post-receive")
	run := func() string {
		t.Helper()
		os.Remove(calls)
		cmd := exec.Command(hook)
		cmd.Dir = gitDir
		cmd.Env = append(os.Environ(), "GIT_DIR=.")
		cmd.Stdin = strings.NewReader(strings.Repeat("0", 40) + " " + strings.Repeat("1", 40) + " refs/heads/main\n")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("post-receive: %v\n%s", err, out)
		}
		b, _ := os.ReadFile(calls)
		return strings.TrimSpace(string(b))
	}
	if got := run(); got != "" {
		t.Fatalf("with no configuration post-receive started %q", got)
	}
	for _, f := range []string{config.RemotesFile, config.WebhooksFile, config.WakeFile} {
		p := filepath.Join(gitDir, f)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte("{}"), 0o644); err != nil {
			t.Fatal(err)
		}
		if got := run(); got != "hook post-receive" {
			t.Fatalf("with %s post-receive ran %q, want git+ hook post-receive", f, got)
		}
		os.Remove(p)
	}
	// A chained hook runs, and git+ after it, whatever the configuration.
	if err := os.WriteFile(hook+ChainedSuffix, []byte("#!/bin/sh\necho chained >> "+calls+"\ncat >/dev/null\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if got := run(); got != "chained\nhook post-receive" {
		t.Fatalf("with a chained hook: %q", got)
	}
}
