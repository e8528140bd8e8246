package hubrefs

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/storer"
)

// EmptyTree is the id of the empty tree, the tree of every event.
var EmptyTree = plumbing.NewHash("4b825dc642cb6eb9a060e54bf8d69288fbee4904")

// headerRoom is what an event may hold beyond its payload: headers, parents
// and an armored signature (an rsa-8192 signature is under 3 KiB).
const headerRoom = 16 << 10

// Ceilings bound what one hub ref may hold (docs/events.md). A zero or
// negative field means its default.
type Ceilings struct {
	EventsPerRef int // events in one ref (10,000)
	EventBytes   int // bytes of one JSON payload (64 KiB)
	Parents      int // parents of one event (8)
}

// DefaultCeilings are the ceilings when rules set none.
var DefaultCeilings = Ceilings{EventsPerRef: 10000, EventBytes: 64 << 10, Parents: 8}

func (c Ceilings) norm() Ceilings {
	if c.EventsPerRef <= 0 {
		c.EventsPerRef = DefaultCeilings.EventsPerRef
	}
	if c.EventBytes <= 0 {
		c.EventBytes = DefaultCeilings.EventBytes
	}
	if c.Parents <= 0 {
		c.Parents = DefaultCeilings.Parents
	}
	return c
}

func (c Ceilings) maxObject() int64 { return int64(c.EventBytes) + headerRoom }

// KnownType reports whether t is an event type this version understands.
func KnownType(t string) bool {
	_, ok := payloadTypes[t]
	return ok
}

// Unmarshal decodes the event's payload into v strictly (StrictUnmarshal:
// keys byte for byte, no unknown or repeated key; docs/events.md).
func (e Event) Unmarshal(v any) error {
	if err := e.PayloadInto(v); err != nil {
		return fmt.Errorf("event %s (%s): payload: %v: %w", e.ID, e.Type, err, ErrMalformed)
	}
	return nil
}

// checkPayload validates a payload: valid UTF-8, one JSON object, top-level
// keys unique ignoring case, "type" and "repo" non-empty strings. The common
// case (a valid object) is one validity scan and one scan of the top-level
// keys; anything else goes through checkPayloadSlow for its exact error.
func checkPayload(b []byte) (typ, repo string, err error) {
	typ, repo, _, err = checkPayloadValid(b)
	return typ, repo, err
}

// checkPayloadValid is checkPayload; valid reports that b was found valid
// UTF-8 and valid JSON on the way (the common case), so later checks of the
// same bytes need not scan them for that again.
func checkPayloadValid(b []byte) (typ, repo string, valid bool, err error) {
	if typ, repo, ok := checkPayloadFast(b); ok {
		return typ, repo, true, nil
	}
	typ, repo, err = checkPayloadSlow(b)
	return typ, repo, false, err
}

func isJSONSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// jsonStringEnd returns the index just past the JSON string starting at
// b[i] == '"' in valid JSON, and whether it holds an escape.
func jsonStringEnd(b []byte, i int) (int, bool) {
	esc := false
	for i++; i < len(b); i++ {
		switch b[i] {
		case '\\':
			esc = true
			i++
		case '"':
			return i + 1, esc
		}
	}
	return len(b), esc
}

// jsonValueEnd returns the index just past the JSON value starting at b[i]
// in valid JSON.
func jsonValueEnd(b []byte, i int) int {
	switch b[i] {
	case '"':
		end, _ := jsonStringEnd(b, i)
		return end
	case '{', '[':
		depth := 0
		for ; i < len(b); i++ {
			switch b[i] {
			case '"':
				end, _ := jsonStringEnd(b, i)
				i = end - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1
				}
			}
		}
		return len(b)
	}
	for ; i < len(b); i++ {
		if c := b[i]; c == ',' || c == '}' || c == ']' || isJSONSpace(c) {
			return i
		}
	}
	return i
}

