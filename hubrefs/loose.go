package hubrefs

import (
	"bytes"
	"compress/zlib"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync"

	"github.com/go-git/go-git/v5/plumbing"
)

// zlibWriters recycles compressors (each allocates its tables).
var zlibWriters sync.Pool

// writeLoose stores raw as a loose object of type t under gitDir/objects
// (zlib-compressed "<type> <size>\0<raw>", written to a temporary file and
// renamed into place, as git does) and returns its id. An object already
// present is left alone.
func writeLoose(gitDir string, t plumbing.ObjectType, raw []byte) (plumbing.Hash, error) {
	id := plumbing.ComputeHash(t, raw)
	hex := id.String()
	dir := filepath.Join(gitDir, "objects", hex[:2])
	path := filepath.Join(dir, hex[2:])
	if _, err := os.Stat(path); err == nil {
		return id, nil
	}
	var buf bytes.Buffer
	zw, _ := zlibWriters.Get().(*zlib.Writer)
	if zw == nil {
		zw = zlib.NewWriter(&buf)
	} else {
		zw.Reset(&buf)
	}
	zw.Write([]byte(t.String() + " " + strconv.Itoa(len(raw)) + "\x00"))
	zw.Write(raw)
	err := zw.Close()
	zlibWriters.Put(zw)
	if err != nil {
		return id, fmt.Errorf("compressing object %s: %w", id, err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return id, fmt.Errorf("writing object %s into %s: %w", id, gitDir, err)
	}
	tmp, err := os.CreateTemp(dir, "tmp_obj_")
	if err != nil {
		return id, fmt.Errorf("writing object %s into %s: %w", id, gitDir, err)
	}
	_, werr := tmp.Write(buf.Bytes())
	cerr := tmp.Close()
	if err := errors.Join(werr, cerr); err != nil {
		os.Remove(tmp.Name())
		return id, fmt.Errorf("writing object %s into %s: %w", id, gitDir, err)
	}
	os.Chmod(tmp.Name(), 0o444)
	if err := os.Rename(tmp.Name(), path); err != nil {
		os.Remove(tmp.Name())
		return id, fmt.Errorf("writing object %s into %s: %w", id, gitDir, err)
	}
	return id, nil
}
