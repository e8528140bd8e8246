package gitobj

import (
	"bytes"
	"errors"
	"fmt"
	"math"

	"github.com/go-git/go-git/v5/plumbing"
)

// ErrMalformedCommit is wrapped by every commit that git would read
// differently from us, or that `git fsck --strict` refuses.
var ErrMalformedCommit = errors.New("malformed commit")

// Header is one header of a commit after its committer line (encoding,
// mergetag, gpgsig, ...). Value holds the continuation lines joined by "\n"
// with their leading space removed, as git unfolds them. Start and End are
// the header's byte range in the raw commit, continuation lines and the
// final newline included.
type Header struct {
	Name       string
	Value      []byte
	Start, End int
}

// Commit is a commit object as git reads it. The byte slices alias the raw
// object.
type Commit struct {
	Tree       plumbing.Hash
	Parents    []plumbing.Hash
	Author     []byte // the author line's value: "Name <email> time tz"
	Committer  []byte // likewise for the committer
	CommitTime int64  // the committer's time, seconds since the epoch
	Extra      []Header
	// Message is everything after the blank line ending the headers; nil
	// and HasMessage false when there is no blank line.
	Message    []byte
	HasMessage bool
}

// ParseCommit reads a commit object's content (without the "commit <size>\0"
// prefix). It fails, with an error wrapping ErrMalformedCommit, on anything
// git's fsck refuses (see docs/objects.md): the tree line must come first
// and once, the parent lines directly after it, then one author line and
// one committer line, each a well-formed identity; no NUL byte anywhere;
// the header block ends in a newline. Headers after the committer line are
// free, except that none may be called tree, parent, author or committer
// (git ignores such a header, other readers may not).
func ParseCommit(raw []byte) (*Commit, error) {
	c := &Commit{}
	if err := c.parse(raw, false); err != nil {
		return nil, err
	}
	return c, nil
}

// ParseCommitHeader is ParseCommit for a prefix of a commit that holds at
// least its header block (up to and including the blank line): it checks
// everything ParseCommit does except what lies in the message (a NUL byte
// there). Message is whatever part of it the prefix holds.
func ParseCommitHeader(prefix []byte) (*Commit, error) {
	c := &Commit{}
	if err := c.parse(prefix, true); err != nil {
		return nil, err
	}
	return c, nil
}

func commitFault(code, format string, a ...any) error {
	return fmt.Errorf("%w: %s: %s", ErrMalformedCommit, code, fmt.Sprintf(format, a...))
}

func (c *Commit) parse(raw []byte, headerOnly bool) error {
	// The header block: no NUL before the blank line, and a final newline
	// when there is no blank line.
	end := bytes.Index(raw, []byte("\n\n"))
	hdr := raw
	if end >= 0 {
		hdr = raw[:end+1]
	}
	if i := bytes.IndexByte(hdr, 0); i >= 0 {
		return commitFault("nulInHeader", "NUL byte at offset %d of the header", i)
	}
	if end < 0 && (len(raw) == 0 || raw[len(raw)-1] != '\n') {
		return commitFault("unterminatedHeader", "the header does not end in a newline")
	}

	pos := 0
	if !bytes.HasPrefix(raw, []byte("tree ")) {
		return commitFault("missingTree", "the first line is not a tree line")
	}
	h, ok := hashLine(raw, 5)
	if !ok {
		return commitFault("badTreeSha1", "the tree line does not hold one object id")
	}
	c.Tree = h
	pos = 5 + 41
	for bytes.HasPrefix(raw[pos:], []byte("parent ")) {
		h, ok := hashLine(raw, pos+7)
		if !ok {
			return commitFault("badParentSha1", "parent line %d does not hold one object id", len(c.Parents)+1)
		}
		c.Parents = append(c.Parents, h)
		pos += 7 + 41
	}
	authors := 0
	for bytes.HasPrefix(raw[pos:], []byte("author ")) {
		authors++
		start := pos + 7
		next, _, err := checkIdent(raw, start, "author")
		if err != nil {
			return err
		}
		if authors == 1 {
			c.Author = lineAt(raw, start)
		}
		pos = next
	}
	switch {
	case authors == 0:
		return commitFault("missingAuthor", "no author line directly after the tree and parent lines")
	case authors > 1:
		return commitFault("multipleAuthors", "%d author lines", authors)
	}
	if !bytes.HasPrefix(raw[pos:], []byte("committer ")) {
		return commitFault("missingCommitter", "no committer line directly after the author line")
	}
	next, when, err := checkIdent(raw, pos+10, "committer")
	if err != nil {
		return err
	}
	c.Committer = lineAt(raw, pos+10)
	c.CommitTime = when
	pos = next
	if i := bytes.IndexByte(raw, 0); i >= 0 && !headerOnly {
		return commitFault("nulInCommit", "NUL byte at offset %d", i)
	}

	// The other headers, up to the blank line.
	for pos < len(raw) {
		if raw[pos] == '\n' {
			c.Message, c.HasMessage = raw[pos+1:], true
			break
		}
		e := bytes.IndexByte(raw[pos:], '\n') + pos // the header block ends in '\n'
		line := raw[pos:e]
		if line[0] == ' ' && len(c.Extra) > 0 {
			// A continued header (a signature): its lines, joined in one
			// allocation.
			x := &c.Extra[len(c.Extra)-1]
			stop, n := pos, len(x.Value)
			for stop < len(raw) && raw[stop] == ' ' {
				le := bytes.IndexByte(raw[stop:], '\n') + stop
				n += le - stop // '\n' and the line without its leading space
				stop = le + 1
			}
			v := append(make([]byte, 0, n), x.Value...)
			for p := pos; p < stop; {
				le := bytes.IndexByte(raw[p:], '\n') + p
				v = append(append(v, '\n'), raw[p+1:le]...)
				p = le + 1
			}
			x.Value, x.End, pos = v, stop, stop
			continue
		}
		name, val, _ := bytes.Cut(line, []byte{' '})
		switch string(name) {
		case "tree", "parent", "author", "committer":
			return commitFault("repeatedHeader", "a %s header after the committer line (git ignores it; git+ refuses it)", name)
		}
		c.Extra = append(c.Extra, Header{Name: string(name), Value: val, Start: pos, End: e + 1})
		pos = e + 1
	}
	return nil
}