// checkPayloadFast accepts what checkPayloadSlow accepts, with the same
// result; ok false means "ask checkPayloadSlow" (a refusal, or a case it
// does not handle).
func checkPayloadFast(b []byte) (typ, repo string, ok bool) {
	if !utf8.Valid(b) || !json.Valid(b) {
		return "", "", false
	}
	i := 0
	for i < len(b) && isJSONSpace(b[i]) {
		i++
	}
	if i == len(b) || b[i] != '{' {
		return "", "", false
	}
	i++
	var seen keySet
	var haveType, haveRepo bool
	for {
		for isJSONSpace(b[i]) || b[i] == ',' {
			i++
		}
		if b[i] == '}' {
			break
		}
		end, esc := jsonStringEnd(b, i)
		key := b[i+1 : end-1]
		if esc {
			var k string
			if json.Unmarshal(b[i:end], &k) != nil {
				return "", "", false
			}
			key = []byte(k)
		}
		i = end
		for isJSONSpace(b[i]) || b[i] == ':' {
			i++
		}
		vend := jsonValueEnd(b, i)
		val := b[i:vend]
		i = vend
		fold := key
		if !isLowerASCII(key) {
			fold = []byte(strings.ToLower(string(key)))
		}
		if seen.add(fold) {
			return "", "", false
		}
		if string(fold) != "type" && string(fold) != "repo" {
			continue
		}
		if !bytes.Equal(key, fold) || len(val) < 3 || val[0] != '"' {
			return "", "", false
		}
		var s string
		if bytes.IndexByte(val, '\\') < 0 {
			s = string(val[1 : len(val)-1])
		} else if json.Unmarshal(val, &s) != nil || s == "" {
			return "", "", false
		}
		if string(fold) == "type" {
			typ, haveType = s, true
		} else {
			repo, haveRepo = s, true
		}
	}
	if !haveType || !haveRepo {
		return "", "", false
	}
	return typ, repo, true
}

func isLowerASCII(s []byte) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c >= 'A' && c <= 'Z' || c >= 0x80 {
			return false
		}
	}
	return true
}

// checkPayloadSlow is checkPayload token by token, with a precise error.
func checkPayloadSlow(b []byte) (typ, repo string, err error) {
	if !utf8.Valid(b) {
		return "", "", fmt.Errorf("payload is not valid UTF-8: %w", ErrMalformed)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	tok, err := dec.Token()
	if err != nil || tok != json.Delim('{') {
		return "", "", fmt.Errorf("payload is not a JSON object: %w", ErrMalformed)
	}
	seen := map[string]bool{}
	var haveType, haveRepo bool
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return "", "", fmt.Errorf("payload is not valid JSON: %v: %w", err, ErrMalformed)
		}
		key, _ := tok.(string)
		fold := strings.ToLower(key)
		if seen[fold] {
			return "", "", fmt.Errorf("payload repeats the key %q: %w", key, ErrMalformed)
		}
		seen[fold] = true
		var val json.RawMessage
		if err := dec.Decode(&val); err != nil {
			return "", "", fmt.Errorf("payload is not valid JSON: %v: %w", err, ErrMalformed)
		}
		switch fold {
		case "type", "repo":
			var s string
			if key != fold || json.Unmarshal(val, &s) != nil || s == "" {
				return "", "", fmt.Errorf("payload %q must be a non-empty string named in lower case: %w", fold, ErrMalformed)
			}
			if fold == "type" {
				typ, haveType = s, true
			} else {
				repo, haveRepo = s, true
			}
		}
	}
	if tok, err := dec.Token(); err != nil || tok != json.Delim('}') {
		return "", "", fmt.Errorf("payload is not valid JSON: %w", ErrMalformed)
	}
	if _, err := dec.Token(); err != io.EOF {
		return "", "", fmt.Errorf("payload has data after the JSON object: %w", ErrMalformed)
	}
	if !haveType || !haveRepo {
		return "", "", fmt.Errorf("payload lacks \"type\" or \"repo\": %w", ErrMalformed)
	}
	return typ, repo, nil
}

