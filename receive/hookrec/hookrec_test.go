package hookrec

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// BenchmarkAppend is what a pre-receive pays for its record: one open,
// write, seek and close (docs/operating.md, "Metrics").
func BenchmarkAppend(b *testing.B) {
	dir := b.TempDir()
	r := Record{Verdict: Refused, Code: "not-approved", Duration: 3 * time.Millisecond, End: time.Now()}
	for b.Loop() {
		if err := Append(dir, r); err != nil {
			b.Fatal(err)
		}
	}
}

// TestAppendBounded: the file rotates once it reaches MaxBytes, and only
// then; the rotated file holds whole records.
func TestAppendBounded(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, File)
	n := (MaxBytes + Size - 1) / Size // the record that reaches MaxBytes
	for i := 0; i < n-1; i++ {
		if err := Append(dir, Record{Verdict: Accepted}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := os.Stat(p + ".1"); err == nil {
		t.Fatal("rotated before the file was full")
	}
	Append(dir, Record{Verdict: Accepted}) // the n-th: rotates
	Append(dir, Record{Verdict: Accepted}) // the first of the next file
	old, err := os.Stat(p + ".1")
	if err != nil || old.Size()%Size != 0 || old.Size() < MaxBytes {
		t.Fatalf("after the file filled: %v %v", old, err)
	}
	if cur, err := os.Stat(p); err != nil || cur.Size() != Size {
		t.Fatalf("the new file: %v %v, want one record", cur, err)
	}
}
