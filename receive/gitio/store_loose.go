package gitio

import (
	"bufio"
	"bytes"
	"compress/zlib"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
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
	// git reads the size only in canonical decimal: digits, no sign, no
	// leading zero ("blob 03" and "blob +3" do not parse for git either;
	// FuzzDecodeLoose found that strconv alone took them).
	canonical := len(sizeText) > 0 && (sizeText[0] != '0' || len(sizeText) == 1)
	for _, c := range sizeText {
		canonical = canonical && '0' <= c && c <= '9'
	}
	size, err := strconv.ParseInt(string(sizeText), 10, 64)
	if err != nil || size < 0 || !canonical {
		return 0, 0, fmt.Errorf("bad size %q", sizeText)
	}
	return t, size, nil
}

// looseMapAbove is the size from which a loose object file is mapped
// rather than read into memory: a large object's compressed bytes then
// never sit on the heap beside its inflated content (docs/objects.md,
// "Reading large objects").
const looseMapAbove = 1 << 20

// readLoose reads a loose object from the object directory dir. A missing
// file is an error wrapping os.ErrNotExist.
func readLoose(dir string, h plumbing.Hash) (plumbing.ObjectType, []byte, error) {
	path := loosePath(dir, h)
	raw, err := readFile(path, 4<<10, looseMapAbove)
	release := func() error { return nil }
	if errors.Is(err, errTooLarge) {
		raw, release, err = mapPath(path)
	}
	if err != nil {
		return 0, nil, err
	}
	defer release()
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
	data, err := readExactly(zr, size, len(raw))
	return t, data, err
}

// maxTrustedSize is the most an object's header may make us allocate
// before the data is inflated. A larger claim is believed only as the data
// arrives: the buffer starts at this size and grows (docs/objects.md,
// "Reading large objects"). A variable so tests can lower it.
var maxTrustedSize int64 = 256 << 20

// maxDeflateRatio bounds what one compressed byte can inflate to: DEFLATE's
// longest match (258 bytes) costs at least two bits (a one-bit length code
// and a one-bit distance code), so 8/2 × 258 = 1032 bytes.
const maxDeflateRatio = 1032

// readExactly reads size bytes from an inflating reader over srcLen
// compressed bytes; the stream must end there. The buffer is sized from
// size (up to maxTrustedSize), so inflating costs one allocation and no
// copies; a size srcLen bytes cannot hold is refused before inflating.
func readExactly(zr io.Reader, size int64, srcLen int) ([]byte, error) {
	if size < 0 {
		return nil, fmt.Errorf("negative size %d", size)
	}
	if size/maxDeflateRatio > int64(srcLen) {
		return nil, fmt.Errorf("size %d is more than %d compressed bytes can hold", size, srcLen)
	}
	if int64(int(size)) != size {
		return nil, fmt.Errorf("size %d too large for this machine", size)
	}
	out := make([]byte, min(size, maxTrustedSize))
	if n, err := io.ReadFull(zr, out); err != nil {
		return nil, fmt.Errorf("inflate %d bytes (got %d): %w", size, n, err)
	}
	for int64(len(out)) < size {
		// Past the trusted size, grow as the data proves the claim.
		n := len(out)
		bigger := make([]byte, min(size, 2*int64(n)))
		copy(bigger, out)
		out = bigger
		if m, err := io.ReadFull(zr, out[n:]); err != nil {
			return nil, fmt.Errorf("inflate %d bytes (got %d): %w", size, n+m, err)
		}
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

// WriteLooseObject stores content as a loose object of type t in the object
// directory of the git directory gitDir (outside any quarantine: a process
// that is not a hook, such as an event append) and returns its id. A loose
// copy already there is left alone. Store.WriteRaw is the same write for an
// opened store (it also skips objects a pack holds).
func WriteLooseObject(gitDir string, t plumbing.ObjectType, content []byte) (plumbing.Hash, error) {
	h := plumbing.ComputeHash(t, content)
	dir := filepath.Join(gitDir, "objects")
	if _, err := os.Stat(loosePath(dir, h)); err == nil {
		return h, nil
	}
	if err := writeLoose(dir, h, t, content); err != nil {
		return h, fmt.Errorf("writing into %s: %w", gitDir, err)
	}
	return h, nil
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

// loosePrefix reads the type and the first n bytes of a loose object (all
// of it when shorter), inflating no further. A missing file is an error
// wrapping os.ErrNotExist.
func loosePrefix(dir string, h plumbing.Hash, n int) (plumbing.ObjectType, []byte, error) {
	path := loosePath(dir, h)
	f, err := os.Open(path)
	if err != nil {
		return 0, nil, err
	}
	defer f.Close()
	zr, err := zlib.NewReader(bufio.NewReaderSize(f, 16<<10))
	if err != nil {
		return 0, nil, fmt.Errorf("object %s in %s: %w: %v", h, path, ErrCorruptObject, err)
	}
	defer zr.Close()
	t, size, err := looseHeader(zr)
	if err != nil {
		return 0, nil, fmt.Errorf("object %s in %s: %w: %v", h, path, ErrCorruptObject, err)
	}
	out := make([]byte, min(size, int64(n)))
	if _, err := io.ReadFull(zr, out); err != nil {
		return 0, nil, fmt.Errorf("object %s in %s: %w: inflate %d bytes: %v", h, path, ErrCorruptObject, len(out), err)
	}
	return t, out, nil
}
