package queuerun

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// TestLockExcludesAndMarksDirty: a second taker of a held lock does not get
// it and leaves the dirty mark for the holder; after release it gets it.
func TestLockExcludesAndMarksDirty(t *testing.T) {
	dir := t.TempDir()
	a, b := newLock(dir, "refs/heads/main"), newLock(dir, "refs/heads/main")
	if got, err := a.acquire(); err != nil || !got {
		t.Fatalf("first acquire: %v %v", got, err)
	}
	a.clearDirty()
	if got, err := b.acquire(); err != nil || got {
		t.Fatalf("second acquire while held: got %v, err %v; want refused", got, err)
	}
	if !a.dirty() {
		t.Fatal("a refused taker left no dirty mark for the holder")
	}
	a.release()
	if got, err := b.acquire(); err != nil || !got {
		t.Fatalf("acquire after release: %v %v", got, err)
	}
	b.release()
	if other := newLock(dir, "refs/heads/release/1"); other.path == a.path {
		t.Fatalf("two targets share the lock %s", a.path)
	}
}

// TestLockTakenOverFromCrashedHolder: a process holding the lock dies
// (SIGKILL); the next taker gets the lock at once.
func TestLockTakenOverFromCrashedHolder(t *testing.T) {
	if os.Getenv("QUEUERUN_HOLD_LOCK") != "" {
		return // the helper's own run of this test (see holdLockHelper)
	}
	dir := t.TempDir()
	ready := filepath.Join(dir, "ready")
	cmd := exec.Command(os.Args[0], "-test.run=^TestHoldLockHelper$")
	cmd.Env = append(os.Environ(), "QUEUERUN_HOLD_LOCK="+dir, "QUEUERUN_READY="+ready)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Wait()
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(10 * time.Millisecond) {
		if _, err := os.Stat(ready); err == nil {
			break
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatal("the helper never took the lock")
		}
	}
	l := newLock(dir, "refs/heads/main")
	if got, _ := l.acquire(); got {
		t.Fatal("got the lock while the helper holds it")
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	if got, err := l.acquire(); err != nil || !got {
		t.Fatalf("lock of a killed holder not taken over: %v %v", got, err)
	}
	l.release()
}

// TestHoldLockHelper takes the lock and sleeps, when run as the helper
// process of TestLockTakenOverFromCrashedHolder; otherwise it does nothing.
func TestHoldLockHelper(t *testing.T) {
	dir := os.Getenv("QUEUERUN_HOLD_LOCK")
	if dir == "" {
		t.Skip("helper process only")
	}
	l := newLock(dir, "refs/heads/main")
	if got, err := l.acquire(); err != nil || !got {
		t.Fatalf("helper: %v %v", got, err)
	}
	_ = os.WriteFile(os.Getenv("QUEUERUN_READY"), nil, 0o644)
	time.Sleep(time.Minute)
}
