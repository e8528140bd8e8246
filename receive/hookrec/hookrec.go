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
//   - Layout (big-endian): version (1) | verdict (1) | code length (1) |
//     unused (1) | duration in microseconds (4, saturating) | end time in
//     unix nanoseconds (8) | code (CodeBytes, zero padded).
package hookrec

import (
	"encoding/binary"
	"errors"
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
	CodeBytes = Size - 16
	MaxBytes  = 1 << 20
)

// Verdicts.
const (
	Accepted = "accepted"
	Refused  = "refused"
)

const version = 1

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
	b[0] = version
	if r.Verdict == Refused {
		b[1] = 1
	}
	code := r.Code
	if len(code) > CodeBytes {
		code = code[:CodeBytes]
	}
	b[2] = byte(len(code))
	us := r.Duration.Microseconds()
	if us < 0 {
		us = 0
	}
	if us > 1<<32-1 {
		us = 1<<32 - 1
	}
	binary.BigEndian.PutUint32(b[4:8], uint32(us))
	binary.BigEndian.PutUint64(b[8:16], uint64(r.End.UnixNano()))
	copy(b[16:], code)
	return b
}

// ErrRecord is a record of another version or a damaged one.
var ErrRecord = errors.New("not a pre-receive record")

// Decode reads one record.
func Decode(b []byte) (Record, error) {
	if len(b) < Size || b[0] != version || b[1] > 1 || int(b[2]) > CodeBytes {
		return Record{}, ErrRecord
	}
	r := Record{Verdict: Accepted, Duration: time.Duration(binary.BigEndian.Uint32(b[4:8])) * time.Microsecond,
		End: time.Unix(0, int64(binary.BigEndian.Uint64(b[8:16]))), Code: string(b[16 : 16+int(b[2])])}
	if b[1] == 1 {
		r.Verdict = Refused
	}
	return r, nil
}

// Append appends r to gitDir's record file, rotating it when it is full.
// Errors are for tests: the hook ignores them.
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
