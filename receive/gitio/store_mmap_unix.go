//go:build unix

package gitio

import (
	"fmt"
	"os"
	"syscall"
)

// mapFile maps the whole of f read-only. It returns the bytes and a function
// that releases them. An empty file maps to an empty slice. When the kernel
// refuses the mapping, the file is read into memory instead.
func mapFile(f *os.File) ([]byte, func() error, error) {
	st, err := f.Stat()
	if err != nil {
		return nil, nil, fmt.Errorf("stat %s: %w", f.Name(), err)
	}
	size := st.Size()
	if size == 0 {
		return []byte{}, func() error { return nil }, nil
	}
	if int64(int(size)) != size {
		return nil, nil, fmt.Errorf("map %s: file too large (%d bytes)", f.Name(), size)
	}
	data, err := syscall.Mmap(int(f.Fd()), 0, int(size), syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		return readWhole(f, size)
	}
	return data, func() error { return syscall.Munmap(data) }, nil
}
