package config

// Reading the after-push configuration files (hooks/delivery and hooks/wake
// have their shapes): strictly, an error naming the file, line and column
// (receive/jsonpos), the fields a misspelt one could have been
// (jsonfields.go).

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/gitplus/gitplus/receive/jsonpos"
)

// Configuration files, relative to the git directory.
const (
	RemotesFile  = "hub/remotes.json"
	WebhooksFile = "hub/webhooks.json"
	WakeFile     = "hub/wake.json"
)

// ErrConfig reports a configuration file that cannot be used.
var ErrConfig = errors.New("bad after-push configuration")

// ReadJSON decodes gitDir/name strictly into v and returns the file's bytes.
// A missing file returns (nil, false, nil); a file that does not decode
// returns an error naming the file, line and column.
func ReadJSON(gitDir, name string, v any) ([]byte, bool, error) {
	p := filepath.Join(gitDir, name)
	data, err := os.ReadFile(p)
	if errors.Is(err, os.ErrNotExist) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("reading %s: %w", p, err)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	err = dec.Decode(v)
	extraAt := int64(-1)
	if err == nil {
		var extra any
		extraAt = dec.InputOffset()
		if dec.Decode(&extra) != io.EOF {
			err = errors.New("more than one JSON value")
		}
	}
	if err != nil {
		off := dec.InputOffset()
		end, located := jsonpos.ErrorEnd(err)
		switch {
		case extraAt >= 0:
			off = extraAt + int64(len(data[extraAt:])-len(bytes.TrimLeft(data[extraAt:], " \t\r\n")))
		case located:
			off = end - 1 // the offset counts the byte at fault
			var se *json.SyntaxError
			if at, closer, ok := jsonpos.TrailingComma(data, end); ok && errors.As(err, &se) {
				off, err = at, fmt.Errorf("a trailing comma before %q (JSON allows none; delete it): %w", closer, err)
			}
		default:
			if f, ok := strings.CutPrefix(err.Error(), "json: unknown field "); ok {
				if i := keyOffset(data, f); i >= 0 {
					off = int64(i)
				}
				err = fmt.Errorf("%w (%s)", err, fieldsHelp(v))
			}
		}
		return nil, false, fmt.Errorf("%s: %v (fix the file; the shapes are in docs/delivery.md): %w", At(p, data, off), err, ErrConfig)
	}
	return data, true, nil
}

// keyOffset is the offset of the first object key spelt quoted (a JSON
// string with its quotes) in data, or -1.
func keyOffset(data []byte, quoted string) int {
	for i := 0; ; {
		j := bytes.Index(data[i:], []byte(quoted))
		if j < 0 {
			return -1
		}
		k := i + j + len(quoted)
		rest := bytes.TrimLeft(data[k:], " \t\r\n")
		if len(rest) > 0 && rest[0] == ':' {
			return i + j
		}
		i = k
	}
}

// ValueOffset is the offset of the JSON string value s in data, or 0.
func ValueOffset(data []byte, s string) int64 {
	q, _ := json.Marshal(s)
	if i := bytes.Index(data, q); i >= 0 {
		return int64(i)
	}
	return 0
}

// At renders "file:line:column" for byte offset off of data (the
// offset of the first byte at fault, lines and columns from 1).
func At(p string, data []byte, off int64) string {
	line, col := jsonpos.LineCol(data, off)
	return fmt.Sprintf("%s:%d:%d", p, line, col)
}
