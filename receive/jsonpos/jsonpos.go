// Package jsonpos says where a JSON document that does not decode went
// wrong, as line and column (docs/cli.md, "Machine-readable"), naming a
// trailing comma as the mistake it is: for the rules documents `git+ rules
// set` reads and the after-push configuration files (hooks/config).
// Standard library only.
package jsonpos

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// JSONError is a JSON document that does not decode, with the line and
// column (both from 1; the column counts bytes) where decoding stopped, so
// an editor can jump to it (docs/cli.md, "Machine-readable").
type JSONError struct {
	Line, Column int
	Err          error
}

func (e *JSONError) Error() string {
	return fmt.Sprintf("line %d, column %d: %v", e.Line, e.Column, e.Err)
}

func (e *JSONError) Unwrap() error { return e.Err }

// LocateJSONError turns err, from decoding data with encoding/json, into a
// *JSONError when it carries a byte offset (a syntax error, a value of the
// wrong type); other errors are returned unchanged.
func LocateJSONError(data []byte, err error) error {
	off, ok := ErrorEnd(err)
	if !ok && errors.Is(err, io.ErrUnexpectedEOF) {
		off, ok = int64(len(data)), true // a json.Decoder at a truncated document
	}
	if !ok {
		return err
	}
	var se *json.SyntaxError
	if at, closer, ok := TrailingComma(data, off); ok && errors.As(err, &se) {
		line, col := LineCol(data, at)
		return &JSONError{Line: line, Column: col, Err: fmt.Errorf("a trailing comma before %q (JSON allows none; delete it): %w", closer, err)}
	}
	line, col := Position(data, off)
	return &JSONError{Line: line, Column: col, Err: err}
}

// TrailingComma reports whether the syntax error ending at off is a '}' or
// ']' right after a comma (only white space between), and where that comma
// is: the mistake is the comma, so that is the position named.
func TrailingComma(data []byte, off int64) (at int64, closer byte, ok bool) {
	i := off - 1
	if i < 0 || i >= int64(len(data)) || (data[i] != '}' && data[i] != ']') {
		return 0, 0, false
	}
	closer = data[i]
	for i--; i >= 0; i-- {
		switch data[i] {
		case ' ', '\t', '\r', '\n':
			continue
		case ',':
			return i, closer, true
		}
		return 0, 0, false
	}
	return 0, 0, false
}

// ErrorEnd returns the offset encoding/json gives with err (a syntax
// error, a value of the wrong type): just past the byte at fault.
func ErrorEnd(err error) (int64, bool) {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		return se.Offset, true
	case errors.As(err, &te):
		return te.Offset, true
	}
	return -1, false
}

// Position returns the 1-based line and column of byte offset off in data.
// encoding/json's offsets point just past the byte at fault; the position
// given is that byte's.
func Position(data []byte, off int64) (line, col int) {
	return LineCol(data, off-1)
}

// LineCol returns the 1-based line and column (in bytes) of the byte at
// index at of data, clamped to data: the one place positions in JSON files
// are counted (rules documents, and the after-push configuration read by
// hooks/config).
func LineCol(data []byte, at int64) (line, col int) {
	if at > int64(len(data)) {
		at = int64(len(data))
	}
	if at < 0 {
		at = 0
	}
	before := data[:at]
	line = 1 + bytes.Count(before, []byte{'\n'})
	col = int(at) - bytes.LastIndexByte(before, '\n')
	return line, col
}
