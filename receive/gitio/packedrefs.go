package gitio

// packed-refs, read once per judgement and searched without parsing every
// line. A repository with many refs (100,000 tags: a 6 MB file) took the
// hook 116 ms a push to parse whole; git writes the file sorted by name
// (the "sorted" trait of its header) so that one name is found by binary
// search, and so do we. A file without the trait (older writers) is parsed
// whole once, on the first lookup, as before.
//
// Format (gitrepository-layout, git's packed-refs backend): an optional
// header line "# pack-refs with: <traits>", then one line per ref,
// "<40 hex> <name>", each optionally followed by its peeled value
// "^<40 hex>" (skipped here). A line that does not parse is an error when
// it is read; a sorted file is only checked along the search.

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/go-git/go-git/v5/plumbing"
)

type packedRefs struct {
	path    string
	stamp   fileStamp // the file as read (absent: the zero stamp)
	data    []byte    // the ref lines, the header removed
	sorted  bool
	all     map[string]plumbing.Hash // !sorted: every ref, parsed on first use
	release func() error             // unmaps data, when mapped
}

// mapPackedRefs is the size from which packed-refs is mapped rather than
// read: a search touches a few pages of it, and reading a large file into
// fresh memory costs a page fault per 4 KiB.
const mapPackedRefs = 256 << 10

// loadPackedRefs reads gitDir/packed-refs (absent: no refs). Call close
// when done with it: a large file is mapped. The file's stamp is taken from
// the open file itself, so it describes exactly the bytes read: git
// replaces packed-refs by renaming a new file over it, never rewrites it in
// place.
func loadPackedRefs(gitDir string) (*packedRefs, error) {
	path := filepath.Join(gitDir, "packed-refs")
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return &packedRefs{path: path, sorted: true}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	stamp := stampOf(fi)
	switch size := fi.Size(); {
	case size > maxPackedRefs:
		return nil, fmt.Errorf("read %s: %w: longer than %d bytes", path, errTooLarge, maxPackedRefs)
	case size > mapPackedRefs:
		data, release, err := mapFile(f)
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", path, err)
		}
		p := parsePackedRefs(path, data)
		p.stamp, p.release = stamp, release
		return p, nil
	default:
		data := make([]byte, size)
		if _, err := io.ReadFull(f, data); err != nil {
			return nil, fmt.Errorf("read %s: %w", path, err)
		}
		p := parsePackedRefs(path, data)
		p.stamp = stamp
		return p, nil
	}
}

// close releases a mapped file; the refs read from it stay valid (they
// are copies).
func (p *packedRefs) close() {
	if p != nil && p.release != nil {
		_ = p.release()
		p.release, p.data = nil, nil
	}
}

func parsePackedRefs(path string, data []byte) *packedRefs {
	p := &packedRefs{path: path, data: data}
	if traits, ok := bytes.CutPrefix(data, []byte("# pack-refs with:")); ok {
		header := traits
		if i := bytes.IndexByte(traits, '\n'); i >= 0 {
			header, p.data = traits[:i], traits[i+1:]
		} else {
			p.data = nil
		}
		for _, t := range bytes.Fields(header) {
			if string(t) == "sorted" {
				p.sorted = true
			}
		}
	}
	return p
}

// refLine parses the ref line starting at off: its name, id and the offset
// just past its record (the line and a peeled line after it).
func (p *packedRefs) refLine(off int) (name []byte, id plumbing.Hash, end int, err error) {
	line := p.data[off:]
	if i := bytes.IndexByte(line, '\n'); i >= 0 {
		line, end = line[:i], off+i+1
	} else {
		end = len(p.data)
	}
	line = bytes.TrimRight(line, "\r")
	if len(line) < 42 || line[40] != ' ' || !plumbing.IsHash(string(line[:40])) {
		return nil, id, 0, fmt.Errorf("packed refs %s: %w: %q", p.path, ErrBadRef, line)
	}
	id = plumbing.NewHash(string(line[:40]))
	for end < len(p.data) && p.data[end] == '^' {
		if i := bytes.IndexByte(p.data[end:], '\n'); i >= 0 {
			end += i + 1
		} else {
			end = len(p.data)
		}
	}
	return line[41:], id, end, nil
}

