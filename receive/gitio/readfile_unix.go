//go:build unix

package gitio

import (
	"fmt"
	"io/fs"
	"syscall"
)

// readFile reads the whole file at path with plain system calls: open,
// read until end of file, close. os.ReadFile costs several more per file
// (fstat, fcntl, registering with the network poller, which a regular
// file refuses), and the hook reads dozens of small files — refs and
// fold-cache entries — on every push. initial is the first buffer size; a
// file longer than limit is an error.
func readFile(path string, initial, limit int) ([]byte, error) {
	return readFileUntil(path, initial, limit, false)
}

// readLineFile reads a file that holds one newline-terminated line (a
// loose ref): a first read that returns less than asked and ends in a
// newline is the whole file, so the read that would report end of file is
// skipped. (git replaces ref files by rename, never rewrites them in place.)
func readLineFile(path string, initial, limit int) ([]byte, error) {
	return readFileUntil(path, initial, limit, true)
}

func readFileUntil(path string, initial, limit int, line bool) ([]byte, error) {
	var fd int
	var err error
	for {
		fd, err = syscall.Open(path, syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
		if err != syscall.EINTR {
			break
		}
	}
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	defer syscall.Close(fd)
	buf := make([]byte, max(initial, 64))
	n := 0
	done := func() ([]byte, error) {
		if n > limit {
			return nil, fmt.Errorf("read %s: %w: longer than %d bytes", path, errTooLarge, limit)
		}
		return buf[:n], nil
	}
	for {
		if n == len(buf) {
			if len(buf) >= limit {
				return nil, fmt.Errorf("read %s: %w: longer than %d bytes", path, errTooLarge, limit)
			}
			bigger := make([]byte, min(4*len(buf), limit+1))
			copy(bigger, buf)
			buf = bigger
		}
		m, err := syscall.Read(fd, buf[n:])
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return nil, &fs.PathError{Op: "read", Path: path, Err: err}
		}
		if m <= 0 {
			return done()
		}
		n += m
		if line && n < len(buf) && buf[n-1] == '\n' {
			return done()
		}
	}
}
