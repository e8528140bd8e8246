package opstatus

// The record files of this package (the wake outcomes, the unjudged-update
// alarms): JSON lines under the git directory, each append one write(2) on
// a file opened O_APPEND, so concurrent writers never interleave; the file
// rotates to <file>.1 once past its bound, and readers read both.

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"time"
)

// appendRecords appends lines (JSON documents, each ending in a newline)
// to gitDir's record file name, rotating it first when it is past max
// bytes; what names the records in errors.
func appendRecords(gitDir, name string, max int64, lines []byte, what string) error {
	p := filepath.Join(gitDir, filepath.FromSlash(name))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return fmt.Errorf("recording %s: %w", what, err)
	}
	if fi, err := os.Stat(p); err == nil && fi.Size() > max {
		_ = os.Rename(p, p+".1")
	}
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("recording %s: %w", what, err)
	}
	defer f.Close()
	if _, err := f.Write(lines); err != nil {
		return fmt.Errorf("recording %s in %s: %w", what, p, err)
	}
	return nil
}

// readRecords returns the records of gitDir's record file name that
// decode and that keep accepts (a line that does not, such as a torn last
// line, is skipped), oldest first by their time at; what names them in
// errors. No file is no error; a file that cannot be read returns what was
// read before it, unsorted.
func readRecords[T any](gitDir, name, what string, keep func(T) bool, at func(T) time.Time) ([]T, error) {
	p := filepath.Join(gitDir, filepath.FromSlash(name))
	var out []T
	for _, f := range []string{p + ".1", p} {
		data, err := os.ReadFile(f)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return out, fmt.Errorf("reading %s %s: %w", what, f, err)
		}
		sc := bufio.NewScanner(bytes.NewReader(data))
		sc.Buffer(make([]byte, 0, 4096), 64<<10)
		for sc.Scan() {
			var r T
			if json.Unmarshal(sc.Bytes(), &r) == nil && keep(r) {
				out = append(out, r)
			}
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return at(out[i]).Before(at(out[j])) })
	return out, nil
}
