package hubrefs

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strconv"
	"strings"
)

// Decode once (docs/scale.md, "Cold reads", "Each payload decoded once").
//
// Decode checks every payload strictly (checkPayload, then the exact key
// set of its type) and, for a payload type made only of strings, integers
// and such structs ("flat": every pull request type, most others), also
// decodes it into that type then and there. The typed value rides along in
// the Event, and Event.PayloadInto hands a copy to a fold instead of
// checking and decoding the same bytes again. The answer is by construction
// what StrictUnmarshal(e.Payload, v) would give: the same bytes passed the
// same key check, and the value is json.Unmarshal's (or decodeFlat's,
// which takes only inputs where it provably agrees with json.Unmarshal and
// leaves everything else to it: TestDecodeFlatAgrees, FuzzDecodeFlat). A
// payload json.Unmarshal refuses keeps no typed value, so the fold meets
// the refusal itself, with its usual error.

// typedPayload is a payload decoded when its event was read.
type typedPayload struct {
	v   reflect.Value // a *T holding the decoded payload
	of  *byte         // &Payload[0] it was decoded from
	len int           // len(Payload)
}

// PayloadInto decodes the event's payload into v (a pointer) exactly as
// StrictUnmarshal(e.Payload, v) does, with the same result and error. When
// the event was decoded by this package from its object, v points to a zero
// value of the payload's own type, and the payload is flat, it copies the
// value decoded then instead of decoding again.
func (e Event) PayloadInto(v any) error {
	if tp := e.typed; tp != nil && len(e.Payload) == tp.len && len(e.Payload) > 0 && &e.Payload[0] == tp.of {
		rv := reflect.ValueOf(v)
		if rv.IsValid() && rv.Type() == tp.v.Type() && !rv.IsNil() && rv.Elem().IsZero() {
			rv.Elem().Set(tp.v.Elem())
			return nil
		}
	}
	return StrictUnmarshal(e.Payload, v)
}

// flatField is one JSON field of a flat struct: where it is (an index path
// through embedded structs) and, for a nested struct, its own fields.
type flatField struct {
	index []int
	kind  reflect.Kind
	sub   map[string]flatField
}

// flatTypes holds the field maps of the payload types that are flat.
var flatTypes = func() map[reflect.Type]map[string]flatField {
	out := map[reflect.Type]map[string]flatField{}
	for _, t := range payloadTypes {
		if fs, ok := flatFields(t); ok {
			out[t] = fs
		}
	}
	return out
}()

// flatFields returns t's JSON fields when t is a struct of strings,
// integers and such structs (embedded ones flattened as encoding/json
// does, tags as addFields reads them), and false for anything else.
func flatFields(t reflect.Type) (map[string]flatField, bool) {
	if t.Kind() != reflect.Struct {
		return nil, false
	}
	fs := map[string]flatField{}
	var add func(t reflect.Type, prefix []int) bool
	add = func(t reflect.Type, prefix []int) bool {
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			idx := append(append([]int(nil), prefix...), i)
			tag := f.Tag.Get("json")
			if tag == "-" {
				continue
			}
			name, opts, _ := strings.Cut(tag, ",")
			if opts != "" && opts != "omitempty" {
				return false // ",string" and the like: not handled here
			}
			if f.Anonymous && name == "" && f.Type.Kind() == reflect.Struct {
				if !add(f.Type, idx) {
					return false
				}
				continue
			}
			if !f.IsExported() || f.Anonymous {
				return false
			}
			if name == "" {
				name = f.Name
			}
			if _, dup := fs[name]; dup {
				return false // encoding/json's rules for clashing names: not handled here
			}
			ff := flatField{index: idx, kind: f.Type.Kind()}
			switch ff.kind {
			case reflect.String, reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
			case reflect.Struct:
				sub, ok := flatFields(f.Type)
				if !ok {
					return false
				}
				ff.sub = sub
			default:
				return false
			}
			fs[name] = ff
		}
		return true
	}
	if !add(t, nil) {
		return nil, false
	}
	return fs, true
}

// decodeTyped decodes payload b of event type typ, which passed the strict
// key check of its type, into a new value of that type when the type is
// flat and json.Unmarshal accepts it; nil otherwise.
func decodeTyped(typ string, b []byte) *typedPayload {
	t, ok := payloadTypes[typ]
	if !ok || len(b) == 0 {
		return nil
	}
	fs, ok := flatTypes[t]
	if !ok {
		return nil
	}
	pv := reflect.New(t)
	if _, ok := decodeFlat(b, skipSpace(b, 0), fs, pv.Elem()); !ok {
		pv = reflect.New(t)
		if json.Unmarshal(b, pv.Interface()) != nil {
			return nil
		}
	}
	return &typedPayload{v: pv, of: &b[0], len: len(b)}
}

// decodeFlat decodes the JSON object at b[i] into dst (a flat struct whose
// fields are fs) and returns the index past it. b must be valid JSON whose
// keys passed checkKeys against dst's schema. It handles only what it
// decodes exactly as json.Unmarshal does — unescaped keys naming a field,
// strings into string fields, true and false into bool fields, integer literals in range into integer
// fields, objects into struct fields — and returns false on anything else
// (null, a value of another kind, an escaped key), leaving that to
// json.Unmarshal; dst is then partly written and must be discarded.
func decodeFlat(b []byte, i int, fs map[string]flatField, dst reflect.Value) (int, bool) {
	if i >= len(b) || b[i] != '{' {
		return 0, false
	}
	i = skipSpace(b, i+1)
	for i < len(b) && b[i] != '}' {
		if b[i] != '"' {
			return 0, false
		}
		end, esc := jsonStringEnd(b, i)
		if esc {
			return 0, false
		}
		f, ok := fs[string(b[i+1:end-1])]
		if !ok {
			return 0, false
		}
		i = skipSpace(b, end)
		if i >= len(b) || b[i] != ':' {
			return 0, false
		}
		i = skipSpace(b, i+1)
		if i >= len(b) {
			return 0, false
		}
		fv := dst.FieldByIndex(f.index)
		switch f.kind {
		case reflect.String:
			if b[i] != '"' {
				return 0, false
			}
			vend, esc := jsonStringEnd(b, i)
			if esc {
				var s string
				if json.Unmarshal(b[i:vend], &s) != nil {
					return 0, false
				}
				fv.SetString(s)
			} else {
				fv.SetString(string(b[i+1 : vend-1]))
			}
			i = vend
		case reflect.Bool:
			switch {
			case bytes.HasPrefix(b[i:], []byte("true")):
				fv.SetBool(true)
				i += 4
			case bytes.HasPrefix(b[i:], []byte("false")):
				fv.SetBool(false)
				i += 5
			default:
				return 0, false
			}
		case reflect.Struct:
			vend, ok := decodeFlat(b, i, f.sub, fv)
			if !ok {
				return 0, false
			}
			i = vend
		default: // integers
			if c := b[i]; c != '-' && (c < '0' || c > '9') {
				return 0, false
			}
			vend := jsonValueEnd(b, i)
			n, err := strconv.ParseInt(string(b[i:vend]), 10, 64)
			if err != nil || fv.OverflowInt(n) {
				return 0, false
			}
			fv.SetInt(n)
			i = vend
		}
		i = skipSpace(b, i)
		if i < len(b) && b[i] == ',' {
			i = skipSpace(b, i+1)
		}
	}
	if i >= len(b) {
		return 0, false
	}
	return i + 1, true
}
