// Package termtext is how git+ writes text that may reach a terminal
// (docs/cli.md, "Text on a terminal"): every character that could act on a
// terminal is shown as a visible escape, so a record's author (a title, a
// body, a review, a check's output) cannot move the cursor, erase a line or
// reorder what the reader sees.
//
// Escaped, in text:
//   - C0 controls but newline and tab: \a \b \f \r \v by name, the others as
//     \xHH (ESC is \x1b); DEL as \x7f;
//   - a byte that is not part of valid UTF-8 as \xHH;
//   - C1 controls (U+0080–U+009F) and the bidirectional embeddings,
//     overrides and isolates (U+202A–U+202E, U+2066–U+2069) as \uHHHH.
//
// A backslash is written \\ where it could be read as the start of an
// escape: before another backslash, before one of a b f r v x u, and before
// a character that is itself escaped. Everywhere else it stands for itself,
// so "C:\dir" and "\d+" read as written. Read left to right, the result has
// one meaning: \\ is a backslash, \ and one of those letters begins an
// escape, any other \ is a backslash (Unescape in the tests decodes it).
//
// JSON (--json) is not text: encoding/json already writes C0 controls and
// backslashes escaped, and every byte this package would change can occur
// only inside a JSON string, so the JSON form writes the same characters as
// JSON's \uHHHH escapes (an invalid byte as \ufffd, as encoding/json reads
// it) and leaves backslashes alone: the document decodes to the same values.
//
// Pure: no I/O but the writer it is given.
package termtext

import (
	"io"
	"sync"
	"unicode/utf8"
)

// Shown reports whether the character r, read from valid UTF-8, is written
// as it is (true) or escaped (false). Newline and tab are shown.
func Shown(r rune) bool {
	switch {
	case r < 0x20:
		return r == '\n' || r == '\t'
	case r == 0x7f, r >= 0x80 && r <= 0x9f:
		return false
	case r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069:
		return false
	}
	return true
}

// Plain reports whether s is valid UTF-8 holding no character Escape would
// escape (newline and tab are plain). A backslash is plain.
func Plain(s string) bool {
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if !Shown(rune(c)) {
				return false
			}
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n == 1 || !Shown(r) {
			return false
		}
		i += n
	}
	return true
}

// Escape returns s as git+ writes it as text.
func Escape(s string) string {
	out, _ := appendEscaped(nil, []byte(s), false, true)
	return string(out)
}

// EscapeJSON returns the JSON document b with the characters Escape would
// escape written as JSON escapes (see the package comment). b must be JSON
// (or JSON text lines) as encoding/json writes it.
func EscapeJSON(b []byte) []byte {
	out, _ := appendEscaped(nil, b, true, true)
	return out
}

const hex = "0123456789abcdef"

// names are the C0 controls written by name.
var names = [0x20]byte{0x07: 'a', 0x08: 'b', 0x0c: 'f', 0x0d: 'r', 0x0b: 'v'}

// startsEscape reports whether a backslash followed by p would be read as an
// escape, so the backslash must be doubled. more reports that p is too short
// to tell (an incomplete UTF-8 sequence, or nothing, when more input comes).
func startsEscape(p []byte, final bool) (yes, more bool) {
	if len(p) == 0 {
		return false, !final
	}
	c := p[0]
	if c < utf8.RuneSelf {
		switch c {
		case '\\', 'a', 'b', 'f', 'r', 'v', 'x', 'u':
			return true, false
		}
		return !Shown(rune(c)), false
	}
	if !final && !utf8.FullRune(p) {
		return false, true
	}
	r, n := utf8.DecodeRune(p)
	return r == utf8.RuneError && n == 1 || !Shown(r), false
}

