package hubrefs

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
	"strings"
	"sync"
	"unicode/utf8"
)

// Strict payload decoding (docs/events.md, "Payload keys").
//
// encoding/json matches object keys to struct fields ignoring case, with
// Unicode folding ("capſ" fills a field named "caps"), and lets a repeated
// key overwrite an earlier one. Another JSON reader, or a person, would see
// something else in the same bytes. So every payload is first checked
// against the exact key set its Go type declares: at every level, a key is
// compared byte for byte (after JSON unescaping, which every reader does
// alike), an unknown key is refused, and a key repeated in one object is
// refused. Only then is it unmarshalled, when no folding can happen any
// more: every key present is a declared field, spelled exactly.

// schema is the key set a JSON value must follow.
type schema struct {
	fields map[string]*schema // an object with exactly these keys (a struct)
	elem   *schema            // array elements, or map values (free keys)
	isMap  bool
}

// free accepts any keys (json.RawMessage, interfaces); repeated keys are
// still refused at every level.
var free = &schema{}

var (
	schemaMu    sync.Mutex
	schemaCache = map[reflect.Type]*schema{}
	schemaDone  sync.Map // reflect.Type → *schema: schemaOf's answers
	rawMessage  = reflect.TypeOf(json.RawMessage(nil))
)

// schemaOf returns the schema of a Go type as encoding/json would decode it.
// Schemas are immutable once built; a type's schema is found without the
// lock after its first use (every payload is checked against one, on every
// CPU at once).
func schemaOf(t reflect.Type) *schema {
	if s, ok := schemaDone.Load(t); ok {
		return s.(*schema)
	}
	schemaMu.Lock()
	defer schemaMu.Unlock()
	s := buildSchema(t, map[reflect.Type]*schema{})
	schemaDone.Store(t, s)
	return s
}

func buildSchema(t reflect.Type, building map[reflect.Type]*schema) *schema {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if s, ok := schemaCache[t]; ok {
		return s
	}
	if s, ok := building[t]; ok {
		return s
	}
	if t == rawMessage {
		return free
	}
	switch t.Kind() {
	case reflect.Struct:
		s := &schema{fields: map[string]*schema{}}
		building[t] = s
		addFields(s, t, building)
		schemaCache[t] = s
		return s
	case reflect.Slice, reflect.Array:
		if t.Elem().Kind() == reflect.Uint8 {
			return free // []byte is a base64 string
		}
		return &schema{elem: buildSchema(t.Elem(), building)}
	case reflect.Map:
		return &schema{elem: buildSchema(t.Elem(), building), isMap: true}
	}
	return free
}

// addFields adds t's JSON fields to s, flattening embedded structs as
// encoding/json does for the simple cases payload types use.
func addFields(s *schema, t reflect.Type, building map[reflect.Type]*schema) {
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, _, _ := strings.Cut(tag, ",")
		if f.Anonymous && name == "" {
			ft := f.Type
			if ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct {
				addFields(s, ft, building)
				continue
			}
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		s.fields[name] = buildSchema(f.Type, building)
	}
}

// StrictUnmarshal decodes data into v (a pointer) as encoding/json does,
// after checking that data is valid UTF-8 JSON whose object keys are, at
// every level, exactly the ones v's type declares, each at most once
// (ErrMalformed otherwise, naming the key and where it is).
func StrictUnmarshal(data []byte, v any) error {
	t := reflect.TypeOf(v)
	if t == nil || t.Kind() != reflect.Pointer {
		return fmt.Errorf("StrictUnmarshal needs a pointer, not %T: %w", v, ErrMalformed)
	}
	if err := checkKeys(data, schemaOf(t)); err != nil {
		return err
	}
	if err := json.Unmarshal(data, v); err != nil {
		return fmt.Errorf("payload: %v: %w", err, ErrMalformed)
	}
	return nil
}

// checkKeys is StrictUnmarshal's key check alone.
func checkKeys(data []byte, s *schema) error {
	if !utf8.Valid(data) {
		return fmt.Errorf("payload is not valid UTF-8: %w", ErrMalformed)
	}
	if !json.Valid(data) {
		return fmt.Errorf("payload is not valid JSON: %w", ErrMalformed)
	}
	i := skipSpace(data, 0)
	_, err := scanValue(data, i, s, "")
	return err
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && isJSONSpace(b[i]) {
		i++
	}
	return i
}

// scanValue checks the value starting at b[i] (valid JSON) against s and
// returns the index just past it.
func scanValue(b []byte, i int, s *schema, path string) (int, error) {
	switch b[i] {
	case '{':
		return scanObject(b, i, s, path)
	case '[':
		elem := free
		if s.elem != nil && !s.isMap {
			elem = s.elem
		}
		i = skipSpace(b, i+1)
		for n := 0; b[i] != ']'; n++ {
			end := jsonValueEnd(b, i)
			if c := b[i]; c == '{' || c == '[' { // the path is for errors within
				var err error
				if end, err = scanValue(b, i, elem, fmt.Sprintf("%s[%d]", path, n)); err != nil {
					return 0, err
				}
			}
			i = skipSpace(b, end)
			if b[i] == ',' {
				i = skipSpace(b, i+1)
			}
		}
		return i + 1, nil
	}
	return jsonValueEnd(b, i), nil
}

