package hubrefs

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/storer"
)

// MarshalPayload renders a payload for an event: a typed struct (embedding
// Base) is marshalled with encoding/json; []byte and json.RawMessage are
// taken as they are. The result must be one JSON object with non-empty
// string "type" (a known type) and "repo". It returns the type and the bytes.
func MarshalPayload(payload any) (string, []byte, error) {
	var b []byte
	switch p := payload.(type) {
	case json.RawMessage:
		b = bytes.TrimSpace(p)
	case []byte:
		b = bytes.TrimSpace(p)
	default:
		var err error
		if b, err = json.Marshal(payload); err != nil {
			return "", nil, fmt.Errorf("encoding %T payload: %v: %w", payload, err, ErrMalformed)
		}
	}
	typ, _, err := checkPayload(b)
	if err != nil {
		return "", nil, fmt.Errorf("%T payload: %w", payload, err)
	}
	if !KnownType(typ) {
		return "", nil, fmt.Errorf("payload type %q: %w", typ, ErrUnknownType)
	}
	if err := checkTypedKeys(typ, b); err != nil {
		return "", nil, fmt.Errorf("%T payload: %w", payload, err)
	}
	return typ, b, nil
}

// ValidName reports whether name can stand as a member name in an event's
// author line: non-empty, no surrounding spaces, none of < > or control
// characters.
func ValidName(name string) bool {
	if name == "" || strings.TrimSpace(name) != name {
		return false
	}
	for _, r := range name {
		if r == '<' || r == '>' || r < 0x20 || r == 0x7f {
			return false
		}
	}
	return true
}

// EncodeEvent builds the signed content of an event commit (no "commit
// <size>\0" prefix): the empty tree, parents in the order given (distinct),
// author = committer = "<name> <name@hub.invalid> <unix> +0000", message
// "<type>\n\n<payload>\n", and s's SSH signature in the gpgsig header.
func EncodeEvent(payload any, parents []plumbing.Hash, name string, when time.Time, s Signer) ([]byte, error) {
	typ, body, err := MarshalPayload(payload)
	if err != nil {
		return nil, err
	}
	return encodeSigned(typ, body, parents, name, when, s)
}

// EncodeRawEvent is EncodeEvent for a payload taken as it is, with no check
// of its keys or values and typ as the message's first line: it lets tests
// build the hostile events git+ itself never writes (the hook and the folds
// must refuse them). Writers use EncodeEvent.
func EncodeRawEvent(typ string, payload []byte, parents []plumbing.Hash, name string, when time.Time, s Signer) ([]byte, error) {
	return encodeSigned(typ, payload, parents, name, when, s)
}

func encodeSigned(typ string, body []byte, parents []plumbing.Hash, name string, when time.Time, s Signer) ([]byte, error) {
	if !ValidName(name) {
		return nil, fmt.Errorf("member name %q cannot be written into an event (no <, >, control characters or surrounding spaces): %w", name, ErrMalformed)
	}
	if s == nil {
		return nil, fmt.Errorf("writing a %s event needs a signer (--key or ssh-agent): %w", typ, ErrUnsigned)
	}
	for i, p := range parents {
		if p.IsZero() {
			return nil, fmt.Errorf("parent %d of a %s event is the zero id: %w", i, typ, ErrMalformed)
		}
		for _, q := range parents[:i] {
			if p == q {
				return nil, fmt.Errorf("parent %s named twice: %w", p, ErrMalformed)
			}
		}
	}
	ident := name + " <" + name + "@hub.invalid> " + strconv.FormatInt(when.Unix(), 10) + " +0000\n"

	var head bytes.Buffer
	head.WriteString("tree " + EmptyTree.String() + "\n")
	for _, p := range parents {
		head.WriteString("parent " + p.String() + "\n")
	}
	head.WriteString("author " + ident)
	head.WriteString("committer " + ident)
	var msg bytes.Buffer
	msg.WriteString("\n" + typ + "\n\n")
	msg.Write(body)
	msg.WriteByte('\n')

	unsigned := make([]byte, 0, head.Len()+msg.Len())
	unsigned = append(append(unsigned, head.Bytes()...), msg.Bytes()...)
	armored, err := s.Sign(unsigned)
	if err != nil {
		return nil, fmt.Errorf("signing %s event: %w", typ, err)
	}
	armored = bytes.TrimRight(armored, "\n")
	if len(armored) == 0 || bytes.Contains(armored, []byte("\n\n")) {
		return nil, fmt.Errorf("signer returned an empty or malformed signature for a %s event: %w", typ, ErrBadSignature)
	}
	out := make([]byte, 0, len(unsigned)+len(armored)+64)
	out = append(out, head.Bytes()...)
	out = append(out, "gpgsig "...)
	out = append(out, bytes.ReplaceAll(armored, []byte("\n"), []byte("\n "))...)
	out = append(out, '\n')
	out = append(out, msg.Bytes()...)
	return out, nil
}

// NewEvent is EncodeEvent wrapped as an object ready for a store's
// SetEncodedObject; its Hash is the event id.
func NewEvent(payload any, parents []plumbing.Hash, name string, when time.Time, s Signer) (plumbing.EncodedObject, error) {
	raw, err := EncodeEvent(payload, parents, name, when, s)
	if err != nil {
		return nil, err
	}
	obj := &plumbing.MemoryObject{}
	obj.SetType(plumbing.CommitObject)
	if _, err := obj.Write(raw); err != nil {
		return nil, err
	}
	return obj, nil
}

// WriteEvent builds an event and stores it; it returns the event id. It
// writes the object only: moving a ref is Append's (through git push).
func WriteEvent(store storer.EncodedObjectStorer, payload any, parents []plumbing.Hash, name string, when time.Time, s Signer) (plumbing.Hash, error) {
	obj, err := NewEvent(payload, parents, name, when, s)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	h, err := store.SetEncodedObject(obj)
	if err != nil {
		return plumbing.ZeroHash, fmt.Errorf("storing event %s: %w", obj.Hash(), err)
	}
	return h, nil
}
