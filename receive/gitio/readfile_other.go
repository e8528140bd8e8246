//go:build !unix

package gitio

import (
	"fmt"
	"os"
)

// readFile reads the whole file at path; a file longer than limit is an
// error. (The unix version avoids os.ReadFile's extra system calls.)
func readFile(path string, initial, limit int) ([]byte, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	if len(data) > limit {
		return nil, fmt.Errorf("read %s: %w: longer than %d bytes", path, errTooLarge, limit)
	}
	return data, nil
}

// readLineFile reads a one-line file (a loose ref).
func readLineFile(path string, initial, limit int) ([]byte, error) {
	return readFile(path, initial, limit)
}