// appendEscaped appends p, escaped (text, or JSON when json), to dst. Unless
// final, it stops before a tail it cannot decide yet: an incomplete UTF-8
// sequence, or in text a backslash whose next character has not come. It
// returns dst and how many bytes of p it consumed.
func appendEscaped(dst, p []byte, json, final bool) ([]byte, int) {
	i := 0
	for i < len(p) {
		// The common case: a run of plain ASCII goes as it is.
		j := i
		for j < len(p) {
			c := p[j]
			if c >= utf8.RuneSelf || c == 0x7f || c < 0x20 && c != '\n' && c != '\t' || c == '\\' && !json {
				break
			}
			j++
		}
		dst = append(dst, p[i:j]...)
		i = j
		if i == len(p) {
			break
		}
		c := p[i]
		switch {
		case c == '\\': // text only
			yes, more := startsEscape(p[i+1:], final)
			if more {
				return dst, i
			}
			if yes {
				dst = append(dst, '\\', '\\')
			} else {
				dst = append(dst, '\\')
			}
			i++
		case c < utf8.RuneSelf: // a C0 control or DEL
			dst = escapeRune(dst, rune(c), json)
			i++
		default:
			if !final && !utf8.FullRune(p[i:]) {
				return dst, i
			}
			r, n := utf8.DecodeRune(p[i:])
			switch {
			case r == utf8.RuneError && n == 1:
				if json {
					dst = append(dst, `\ufffd`...)
				} else {
					dst = append(dst, '\\', 'x', hex[c>>4], hex[c&15])
				}
			case Shown(r):
				dst = append(dst, p[i:i+n]...)
			default:
				dst = escapeRune(dst, r, json)
			}
			i += n
		}
	}
	return dst, len(p)
}

func escapeRune(dst []byte, r rune, json bool) []byte {
	switch {
	case json:
	case r < 0x20 && names[r] != 0:
		return append(dst, '\\', names[r])
	case r < 0x80:
		return append(dst, '\\', 'x', hex[r>>4], hex[r&15])
	}
	return append(dst, '\\', 'u', hex[r>>12&15], hex[r>>8&15], hex[r>>4&15], hex[r&15])
}

// Writer escapes what is written through it (text, or JSON after SetJSON)
// and writes the result to the writer beneath. A character split across
// two writes is escaped whole: up to a few bytes wait for the next write,
// and Flush writes them. Safe for concurrent use.
type Writer struct {
	mu    sync.Mutex
	w     io.Writer
	json  bool
	carry []byte
}

// NewWriter returns a text Writer over w; w itself when it is one already
// (so text is never escaped twice by one process).
func NewWriter(w io.Writer) *Writer {
	if t, ok := w.(*Writer); ok {
		return t
	}
	return &Writer{w: w}
}

// Write escapes p; it reports len(p) written unless the writer beneath
// fails.
func (t *Writer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	in := p
	if len(t.carry) > 0 {
		in = append(t.carry[:len(t.carry):len(t.carry)], p...)
	}
	out, n := appendEscaped(nil, in, t.json, false)
	t.carry = append(t.carry[:0], in[n:]...)
	if len(out) > 0 {
		if _, err := t.w.Write(out); err != nil {
			return 0, err
		}
	}
	return len(p), nil
}

// Flush writes what waits for a next write (an incomplete character, a
// trailing backslash) as it would be written at the end of the text.
func (t *Writer) Flush() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.flush()
}

func (t *Writer) flush() error {
	if len(t.carry) == 0 {
		return nil
	}
	out, _ := appendEscaped(nil, t.carry, t.json, true)
	t.carry = t.carry[:0]
	_, err := t.w.Write(out)
	return err
}

// SetJSON switches the writer to JSON's escapes (on) or back to text's.
func (t *Writer) SetJSON(on bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	_ = t.flush()
	t.json = on
}

// Raw returns the writer beneath w when w is a Writer (flushed first), else
// w: for output that is not git+'s text, such as git's own diff of file
// contents written to a terminal it pages and colours for.
func Raw(w io.Writer) io.Writer {
	if t, ok := w.(*Writer); ok {
		t.mu.Lock()
		defer t.mu.Unlock()
		_ = t.flush()
		return t.w
	}
	return w
}

// WriteJSON writes the JSON document b to w with EscapeJSON's escapes,
// beneath any Writer w is (JSON is never escaped as text).
func WriteJSON(w io.Writer, b []byte) error {
	_, err := Raw(w).Write(EscapeJSON(b))
	return err
}
