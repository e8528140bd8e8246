package install

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// A config write that meets another writer's config.lock is retried until
// the lock goes; one that never goes still fails, naming it.
func TestSetConfigOutlastsConfigLock(t *testing.T) {
	gitDir := filepath.Join(t.TempDir(), "r.git")
	if out, err := exec.Command("git", "init", "-q", "--bare", gitDir).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v\n%s", err, out)
	}
	lock := filepath.Join(gitDir, "config.lock")
	if err := os.WriteFile(lock, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	released := make(chan struct{})
	go func() {
		defer close(released)
		time.Sleep(30 * time.Millisecond) // after the first attempt, before the last
		os.Remove(lock)
	}()
	if out, err := setConfig(gitDir, "receive.fsckObjects", "true"); err != nil {
		t.Fatalf("setConfig with config.lock held for a moment: %v: %s", err, out)
	}
	<-released
	if got, _ := git(gitDir, "config", "--get", "receive.fsckObjects"); got != "true" {
		t.Fatalf("receive.fsckObjects = %q", got)
	}
	if err := os.WriteFile(lock, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := setConfig(gitDir, "receive.fsckObjects", "false"); err == nil {
		t.Fatalf("setConfig with config.lock held for good succeeded: %s", out)
	}
}
