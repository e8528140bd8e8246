package policy

import "encoding/binary"

// Fold cache entries written outside this package (receive/queuerun's idle
// pass memo, docs/scale.md) use the field encoding of this package's own
// entries: a string is its length (uvarint) then its bytes, a list its
// count (uvarint) then its items, a number a varint. AppendString and
// AppendStrings write it; EntryDecoder reads it with the same checks as
// entryReader, so the two codecs cannot drift apart.

// AppendString appends s as a length and its bytes.
func AppendString(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

// AppendStrings appends ss as a count and its strings.
func AppendStrings(b []byte, ss []string) []byte { return appendStrings(b, ss) }

// EntryDecoder reads the fields of an entry body. A read past the end or
// of an impossible value makes Done false; the values read after it mean
// nothing.
type EntryDecoder struct {
	r    entryReader
	str  func() string
	strs func() []string
}

// NewEntryDecoder reads b. With owned, b belongs to the caller alone and
// is never written again, and the strings read are views of it instead of
// copies (sharedStrings).
func NewEntryDecoder(b []byte, owned bool) *EntryDecoder {
	d := &EntryDecoder{r: entryReader{b: b}}
	d.str, d.strs = sharedStrings(b, &d.r, owned)
	return d
}

// Varint reads a number.
func (d *EntryDecoder) Varint() int64 { return d.r.varint() }

// Int reads a number that must fit an int.
func (d *EntryDecoder) Int() int { return d.r.int() }

// Count reads the count of a list whose items take at least min bytes each.
func (d *EntryDecoder) Count(min int) int { return d.r.count(min) }

// Str reads a string.
func (d *EntryDecoder) Str() string { return d.str() }

// Strs reads a list of strings (nil when empty).
func (d *EntryDecoder) Strs() []string { return d.strs() }

// Done reports whether every read was well-formed and the body was read
// to its end.
func (d *EntryDecoder) Done() bool { return !d.r.bad && len(d.r.b) == 0 }
