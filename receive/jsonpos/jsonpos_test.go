package jsonpos

import (
	"bytes"
	"encoding/json"
	"errors"
	"testing"
)

func TestLocateJSONError(t *testing.T) {
	type target struct {
		N int `json:"n"`
	}
	cases := []struct {
		name      string
		doc       string
		line, col int
	}{
		{"missing comma", "{\n  \"a\": 1\n  \"b\": 2\n}", 3, 3},
		{"trailing comma", "{\"a\": 1,}", 1, 8},   // the comma, not the brace after it
		{"bad literal", "{\n\"a\": tru\n}", 2, 9}, // the newline ends the literal
		{"second line first column", "{\"a\":1}\nx", 2, 1},
		{"truncated", "{\n  \"a\": [1, 2", 2, 12}, // the last byte
		{"wrong type", "{\n\n   \"n\": \"seven\"}", 3, 15},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var v target
			err := json.Unmarshal([]byte(tc.doc), &v)
			if err == nil {
				t.Fatalf("%q decoded", tc.doc)
			}
			var je *JSONError
			if !errors.As(LocateJSONError([]byte(tc.doc), err), &je) {
				t.Fatalf("no position for %v", err)
			}
			if je.Line != tc.line || je.Column != tc.col {
				t.Fatalf("%q: at %d:%d, want %d:%d (%v)", tc.doc, je.Line, je.Column, tc.line, tc.col, err)
			}
			if !errors.Is(je, err) {
				t.Fatal("the located error does not wrap the decoder's")
			}
		})
	}
	plain := errors.New("not a json error")
	if got := LocateJSONError(nil, plain); got != plain {
		t.Fatalf("an error without an offset became %v", got)
	}
}

// FuzzPosition: the position of any offset is inside the document, and
// the line counts the newlines before it.
func FuzzPosition(f *testing.F) {
	f.Add([]byte("{\n\"a\": x}"), int64(7))
	f.Add([]byte(""), int64(0))
	f.Fuzz(func(t *testing.T, data []byte, off int64) {
		if off < 0 {
			off = -off
		}
		line, col := Position(data, off)
		if line < 1 || col < 1 {
			t.Fatalf("Position(%q, %d) = %d:%d", data, off, line, col)
		}
		if line > bytes.Count(data, []byte{'\n'})+1 {
			t.Fatalf("line %d past the end of %q", line, data)
		}
		if col > len(data)+1 {
			t.Fatalf("column %d past the end of %q", col, data)
		}
		var v any
		if err := json.Unmarshal(data, &v); err != nil {
			var je *JSONError
			if errors.As(LocateJSONError(data, err), &je) && (je.Line < 1 || je.Column < 1) {
				t.Fatalf("bad position %d:%d", je.Line, je.Column)
			}
		}
	})
}