// recordAt returns the start of the record holding offset off (off is in
// [lo, len)): the start of its line, or of the ref line before a peeled one.
func (p *packedRefs) recordAt(lo, off int) (int, error) {
	start := bytes.LastIndexByte(p.data[lo:off], '\n') + 1 + lo
	if p.data[start] == '^' {
		if start == lo {
			return 0, fmt.Errorf("packed refs %s: %w: a peeled line without its ref", p.path, ErrBadRef)
		}
		start = bytes.LastIndexByte(p.data[lo:start-1], '\n') + 1 + lo
	}
	return start, nil
}

// lowerBound returns the offset of the first record whose name is not
// below name (len(data) when there is none), in a sorted file.
func (p *packedRefs) lowerBound(name []byte) (int, error) {
	lo, hi := 0, len(p.data)
	for lo < hi {
		mid := lo + (hi-lo)/2
		start, err := p.recordAt(lo, mid)
		if err != nil {
			return 0, err
		}
		n, _, end, err := p.refLine(start)
		if err != nil {
			return 0, err
		}
		if bytes.Compare(n, name) < 0 {
			lo = end
		} else {
			hi = start
		}
	}
	return lo, nil
}

func (p *packedRefs) parseAll() error {
	if p.all != nil {
		return nil
	}
	all := make(map[string]plumbing.Hash, bytes.Count(p.data, []byte{'\n'}))
	if err := eachPackedRef(p.path, p.data, func(name string, id plumbing.Hash) bool {
		all[name] = id
		return true
	}); err != nil {
		return err
	}
	p.all = all
	return nil
}

// get returns the packed value of ref name.
func (p *packedRefs) get(name string) (plumbing.Hash, bool, error) {
	if p.sorted {
		id, ok, err := p.search(name)
		if err == nil {
			return id, ok, nil
		}
		p.sorted = false // not as git writes it (a blank or comment line…): read it whole
	}
	if err := p.parseAll(); err != nil {
		return plumbing.ZeroHash, false, err
	}
	id, ok := p.all[name]
	return id, ok, nil
}

func (p *packedRefs) search(name string) (plumbing.Hash, bool, error) {
	off, err := p.lowerBound([]byte(name))
	if err != nil || off >= len(p.data) {
		return plumbing.ZeroHash, false, err
	}
	n, id, _, err := p.refLine(off)
	if err != nil || string(n) != name {
		return plumbing.ZeroHash, false, err
	}
	return id, true, nil
}

// each calls f for every packed ref whose name starts with prefix ("":
// every ref).
func (p *packedRefs) each(prefix string, f func(name string, id plumbing.Hash)) error {
	if p.sorted {
		// Collected first: a scan that fails half-way falls back to reading
		// the file whole, and f must not see a ref twice.
		var names []string
		var ids []plumbing.Hash
		err := p.scan(prefix, func(name string, id plumbing.Hash) {
			names, ids = append(names, name), append(ids, id)
		})
		if err == nil {
			for i := range names {
				f(names[i], ids[i])
			}
			return nil
		}
		p.sorted = false
	}
	if err := p.parseAll(); err != nil {
		return err
	}
	for name, id := range p.all {
		if len(name) >= len(prefix) && name[:len(prefix)] == prefix {
			f(name, id)
		}
	}
	return nil
}

// scan is each over a sorted file: from the first name not below prefix
// while names start with it.
func (p *packedRefs) scan(prefix string, f func(name string, id plumbing.Hash)) error {
	off, err := p.lowerBound([]byte(prefix))
	if err != nil {
		return err
	}
	for off < len(p.data) {
		n, id, end, err := p.refLine(off)
		if err != nil {
			return err
		}
		if !bytes.HasPrefix(n, []byte(prefix)) {
			return nil
		}
		f(string(n), id)
		off = end
	}
	return nil
}