// hashLine reads 40 hex digits at raw[at:] followed by '\n', as git does
// (either case of hex digit).
func hashLine(raw []byte, at int) (plumbing.Hash, bool) {
	var h plumbing.Hash
	if len(raw) < at+41 || raw[at+40] != '\n' {
		return h, false
	}
	for i := 0; i < 20; i++ {
		hi, ok1 := hexVal(raw[at+2*i])
		lo, ok2 := hexVal(raw[at+2*i+1])
		if !ok1 || !ok2 {
			return h, false
		}
		h[i] = hi<<4 | lo
	}
	return h, true
}

func hexVal(b byte) (byte, bool) {
	switch {
	case '0' <= b && b <= '9':
		return b - '0', true
	case 'a' <= b && b <= 'f':
		return b - 'a' + 10, true
	case 'A' <= b && b <= 'F':
		return b - 'A' + 10, true
	}
	return 0, false
}

// lineAt returns raw[at:] up to (not including) the next newline.
func lineAt(raw []byte, at int) []byte {
	if e := bytes.IndexByte(raw[at:], '\n'); e >= 0 {
		return raw[at : at+e]
	}
	return raw[at:]
}

// checkIdent checks the identity starting at raw[at] ("Name <email> time
// tz") the way git's fsck does, and returns where the next header starts
// (after the identity's line) and the time. Like git, it reads the object
// as if a NUL followed it, and reads the time as C's strtoumax does: after
// optional white space (which may span lines) and an optional sign.
func checkIdent(raw []byte, at int, what string) (next int, when int64, err error) {
	at0 := at
	next = len(raw)
	if e := bytes.IndexByte(raw[at:], '\n'); e >= 0 {
		next = at + e + 1
	}
	b := func(i int) byte {
		if i < len(raw) {
			return raw[i]
		}
		return 0
	}
	fault := func(code, msg string) (int, int64, error) {
		return 0, 0, commitFault(code, "%s line %.60q: %s", what, lineAt(raw, at0), msg)
	}
	span := func(p int) int { // C's p + strcspn(p, "<>\n")
		for {
			switch b(p) {
			case '<', '>', '\n', 0:
				return p
			}
			p++
		}
	}
	p := at
	if b(p) == '<' {
		return fault("missingNameBeforeEmail", "no name before the email")
	}
	p = span(p)
	switch {
	case b(p) == '>':
		return fault("badName", "'>' in the name")
	case b(p) != '<':
		return fault("missingEmail", "no email")
	case b(p-1) != ' ':
		return fault("missingSpaceBeforeEmail", "no space before the email")
	}
	p = span(p + 1)
	if b(p) != '>' {
		return fault("badEmail", "the email does not end in '>'")
	}
	p++
	if b(p) != ' ' {
		return fault("missingSpaceBeforeDate", "no space before the time")
	}
	p++
	if b(p) == '0' && b(p+1) != ' ' {
		return fault("zeroPaddedDate", "a zero-padded time")
	}
	// strtoumax: white space, a sign, digits.
	q := p
	for isCSpace(b(q)) {
		q++
	}
	neg := false
	if b(q) == '+' || b(q) == '-' {
		neg = b(q) == '-'
		q++
	}
	var v uint64
	digits, overflow := 0, false
	for '0' <= b(q) && b(q) <= '9' {
		d := uint64(b(q) - '0')
		if v > (math.MaxUint64-d)/10 {
			overflow = true
		}
		v = v*10 + d
		digits++
		q++
	}
	endp := q
	if digits == 0 {
		endp, v = p, 0
	}
	if neg && !overflow {
		v = -v
	}
	if overflow || v > math.MaxInt64 {
		return fault("badDateOverflow", "the time overflows")
	}
	if endp == p || b(endp) != ' ' {
		return fault("badDate", "a malformed time")
	}
	p = endp + 1
	if (b(p) != '+' && b(p) != '-') || !isDigit(b(p+1)) || !isDigit(b(p+2)) || !isDigit(b(p+3)) || !isDigit(b(p+4)) || b(p+5) != '\n' {
		return fault("badTimezone", "a malformed time zone")
	}
	return next, int64(v), nil
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// isCSpace is C's isspace in the C locale.
func isCSpace(c byte) bool {
	switch c {
	case ' ', '\t', '\n', '\v', '\f', '\r':
		return true
	}
	return false
}
