package hookrec

import (
	"encoding/binary"
	"fmt"
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

// v1 lays r out as version 1 did (the format before the check), for the
// records a server upgraded in place still has on disk.
func v1(r Record) []byte {
	b := make([]byte, Size)
	b[0] = 1
	if r.Verdict == Refused {
		b[1] = 1
	}
	b[2] = byte(len(r.Code))
	binary.BigEndian.PutUint32(b[4:8], uint32(r.Duration.Microseconds()))
	binary.BigEndian.PutUint64(b[8:16], uint64(r.End.UnixNano()))
	copy(b[16:], r.Code)
	return b
}

// TestParseResynchronises: after garbage, a record cut short (by a full
// disk) or a record whose bytes changed, the next whole record is found
// and every record after it is read as written; a tail shorter than a
// record is left for the next read; version 1 records still read.
func TestParseResynchronises(t *testing.T) {
	end := time.Unix(0, 1700000000123456789)
	rec := func(i int) Record {
		r := Record{Verdict: Accepted, Duration: time.Duration(i) * time.Millisecond, End: end.Add(time.Duration(i))}
		if i%3 == 0 {
			r.Verdict, r.Code = Refused, fmt.Sprintf("code-%d", i)
		}
		return r
	}
	enc := func(i int) []byte { b := rec(i).Encode(); return b[:] }
	flipped := enc(100)
	flipped[20] ^= 0x40 // a changed byte: the check fails
	var data []byte
	var want []Record
	add := func(i int) { data = append(data, enc(i)...); want = append(want, rec(i)) }
	data = append(data, v1(rec(90))...)
	want = append(want, rec(90))
	add(1)
	add(2)
	data = append(data, []byte("not a record \x01\x01 g+g+\x02 at all")...)
	add(3)
	data = append(data, enc(4)[:17]...) // a write cut short
	add(5)
	data = append(data, flipped...)
	add(6)
	data = append(data, enc(7)[:47]...)
	add(8)
	data = append(data, v1(rec(9))...)
	want = append(want, rec(9))
	tail := enc(10)[:30] // being written
	data = append(data, tail...)

	var got []Record
	n, skipped := Parse(data, func(r Record) { got = append(got, r) })
	if len(got) != len(want) {
		t.Fatalf("read %d records, want %d: %+v", len(got), len(want), got)
	}
	for i := range want {
		if got[i].Verdict != want[i].Verdict || got[i].Code != want[i].Code || got[i].Duration != want[i].Duration || !got[i].End.Equal(want[i].End) {
			t.Fatalf("record %d: %+v, want %+v", i, got[i], want[i])
		}
	}
	if n != len(data)-len(tail) {
		t.Fatalf("consumed %d of %d bytes; the %d-byte tail must wait", n, len(data), len(tail))
	}
	if wantSkipped := len(data) - len(tail) - len(want)*Size; skipped != wantSkipped {
		t.Fatalf("skipped %d bytes, want %d", skipped, wantSkipped)
	}
	// The tail completed: read from where Parse stopped.
	rest := append(append([]byte{}, tail...), enc(10)[30:]...)
	got = got[:0]
	if n, _ := Parse(rest, func(r Record) { got = append(got, r) }); n != Size || len(got) != 1 || got[0].Code != rec(10).Code {
		t.Fatalf("the completed tail: %d bytes, %+v", n, got)
	}
}

// FuzzParse: any bytes parse without panicking, consume at least all but
// the last Size-1 bytes, and a record appended after them is read back
// (possibly after records found in the junk).
func FuzzParse(f *testing.F) {
	r := Record{Verdict: Refused, Code: "not-approved", Duration: time.Millisecond, End: time.Unix(1700000000, 0)}
	good := r.Encode()
	f.Add([]byte{})
	f.Add(good[:20])
	f.Add([]byte("g+\x02garbage\x01\x00\x00"))
	f.Add(v1(r))
	f.Fuzz(func(t *testing.T, junk []byte) {
		n, skipped := Parse(junk, func(Record) {})
		if n > len(junk) || skipped > n || (len(junk)-n >= Size) {
			t.Fatalf("Parse(%d bytes) = %d, %d", len(junk), n, skipped)
		}
		data := append(append([]byte{}, junk...), good[:]...)
		data = append(data, good[:]...)
		var got []Record
		Parse(data, func(r Record) { got = append(got, r) })
		if len(got) == 0 || got[len(got)-1].Code != r.Code {
			t.Fatalf("after %q the records appended were not read: %+v", junk, got)
		}
	})
}
