// Package hookrec is the record every pre-receive hook process leaves of
// itself, for `git+ serve`'s /metrics (hooks/metrics; docs/operating.md,
// "Metrics"): how long it took, whether it accepted the push, and the code
// of its first refusal. The hook runs in its own process, apart from the
// server, so it writes the record to a file and the server reads it.
//
// Decisions:
//   - One file per repository, <gitdir>/gitplus/metrics/pre-receive.rec,
//     of fixed-size records (Size bytes), each appended with one write(2)
//     on a file opened O_APPEND: concurrent hooks never interleave, and a
//     reader reads whole records only (a record being written is read by
//     the next scrape).
//   - Bounded: the writer whose record ends the file at or past MaxBytes
//     (exactly one writer's record crosses it) renames the file to
//     pre-receive.rec.1, replacing the one before; a file that grew to
//     twice MaxBytes (that writer died before renaming) is renamed by the
//     next. At most about 2×MaxBytes are kept; a reader that follows the
//     file by its inode reads the rest of a rotated file from .1.
//   - Writing costs one open, write, seek and close (tens of microseconds);
//     a failure to write is ignored: a push is never refused, nor slowed,
//     for its metrics.
//   - Records are whole or recognisably not: each starts with a magic and
//     ends with a CRC-32C of the rest, so a reader finds the next record
//     after bytes that are none (a record a full disk cut short — one
//     write(2) that wrote part of its bytes —, garbage) and counts the bytes
//     it skipped (Parse). A record is only ever appended whole by one write;
//     a short write is not repaired (other hooks may have appended behind
//     it): readers resynchronise past it.
//   - Layout, version 2 (big-endian): magic "g+" (2) | version (1) |
//     verdict (1) | code length (1) | duration in microseconds (4,
//     saturating) | end time in unix nanoseconds (8) | code (CodeBytes,
//     zero padded) | CRC-32C of the 44 bytes before it (4).
//   - Version 1 records (the format before the check: version (1) | verdict
//     (1) | code length (1) | 0 (1) | duration (4) | end time (8) | code (32,
//     zero padded)), which a server upgraded in place still has on disk
//     until the file rotates, are read when they pass every check their
//     layout allows (a code of lowercase letters, digits and '-', zero
//     padding); they carry no CRC, so a damaged one may still be misread.
package hookrec

import (
	"encoding/binary"
	"errors"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"time"
)

// File is the record file, relative to the git directory.
const File = "gitplus/metrics/pre-receive.rec"

// Sizes: a record, its code field, and the size past which a file rotates.
const (
	Size      = 48
	CodeBytes = 27
	MaxBytes  = 1 << 20
)

// Verdicts.
const (
	Accepted = "accepted"
	Refused  = "refused"
)

const (
	version   = 2
	version1  = 1
	codeStart = 17
	crcStart  = Size - 4
	v1Code    = 32 // version 1's code field
)

var magic = [2]byte{'g', '+'}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// Record is one pre-receive run.
type Record struct {
	Verdict  string        // Accepted or Refused
	Code     string        // the first refusal's code ("" when accepted)
	Duration time.Duration // from the hook's start to its verdict
	End      time.Time
}

// Encode lays r out in Size bytes (a longer code is cut).
func (r Record) Encode() [Size]byte {
	var b [Size]byte
	copy(b[0:2], magic[:])
	b[2] = version
	if r.Verdict == Refused {
		b[3] = 1
	}
	code := r.Code
	if len(code) > CodeBytes {
		code = code[:CodeBytes]
	}
	b[4] = byte(len(code))
	us := r.Duration.Microseconds()
	if us < 0 {
		us = 0
	}
	if us > 1<<32-1 {
		us = 1<<32 - 1
	}
	binary.BigEndian.PutUint32(b[5:9], uint32(us))
	binary.BigEndian.PutUint64(b[9:17], uint64(r.End.UnixNano()))
	copy(b[codeStart:], code)
	binary.BigEndian.PutUint32(b[crcStart:], crc32.Checksum(b[:crcStart], castagnoli))
	return b
}

