//go:build !unix

package gitio

import (
	"fmt"
	"os"
)

// mapFile reads the whole of f into memory on systems without mmap.
func mapFile(f *os.File) ([]byte, func() error, error) {
	st, err := f.Stat()
	if err != nil {
		return nil, nil, fmt.Errorf("stat %s: %w", f.Name(), err)
	}
	return readWhole(f, st.Size())
}
