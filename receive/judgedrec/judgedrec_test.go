package judgedrec

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

func upd(i int) Update {
	return Update{Ref: fmt.Sprintf("refs/heads/b%d", i), Old: strings.Repeat("0", 40), New: fmt.Sprintf("%040x", i+1)}
}

// TestConsume: a judged update is vouched for once; an update nobody
// judged, one judged too long ago, and one already consumed are not.
func TestConsume(t *testing.T) {
	dir := t.TempDir()
	now := time.Now()
	if err := Judged(dir, []Update{upd(1), upd(2)}, now.Add(-Window-time.Minute)); err != nil { // too old
		t.Fatal(err)
	}
	if err := Judged(dir, []Update{upd(2), upd(3)}, now); err != nil {
		t.Fatal(err)
	}
	got, err := Consume(dir, []Update{upd(1), upd(2), upd(3), upd(4)}, now)
	if err != nil {
		t.Fatal(err)
	}
	if want := []bool{false, true, true, false}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("Consume = %v, want %v", got, want)
	}
	if got, _ := Consume(dir, []Update{upd(2), upd(3)}, now); got[0] || got[1] {
		t.Fatalf("a consumed record vouched again: %v", got)
	}
	// The same update judged twice (two pushes of it) vouches twice.
	Judged(dir, []Update{upd(5)}, now)
	Judged(dir, []Update{upd(5)}, now)
	for i := 0; i < 2; i++ {
		if got, _ := Consume(dir, []Update{upd(5)}, now); !got[0] {
			t.Fatalf("the %d. push of a twice-judged update was not vouched for", i+1)
		}
	}
	if got, _ := Consume(dir, []Update{upd(5)}, now); got[0] {
		t.Fatal("a third push of a twice-judged update was vouched for")
	}
}

// TestConsumeAcrossChunksAndRotation: records far from the end of the file
// (more than one chunk back) and in the rotated file are found.
func TestConsumeAcrossChunksAndRotation(t *testing.T) {
	dir := t.TempDir()
	now := time.Now()
	Judged(dir, []Update{upd(0)}, now)
	for i := 1; i < 3000; i++ { // about 300 KB: several chunks
		Judged(dir, []Update{upd(i)}, now)
	}
	if got, _ := Consume(dir, []Update{upd(0), upd(1500)}, now); !got[0] || !got[1] {
		t.Fatalf("records chunks back were not found: %v", got)
	}
	p := filepath.Join(dir, File)
	if err := os.Rename(p, p+".1"); err != nil {
		t.Fatal(err)
	}
	Judged(dir, []Update{upd(9999)}, now)
	if got, _ := Consume(dir, []Update{upd(2999), upd(9999)}, now); !got[0] || !got[1] {
		t.Fatalf("a record in the rotated file was not found: %v", got)
	}
}

// TestConcurrentPushes: many pushes judged and consumed at once each find
// their own record (lines never interleave).
func TestConcurrentPushes(t *testing.T) {
	dir := t.TempDir()
	var wg sync.WaitGroup
	bad := make(chan int, 64)
	for i := 0; i < 64; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			u := []Update{upd(i), upd(1000 + i)}
			if err := Judged(dir, u, time.Now()); err != nil {
				bad <- i
				return
			}
			if got, err := Consume(dir, u, time.Now()); err != nil || !got[0] || !got[1] {
				bad <- i
			}
		}(i)
	}
	wg.Wait()
	close(bad)
	for i := range bad {
		t.Errorf("push %d was not vouched for", i)
	}
}

// FuzzConsume: whatever the file holds, Consume neither panics nor vouches
// for an update no J line names.
func FuzzConsume(f *testing.F) {
	f.Add([]byte("J 1 " + strings.Repeat("0", 40) + " " + strings.Repeat("1", 40) + " refs/heads/main\n"))
	f.Add([]byte("U x y\nJ\n\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		dir := t.TempDir()
		p := filepath.Join(dir, File)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		u := Update{Ref: "refs/heads/zz-not-in-seed", Old: strings.Repeat("2", 40), New: strings.Repeat("3", 40)}
		got, _ := Consume(dir, []Update{u}, time.Unix(0, 2))
		if got[0] && !strings.Contains(string(data), u.Ref) {
			t.Fatalf("vouched for an update the file does not name")
		}
	})
}