// Decode decodes and verifies one event from a commit object's content (no
// "commit <size>\0" prefix): the empty tree, at most c.Parents distinct
// parents, headers tree/parent/author/committer/gpgsig only, message
// "<type>\n\n<payload>" with the first line equal to the payload's type, a
// known type, a payload within c.EventBytes, and a valid SSH signature.
func Decode(raw []byte, c Ceilings) (Event, error) {
	id := plumbing.ComputeHash(plumbing.CommitObject, raw)
	return decode(raw, id, c.norm())
}

// DecodeObject is Decode for an object read from a store; it checks the type
// and size before reading the content.
func DecodeObject(obj plumbing.EncodedObject, c Ceilings) (Event, error) {
	c = c.norm()
	raw, err := readRaw(obj, c)
	if err != nil {
		return Event{}, err
	}
	return decode(raw, obj.Hash(), c)
}

// ReadEvent reads, decodes and verifies the event id from store.
func ReadEvent(store storer.EncodedObjectStorer, id plumbing.Hash, c Ceilings) (Event, error) {
	c = c.norm()
	raw, err := loadRaw(store, id, c)
	if err != nil {
		return Event{}, err
	}
	return decode(raw, id, c)
}

// rawReader is a store that hands out object contents without an
// EncodedObject (package receive's Store). Contents may be shared with the
// store's cache and are never modified here.
type rawReader interface {
	ReadRaw(h plumbing.Hash) (plumbing.ObjectType, []byte, error)
}

func loadRaw(store storer.EncodedObjectStorer, id plumbing.Hash, c Ceilings) ([]byte, error) {
	if rr, ok := store.(rawReader); ok {
		t, raw, err := rr.ReadRaw(id)
		if err != nil {
			if errors.Is(err, plumbing.ErrObjectNotFound) {
				return nil, fmt.Errorf("event %s is not in the object store (fetch refs/hub/* or repair the repository): %w", id, ErrMissing)
			}
			return nil, fmt.Errorf("reading event %s: %w", id, err)
		}
		if t != plumbing.CommitObject {
			return nil, fmt.Errorf("event %s is a %s, not a commit: %w", id, t, ErrMalformed)
		}
		if int64(len(raw)) > c.maxObject() {
			return nil, fmt.Errorf("event %s is %d bytes, over the ceiling of %d payload bytes (+%d for headers): %w",
				id, len(raw), c.EventBytes, headerRoom, ErrCeiling)
		}
		return raw, nil
	}
	obj, err := store.EncodedObject(plumbing.AnyObject, id)
	if err != nil {
		if errors.Is(err, plumbing.ErrObjectNotFound) {
			return nil, fmt.Errorf("event %s is not in the object store (fetch refs/hub/* or repair the repository): %w", id, ErrMissing)
		}
		return nil, fmt.Errorf("reading event %s: %w", id, err)
	}
	return readRaw(obj, c)
}

func readRaw(obj plumbing.EncodedObject, c Ceilings) ([]byte, error) {
	id := obj.Hash()
	if obj.Type() != plumbing.CommitObject {
		return nil, fmt.Errorf("event %s is a %s, not a commit: %w", id, obj.Type(), ErrMalformed)
	}
	if obj.Size() > c.maxObject() {
		return nil, fmt.Errorf("event %s is %d bytes, over the ceiling of %d payload bytes (+%d for headers): %w",
			id, obj.Size(), c.EventBytes, headerRoom, ErrCeiling)
	}
	r, err := obj.Reader()
	if err != nil {
		return nil, fmt.Errorf("reading event %s: %w", id, err)
	}
	defer r.Close()
	raw := make([]byte, 0, obj.Size())
	buf := bytes.NewBuffer(raw)
	if _, err := io.Copy(buf, io.LimitReader(r, c.maxObject()+1)); err != nil {
		return nil, fmt.Errorf("reading event %s: %w", id, err)
	}
	return buf.Bytes(), nil
}

