package hubrefs

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
)

// FuzzDecode: Decode and Verify never panic on any commit bytes, and what
// Decode accepts satisfies the event invariants.
func FuzzDecode(f *testing.F) {
	s := quickSigner()
	good, err := EncodeEvent(PROpened{Base: Base{Type: TypePROpened, Repo: "r"}, ID: "x", Title: "t"},
		[]plumbing.Hash{plumbing.NewHash("1111111111111111111111111111111111111111")}, "alice", time.Unix(1, 0), s)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(good)
	f.Add(unsignedBody(EmptyTree.String(), nil, "pr.closed\n\n{\"type\":\"pr.closed\",\"repo\":\"r\"}\n"))
	f.Add([]byte("tree 4b825dc642cb6eb9a060e54bf8d69288fbee4904\ngpgsig -----BEGIN SSH SIGNATURE-----\n AAAA\n -----END SSH SIGNATURE-----\n\n"))
	f.Add([]byte("\n"))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, raw []byte) {
		Verify(raw)
		ev, err := Decode(raw, Ceilings{})
		if err != nil {
			return
		}
		if !KnownType(ev.Type) || ev.Repo == "" || ev.Signer == nil || len(ev.Parents) > DefaultCeilings.Parents {
			t.Fatalf("accepted an event breaking the invariants: %+v", ev)
		}
		if !json.Valid(ev.Payload) || len(ev.Payload) > DefaultCeilings.EventBytes {
			t.Fatalf("accepted an invalid payload %q", ev.Payload)
		}
		if ev.ID != plumbing.ComputeHash(plumbing.CommitObject, raw) {
			t.Fatal("id is not the object's hash")
		}
		// The payload decoded at read time, if kept, is what a fold would
		// decode itself (docs/scale.md, "Cold reads").
		rt := payloadTypes[ev.Type]
		got, want := reflect.New(rt), reflect.New(rt)
		gerr, werr := ev.PayloadInto(got.Interface()), StrictUnmarshal(ev.Payload, want.Interface())
		if fmt.Sprint(gerr) != fmt.Sprint(werr) || !reflect.DeepEqual(got.Interface(), want.Interface()) {
			t.Fatalf("PayloadInto %+v (%v), StrictUnmarshal %+v (%v)", got.Elem(), gerr, want.Elem(), werr)
		}
	})
}

// FuzzPayload: the payload checks never panic; whatever MarshalPayload
// accepts, signed, decodes back to the same type and bytes.
func FuzzPayload(f *testing.F) {
	for _, seed := range []string{
		`{"type":"pr.closed","repo":"r"}`,
		`{"type":"pr.opened","repo":"r","title":"x","extra":{"a":[1,2,3]}}`,
		`{"type":"pr.closed","repo":"r","Type":"x"}`,
		`{"type":"pr.closed","repo":"r"}{}`,
		`[]`, `null`, `"pr.closed"`, `{`, "{\"type\":\"pr.closed\",\"repo\":\"\xff\"}",
	} {
		f.Add([]byte(seed))
	}
	s := quickSigner()
	f.Fuzz(func(t *testing.T, b []byte) {
		typ, body, err := MarshalPayload(b)
		if err != nil {
			if !errors.Is(err, ErrMalformed) && !errors.Is(err, ErrUnknownType) {
				t.Fatalf("unclassified error: %v", err)
			}
			return
		}
		if !json.Valid(body) || !KnownType(typ) {
			t.Fatalf("accepted %q", b)
		}
		if len(body) > DefaultCeilings.EventBytes {
			return
		}
		raw, err := EncodeEvent(b, nil, "alice", time.Unix(1, 0), s)
		if err != nil {
			t.Fatal(err)
		}
		ev, err := Decode(raw, Ceilings{})
		if err != nil {
			t.Fatalf("own event refused: %v\n%s", err, raw)
		}
		if ev.Type != typ || string(ev.Payload) != string(body) {
			t.Fatalf("round trip changed the payload: %q -> %q", body, ev.Payload)
		}
	})
}

// FuzzCheckPayloadFast: the fast payload check accepts exactly what the
// token-by-token check accepts, with the same type and repository.
func FuzzCheckPayloadFast(f *testing.F) {
	for _, seed := range []string{
		`{"type":"pr.closed","repo":"r"}`,
		` { "type" : "pr.closed" , "repo":"r", "x": {"a":["}",1,{"b":"\""}]}, "n": -1.5e3 } `,
		`{"type":"pr.closed","repo":"r","Type":"x"}`,
		`{"type":"pr.\u0063losed","repo":"r","T\u00ffpe":1}`,
		`{"type":"","repo":"r"}`, `{"type":null,"repo":"r"}`, `{"TYPE":"a","repo":"r"}`,
		`{"type":"pr.closed","repo":"r"}{}`, `[]`, `null`, `{`, "{\"type\":\"pr.closed\",\"repo\":\"\xff\"}",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		typ, repo, ok := checkPayloadFast(b)
		styp, srepo, err := checkPayloadSlow(b)
		if ok != (err == nil) || ok && (typ != styp || repo != srepo) {
			t.Fatalf("%q: fast %q %q %v, slow %q %q %v", b, typ, repo, ok, styp, srepo, err)
		}
	})
}
