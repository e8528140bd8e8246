package receive

import (
	"bytes"
	"compress/zlib"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"

	"github.com/go-git/go-git/v5/plumbing"
)

func loosePath(dir string, h plumbing.Hash) string {
	s := h.String()
	return filepath.Join(dir, s[:2], s[2:])
}

// zlibReader returns a pooled zlib reader over src; put it back with
// zlibPool.Put when done.
func zlibReader(src []byte) (io.ReadCloser, error) {
	br := bytes.NewReader(src)
	if v := zlibPool.Get(); v != nil {
		zr := v.(io.ReadCloser)
		if err := zr.(zlib.Resetter).Reset(br, nil); err != nil {
			return nil, err
		}
		return zr, nil
	}
	return zlib.NewReader(br)
}

// looseHeader reads "<type> <size>\x00" from an inflating reader.
func looseHeader(zr io.Reader) (plumbing.ObjectType, int64, error) {
	var hdr [40]byte
	n := 0
	for {
		if n == len(hdr) {
			return 0, 0, errors.New("header too long")
		}
		if _, err := io.ReadFull(zr, hdr[n:n+1]); err != nil {
			return 0, 0, fmt.Errorf("header: %w", err)
		}
		if hdr[n] == 0 {
			break
		}
		n++
	}
	typName, sizeText, ok := bytes.Cut(hdr[:n], []byte{' '})
	if !ok {
		return 0, 0, errors.New("header has no size")
	}
	t, err := plumbing.ParseObjectType(string(typName))
	if err != nil || t == plumbing.OFSDeltaObject || t == plumbing.REFDeltaObject {
		return 0, 0, fmt.Errorf("unknown type %q", typName)
	}
	size, err := strconv.ParseInt(string(sizeText), 10, 64)
	if err != nil || size < 0 {
		return 0, 0, fmt.Errorf("bad size %q", sizeText)
	}
	return t, size, nil
}

// readLoose reads a loose object from the object directory dir. A missing
// file is an error wrapping os.ErrNotExist.
func readLoose(dir string, h plumbing.Hash) (plumbing.ObjectType, []byte, error) {
	path := loosePath(dir, h)
	raw, err := readFile(path, 4<<10, math.MaxInt32)
	if err != nil {
		return 0, nil, err
	}
	t, data, err := decodeLoose(raw)
	if err != nil {
		return 0, nil, fmt.Errorf("object %s in %s: %w: %v", h, path, ErrCorruptObject, err)
	}
	return t, data, nil
}

func decodeLoose(raw []byte) (plumbing.ObjectType, []byte, error) {
	zr, err := zlibReader(raw)
	if err != nil {
		return 0, nil, err
	}
	defer zlibPool.Put(zr)
	t, size, err := looseHeader(zr)
	if err != nil {
		return 0, nil, err
	}
	data, err := readExactly(zr, size)
	return t, data, err
}

// readExactly reads size bytes from an inflating reader that must end there.
func readExactly(zr io.Reader, size int64) ([]byte, error) {
	var out []byte
	if size <= 64<<20 {
		out = make([]byte, size)
		if _, err := io.ReadFull(zr, out); err != nil {
			return nil, fmt.Errorf("inflate %d bytes: %w", size, err)
		}
	} else {
		// A corrupt header must not make us allocate its claim up front.
		var buf bytes.Buffer
		n, err := io.CopyN(&buf, zr, size)
		if err != nil {
			return nil, fmt.Errorf("inflate %d bytes (got %d): %w", size, n, err)
		}
		out = buf.Bytes()
	}
	var one [1]byte
	if n, err := zr.Read(one[:]); n != 0 || err != io.EOF {
		if err == nil || err == io.EOF {
			return nil, fmt.Errorf("inflated data longer than %d bytes", size)
		}
		return nil, fmt.Errorf("inflate: %w", err)
	}
	return out, nil
}

// looseInfo reads only the header of a loose object.
func looseInfo(dir string, h plumbing.Hash) (plumbing.ObjectType, int64, error) {
	path := loosePath(dir, h)
	f, err := os.Open(path)
	if err != nil {
		return 0, 0, err
	}
	defer f.Close()
	var buf [512]byte
	n, err := io.ReadFull(f, buf[:])
	if err != nil && err != io.ErrUnexpectedEOF && err != io.EOF {
		return 0, 0, fmt.Errorf("object %s in %s: %w", h, path, err)
	}
	zr, err := zlibReader(buf[:n])
	if err != nil {
		return 0, 0, fmt.Errorf("object %s in %s: %w: %v", h, path, ErrCorruptObject, err)
	}
	defer zlibPool.Put(zr)
	t, size, err := looseHeader(zr)
	if err != nil {
		return 0, 0, fmt.Errorf("object %s in %s: %w: %v", h, path, ErrCorruptObject, err)
	}
	return t, size, nil
}

// writeLoose writes content as a loose object: a temporary file in the
// fan-out directory, renamed into place, read-only like git's.
func writeLoose(dir string, h plumbing.Hash, t plumbing.ObjectType, content []byte) error {
	path := loosePath(dir, h)
	fan := filepath.Dir(path)
	if err := os.MkdirAll(fan, 0o755); err != nil {
		return fmt.Errorf("write object %s: %w", h, err)
	}
	tmp, err := os.CreateTemp(fan, "tmp_obj_")
	if err != nil {
		return fmt.Errorf("write object %s: %w", h, err)
	}
	defer os.Remove(tmp.Name()) // no-op after the rename
	zw := zlib.NewWriter(tmp)
	_, err = fmt.Fprintf(zw, "%s %d\x00", t, len(content))
	if err == nil {
		_, err = zw.Write(content)
	}
	if err == nil {
		err = zw.Close()
	}
	if e := tmp.Close(); err == nil {
		err = e
	}
	if err == nil {
		err = os.Chmod(tmp.Name(), 0o444)
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		return fmt.Errorf("write object %s to %s: %w", h, path, err)
	}
	return nil
}

// forEachLoose calls f with the id of every loose object in dir.
func forEachLoose(dir string, f func(plumbing.Hash)) error {
	fans, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("list objects %s: %w", dir, err)
	}
	for _, fan := range fans {
		if !fan.IsDir() || len(fan.Name()) != 2 {
			continue
		}
		if _, err := hex.DecodeString(fan.Name()); err != nil {
			continue
		}
		files, err := os.ReadDir(filepath.Join(dir, fan.Name()))
		if err != nil {
			return fmt.Errorf("list objects %s: %w", dir, err)
		}
		for _, e := range files {
			if len(e.Name()) != 38 {
				continue
			}
			b, err := hex.DecodeString(fan.Name() + e.Name())
			if err != nil {
				continue
			}
			var h plumbing.Hash
			copy(h[:], b)
			f(h)
		}
	}
	return nil
}