func scanObject(b []byte, i int, s *schema, path string) (int, error) {
	where := path
	if where == "" {
		where = "the payload"
	}
	var seen keySet
	i = skipSpace(b, i+1)
	for b[i] != '}' {
		end, esc := jsonStringEnd(b, i)
		key := b[i+1 : end-1]
		if esc {
			var k string
			if err := json.Unmarshal(b[i:end], &k); err != nil {
				return 0, fmt.Errorf("%s: key %s: %v: %w", where, b[i:end], err, ErrMalformed)
			}
			key = []byte(k)
		}
		if seen.add(key) {
			return 0, fmt.Errorf("%s repeats the key %q (every key appears once): %w", where, key, ErrMalformed)
		}
		sub := free
		switch {
		case s.fields != nil:
			f, ok := s.fields[string(key)]
			if !ok {
				return 0, fmt.Errorf("%s has the unknown key %q (keys are matched byte for byte; the known ones are %s): %w",
					where, key, strings.Join(s.keys(), ", "), ErrMalformed)
			}
			sub = f
		case s.isMap:
			sub = s.elem
		}
		i = skipSpace(b, end)
		i = skipSpace(b, i+1) // ':'
		vend := jsonValueEnd(b, i)
		if c := b[i]; c == '{' || c == '[' { // the path is for errors within
			var err error
			if vend, err = scanValue(b, i, sub, path+"."+string(key)); err != nil {
				return 0, err
			}
		}
		i = skipSpace(b, vend)
		if b[i] == ',' {
			i = skipSpace(b, i+1)
		}
	}
	return i + 1, nil
}

// keySet is the set of keys met in one JSON object: the first few are
// compared in place (no allocation; payloads hold about ten keys), more go
// to a map.
type keySet struct {
	few  [12][]byte
	n    int
	many map[string]struct{}
}

// add adds k and reports whether it was there already. k is kept.
func (s *keySet) add(k []byte) bool {
	if s.many != nil {
		if _, ok := s.many[string(k)]; ok {
			return true
		}
		s.many[string(k)] = struct{}{}
		return false
	}
	for _, x := range s.few[:s.n] {
		if bytes.Equal(x, k) {
			return true
		}
	}
	if s.n < len(s.few) {
		s.few[s.n] = k
		s.n++
		return false
	}
	s.many = make(map[string]struct{}, 2*len(s.few))
	for _, x := range s.few[:s.n] {
		s.many[string(x)] = struct{}{}
	}
	s.many[string(k)] = struct{}{}
	return false
}

func (s *schema) keys() []string {
	out := make([]string, 0, len(s.fields))
	for k := range s.fields {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// payloadTypes maps every event type to the Go type of its payload: the
// exact key set each type's payload may hold.
var payloadTypes = map[string]reflect.Type{
	TypeRepoCreated:    reflect.TypeOf(RepoCreated{}),
	TypeMemberAdded:    reflect.TypeOf(MemberAdded{}),
	TypeMemberChanged:  reflect.TypeOf(MemberAdded{}),
	TypeMemberRemoved:  reflect.TypeOf(MemberRemoved{}),
	TypeRulesSet:       reflect.TypeOf(RulesSet{}),
	TypeTeamSet:        reflect.TypeOf(TeamSet{}),
	TypePROpened:       reflect.TypeOf(PROpened{}),
	TypePRUpdated:      reflect.TypeOf(PRUpdated{}),
	TypePRRetargeted:   reflect.TypeOf(PRRetargeted{}),
	TypePRClosed:       reflect.TypeOf(Base{}),
	TypePRReopened:     reflect.TypeOf(Base{}),
	TypePRMerged:       reflect.TypeOf(PRMerged{}),
	TypeReviewSubmit:   reflect.TypeOf(Review{}),
	TypeReviewDismiss:  reflect.TypeOf(ReviewDismissed{}),
	TypePRDraft:        reflect.TypeOf(Base{}),
	TypePRReady:        reflect.TypeOf(Base{}),
	TypePRBypassed:     reflect.TypeOf(PRBypassed{}),
	TypeThreadOpened:   reflect.TypeOf(Thread{}),
	TypeThreadResolved: reflect.TypeOf(Thread{}),
	TypeCheckStarted:   reflect.TypeOf(Check{}),
	TypeCheckCompleted: reflect.TypeOf(Check{}),
	TypeQueueOpened:    reflect.TypeOf(QueueOpened{}),
	TypeQueueEntered:   reflect.TypeOf(QueueEntered{}),
	TypeQueueCandidate: reflect.TypeOf(QueueCandidate{}),
	TypeQueueLeft:      reflect.TypeOf(QueueLeft{}),
	TypeQueueReset:     reflect.TypeOf(QueueReset{}),
	TypeQueueClosed:    reflect.TypeOf(Base{}),
	TypeQueuePaused:    reflect.TypeOf(QueuePaused{}),
	TypeQueueResumed:   reflect.TypeOf(Base{}),
}

// checkTypedKeys checks payload b of event type typ against its type's key
// set. An unknown type is the caller's business (ErrUnknownType).
func checkTypedKeys(typ string, b []byte) error {
	return checkTypedKeysValid(typ, b, false)
}

// checkTypedKeysValid is checkTypedKeys; valid true says b is already known
// to be valid UTF-8 and valid JSON (checkPayloadValid), so only the keys are
// scanned: the result is the same, as those two checks would pass.
func checkTypedKeysValid(typ string, b []byte, valid bool) error {
	t, ok := payloadTypes[typ]
	if !ok {
		return nil
	}
	var err error
	if valid {
		_, err = scanValue(b, skipSpace(b, 0), schemaOf(t), "")
	} else {
		err = checkKeys(b, schemaOf(t))
	}
	if err != nil {
		return fmt.Errorf("%s payload: %w", typ, err)
	}
	return nil
}