// ErrRecord is bytes that are no pre-receive record: of another version,
// damaged, or not a record at all.
var ErrRecord = errors.New("not a pre-receive record")

// Decode reads the record at the start of b (Size bytes of it).
func Decode(b []byte) (Record, error) {
	if len(b) < Size {
		return Record{}, ErrRecord
	}
	b = b[:Size]
	if b[0] == magic[0] && b[1] == magic[1] && b[2] == version {
		if b[3] > 1 || int(b[4]) > CodeBytes || binary.BigEndian.Uint32(b[crcStart:]) != crc32.Checksum(b[:crcStart], castagnoli) {
			return Record{}, ErrRecord
		}
		r := Record{Verdict: Accepted, Duration: time.Duration(binary.BigEndian.Uint32(b[5:9])) * time.Microsecond,
			End: time.Unix(0, int64(binary.BigEndian.Uint64(b[9:17]))), Code: string(b[codeStart : codeStart+int(b[4])])}
		if b[3] == 1 {
			r.Verdict = Refused
		}
		return r, nil
	}
	return decode1(b)
}

// decode1 reads a version 1 record, checked as far as its layout allows:
// the verdict, the code's length and bytes (those of a refusal code, none
// when accepted) and the zero bytes around them.
func decode1(b []byte) (Record, error) {
	n := int(b[2])
	if b[0] != version1 || b[1] > 1 || b[3] != 0 || n > v1Code || (b[1] == 0) != (n == 0) {
		return Record{}, ErrRecord
	}
	code := b[16 : 16+n]
	for _, c := range code {
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-') {
			return Record{}, ErrRecord
		}
	}
	for _, c := range b[16+n:] {
		if c != 0 {
			return Record{}, ErrRecord
		}
	}
	r := Record{Verdict: Accepted, Duration: time.Duration(binary.BigEndian.Uint32(b[4:8])) * time.Microsecond,
		End: time.Unix(0, int64(binary.BigEndian.Uint64(b[8:16]))), Code: string(code)}
	if b[1] == 1 {
		r.Verdict = Refused
	}
	return r, nil
}

// Parse reads the records in b, in order, calling emit for each, and skips
// the bytes that are none (a torn record, garbage) one at a time until a
// record starts. It stops where fewer than Size bytes are left from a
// position that may start a record (one still being written: the next
// read carries on from there). consumed is how far b was read (records and
// skipped bytes), skipped how many of those bytes were no record.
func Parse(b []byte, emit func(Record)) (consumed, skipped int) {
	off := 0
	for len(b)-off >= Size {
		if r, err := Decode(b[off:]); err == nil {
			emit(r)
			off += Size
			continue
		}
		// Not a record here: on to the next byte that may start one.
		next := off + 1
		for next < len(b) && b[next] != magic[0] && b[next] != version1 {
			next++
		}
		skipped += next - off
		off = next
	}
	return off, skipped
}

// Append appends r to gitDir's record file, rotating it when it is full.
// Errors are for tests: the hook ignores them. A write cut short (a full
// disk) leaves the bytes it wrote, which readers skip (Parse).
func Append(gitDir string, r Record) error {
	p := filepath.Join(gitDir, filepath.FromSlash(File))
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if errors.Is(err, os.ErrNotExist) {
		if err = os.MkdirAll(filepath.Dir(p), 0o755); err == nil {
			f, err = os.OpenFile(p, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
		}
	}
	if err != nil {
		return err
	}
	b := r.Encode()
	_, err = f.Write(b[:])
	end, serr := f.Seek(0, io.SeekCurrent)
	f.Close()
	if err != nil {
		return err
	}
	if serr == nil && (end >= MaxBytes && end < MaxBytes+Size || end >= 2*MaxBytes) {
		return os.Rename(p, p+".1")
	}
	return nil
}