func decode(raw []byte, id plumbing.Hash, c Ceilings) (Event, error) {
	rc, err := parseCommit(raw)
	if err != nil {
		return Event{}, fmt.Errorf("event %s: %w", id, err)
	}
	return decodeParsed(rc, raw, id, c, nil)
}

// decodeParsed checks a parsed commit's shape and payload, then verifies its
// signature (the expensive part, last).
// v, if not nil, is the calling goroutine's verifier (key cache, and the
// caller's VerifiedCache if any); nil verifies from scratch.
// raw may be shared with a store's cache: it is not modified, and the
// payload is copied out of it.
func decodeParsed(rc *rawCommit, raw []byte, id plumbing.Hash, c Ceilings, v *verifier) (Event, error) {
	fail := func(sentinel error, format string, args ...any) (Event, error) {
		return Event{}, fmt.Errorf("event %s: %s: %w", id, fmt.Sprintf(format, args...), sentinel)
	}
	if int64(len(raw)) > c.maxObject() {
		return fail(ErrCeiling, "%d bytes, over the ceiling of %d payload bytes (+%d for headers)", len(raw), c.EventBytes, headerRoom)
	}
	if rc.strict != "" {
		return fail(ErrMalformed, "%s (an event has only tree, parent, author, committer and gpgsig headers)", rc.strict)
	}
	if rc.tree != EmptyTree {
		return fail(ErrMalformed, "tree %s is not the empty tree", rc.tree)
	}
	if len(rc.parents) > c.Parents {
		return fail(ErrCeiling, "%d parents, over the ceiling of %d", len(rc.parents), c.Parents)
	}
	for i, p := range rc.parents {
		for _, q := range rc.parents[:i] {
			if p == q {
				return fail(ErrMalformed, "parent %s is named twice", p)
			}
		}
	}
	if _, ok := parseIdentTime(rc.author); !ok {
		return fail(ErrMalformed, "author %.80q is not a git identity", rc.author)
	}
	when, ok := parseIdentTime(rc.committer)
	if !ok {
		return fail(ErrMalformed, "committer %.80q is not a git identity", rc.committer)
	}
	if !rc.hasBody {
		return fail(ErrMalformed, "no message")
	}
	first, rest, ok := bytes.Cut(rc.message, []byte{'\n'})
	if !ok || len(rest) == 0 || rest[0] != '\n' {
		return fail(ErrMalformed, "message is not \"<type>\\n\\n<JSON payload>\"")
	}
	payload := bytes.TrimRight(rest[1:], " \t\r\n")
	if len(payload) > c.EventBytes {
		return fail(ErrCeiling, "payload of %d bytes, over the ceiling of %d", len(payload), c.EventBytes)
	}
	typ, repo, valid, err := checkPayloadValid(payload)
	if err != nil {
		return Event{}, fmt.Errorf("event %s: %w", id, err)
	}
	if typ != string(first) {
		return fail(ErrMalformed, "message says %.60q but the payload's type is %q", first, typ)
	}
	if !KnownType(typ) {
		return fail(ErrUnknownType, "type %q is not known to this version of git+ (upgrade it)", typ)
	}
	if err := checkTypedKeysValid(typ, payload, valid); err != nil {
		return Event{}, fmt.Errorf("event %s: %w", id, err)
	}
	pub, err := v.verify(rc)
	if err != nil {
		return Event{}, fmt.Errorf("event %s (%s): %w", id, typ, err)
	}
	payload = bytes.Clone(payload)
	return Event{
		ID:      id,
		Parents: rc.parents,
		Type:    typ,
		Repo:    repo,
		Payload: payload,
		Time:    when,
		Signer:  pub,
		typed:   decodeTyped(typ, payload),
	}, nil
}
