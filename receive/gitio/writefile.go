package gitio

import (
	"os"
	"path/filepath"
)

// WriteFileAtomic writes parts, one after the other, to path through a
// temporary file in path's directory (named as os.CreateTemp names it from
// pattern), with mode when mode is not 0 (else os.CreateTemp's 0600), then
// renamed into place: path holds its old content or the whole new one,
// whatever happens to this process. Nothing is fsynced (git does not fsync
// what a push writes either). The temporary file is removed on a failure;
// the error is the one that stopped it, for the caller to name path in.
func WriteFileAtomic(path, pattern string, mode os.FileMode, parts ...[]byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), pattern)
	if err != nil {
		return err
	}
	for _, p := range parts {
		if _, err = tmp.Write(p); err != nil {
			break
		}
	}
	if err == nil && mode != 0 {
		err = tmp.Chmod(mode)
	}
	if e := tmp.Close(); err == nil {
		err = e
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		os.Remove(tmp.Name())
	}
	return err
}
