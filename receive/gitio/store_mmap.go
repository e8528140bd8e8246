package gitio

import (
	"errors"
	"fmt"
	"io"
	"os"
)

// readWhole reads size bytes of f from the start: the fallback when a file
// cannot be mapped.
func readWhole(f *os.File, size int64) ([]byte, func() error, error) {
	if int64(int(size)) != size || size < 0 {
		return nil, nil, fmt.Errorf("read %s: file too large (%d bytes)", f.Name(), size)
	}
	buf := make([]byte, size)
	if _, err := io.ReadFull(io.NewSectionReader(f, 0, size), buf); err != nil {
		return nil, nil, fmt.Errorf("read %s: %w", f.Name(), err)
	}
	return buf, func() error { return nil }, nil
}

// mapPath opens and maps the file at path; the file descriptor is closed
// before returning (a mapping outlives it).
func mapPath(path string) ([]byte, func() error, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	return mapFile(f)
}

// errTooLarge reports a file longer than a reader's limit.
var errTooLarge = errors.New("file too large")
