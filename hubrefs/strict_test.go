package hubrefs

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"reflect"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

func TestStrictUnmarshal(t *testing.T) {
	cases := []struct {
		name, in string
		ok       bool
	}{
		{"exact", `{"type":"member.added","repo":"r","name":"m","key":"k","caps":["hub.pr"]}`, true},
		{"escaped exact key", `{"type":"member.added","repo":"r","name":"m","key":"k","c\u0061ps":["hub.pr"]}`, true},
		{"null value", `{"type":"member.added","repo":"r","name":"m","key":"k","caps":null}`, true},
		{"absent field", `{"type":"member.added","repo":"r"}`, true},
		// attack 7 of issue #14: ſ folds to s in encoding/json
		{"unicode-folded key", `{"type":"member.added","repo":"r","name":"m","key":"k","caps":["hub.pr"],"capſ":["repo.admin"]}`, false},
		{"unicode-folded key alone", `{"type":"member.added","repo":"r","capſ":["repo.admin"]}`, false},
		{"kelvin sign folds to k", `{"type":"member.added","repo":"r","\u212aey":"k"}`, false},
		{"case-folded key", `{"type":"member.added","repo":"r","Caps":["repo.admin"]}`, false},
		{"repeated key", `{"type":"member.added","repo":"r","caps":["hub.pr"],"caps":["repo.admin"]}`, false},
		{"repeated after unescape", `{"type":"member.added","repo":"r","caps":[],"c\u0061ps":["repo.admin"]}`, false},
		{"unknown key", `{"type":"member.added","repo":"r","extra":1}`, false},
		{"invalid utf-8", "{\"type\":\"member.added\",\"repo\":\"r\xff\"}", false},
		{"not json", `{"type":`, false},
		{"trailing data", `{"type":"member.added","repo":"r"} {}`, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var p MemberAdded
			err := StrictUnmarshal([]byte(tc.in), &p)
			if (err == nil) != tc.ok {
				t.Fatalf("StrictUnmarshal(%s) = %v, want ok=%v", tc.in, err, tc.ok)
			}
			if err != nil && !errors.Is(err, ErrMalformed) {
				t.Fatalf("error %v does not wrap ErrMalformed", err)
			}
		})
	}
	// nested: repo.created's admin object and rules.set's rules (free keys,
	// but no repeated key at any level)
	nested := []struct {
		name string
		v    any
		in   string
		ok   bool
	}{
		{"admin exact", &RepoCreated{}, `{"type":"repo.created","repo":"r","admin":{"name":"a","key":"k"}}`, true},
		{"admin unknown key", &RepoCreated{}, `{"type":"repo.created","repo":"r","admin":{"name":"a","kEy":"k"}}`, false},
		{"admin repeated key", &RepoCreated{}, `{"type":"repo.created","repo":"r","admin":{"name":"a","name":"b"}}`, false},
		{"rules free keys", &RulesSet{}, `{"type":"rules.set","repo":"r","rules":{"protected":{"refs/heads/main":{}},"zzz":1}}`, true},
		{"rules repeated deep", &RulesSet{}, `{"type":"rules.set","repo":"r","rules":{"protected":{"refs/heads/main":{"requiredApprovals":1,"requiredApprovals":0}}}}`, false},
		{"rules repeated in array", &RulesSet{}, `{"type":"rules.set","repo":"r","rules":{"a":[{"x":1,"x":2}]}}`, false},
		{"candidate parents", &QueueCandidate{}, `{"type":"queue.candidate","repo":"r","parents":["a","b"]}`, true},
	}
	for _, tc := range nested {
		t.Run(tc.name, func(t *testing.T) {
			if err := StrictUnmarshal([]byte(tc.in), tc.v); (err == nil) != tc.ok {
				t.Fatalf("StrictUnmarshal(%s) = %v, want ok=%v", tc.in, err, tc.ok)
			}
		})
	}
}

// TestDecodeStrictKeys: Decode refuses a signed event whose payload holds a
// key its type does not declare, so no fold ever sees one.
func TestDecodeStrictKeys(t *testing.T) {
	s := quickSigner()
	good := `{"type":"member.added","repo":"r","name":"m","key":"k","caps":["hub.pr"]}`
	bad := `{"type":"member.added","repo":"r","name":"m","key":"k","caps":["hub.pr"],"capſ":["repo.admin"]}`
	// an encoder that skips MarshalPayload's checks, as an attacker's would
	enc := func(payload string) []byte {
		raw, err := EncodeRawEvent(TypeMemberAdded, []byte(payload), nil, "x", time.Unix(1, 0), s)
		if err != nil {
			t.Fatal(err)
		}
		return raw
	}
	if _, err := Decode(enc(good), Ceilings{}); err != nil {
		t.Fatalf("exact payload refused: %v", err)
	}
	if _, err := Decode(enc(bad), Ceilings{}); !errors.Is(err, ErrMalformed) || !strings.Contains(err.Error(), "capſ") {
		t.Fatalf("folded key accepted or not named: %v", err)
	}
	if _, _, err := MarshalPayload(json.RawMessage(bad)); !errors.Is(err, ErrMalformed) {
		t.Fatalf("MarshalPayload wrote a folded key: %v", err)
	}
}

// fuzzT exercises every schema shape: embedded struct, nested struct,
// array of structs, map of structs, free (RawMessage) value.
type fuzzT struct {
	Base
	Caps  []string           `json:"caps"`
	Admin Admin              `json:"admin"`
	List  []Admin            `json:"list"`
	M     map[string]Admin   `json:"m"`
	Raw   json.RawMessage    `json:"raw"`
	Any   map[string][]Admin `json:"any,omitempty"`
}

// refExact is an independent reference for the strict rule, on
// encoding/json's token stream: valid UTF-8, one JSON value, and every
// object's keys unique and, where the shape says so, from the declared set.
func refExact(b []byte) bool {
	if !utf8.Valid(b) {
		return false
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	top := map[string]string{"type": "", "repo": "", "caps": "free", "admin": "admin", "list": "admins", "m": "mapAdmin", "raw": "free", "any": "mapAdmins"}
	admin := map[string]string{"name": "", "key": ""}
	var value func(kind string) bool
	object := func(keys map[string]string, mapOf string) bool {
		seen := map[string]bool{}
		for dec.More() {
			tok, err := dec.Token()
			if err != nil {
				return false
			}
			k := tok.(string)
			if seen[k] {
				return false
			}
			seen[k] = true
			sub := "free"
			if keys != nil {
				s, ok := keys[k]
				if !ok {
					return false
				}
				sub = s
			} else if mapOf != "" {
				sub = mapOf
			}
			if !value(sub) {
				return false
			}
		}
		tok, err := dec.Token()
		return err == nil && tok == json.Delim('}')
	}
	value = func(kind string) bool {
		tok, err := dec.Token()
		if err != nil {
			return false
		}
		switch tok {
		case json.Delim('{'):
			switch kind {
			case "top":
				return object(top, "")
			case "admin":
				return object(admin, "")
			case "mapAdmin":
				return object(nil, "admin")
			case "mapAdmins":
				return object(nil, "admins")
			}
			return object(nil, "")
		case json.Delim('['):
			elem := "free"
			if kind == "admins" {
				elem = "admin"
			}
			for dec.More() {
				if !value(elem) {
					return false
				}
			}
			tok, err := dec.Token()
			return err == nil && tok == json.Delim(']')
		}
		return true
	}
	if !value("top") {
		return false
	}
	_, err := dec.Token()
	return err == io.EOF
}

// FuzzStrictPayload: StrictUnmarshal never panics; what it accepts has
// exact keys (per the reference) and decodes exactly as plain encoding/json
// does; an exact-key input plain encoding/json decodes, it accepts.
func FuzzStrictPayload(f *testing.F) {
	for _, seed := range []string{
		`{"type":"t","repo":"r","caps":["a"],"admin":{"name":"n","key":"k"}}`,
		`{"type":"t","caps":[],"capſ":["x"]}`,
		`{"type":"t","type":"u"}`,
		`{"TYPE":"t"}`,
		`{"list":[{"name":"a"},{"name":"b","name":"c"}],"m":{"x":{"key":"k"},"y":{"Key":"k"}}}`,
		`{"raw":{"a":{"b":[1,{"c":2,"c":3}]}}}`,
		`{"any":{"x":[{"name":"n"}]},"admin":null}`,
		`{"ty\u0070e":"t","adm\u0131n":{}}`,
		"{\"repo\":\"\xff\"}", `[]`, `null`, `{`, `{} {}`, `{"a":1}`, ` {"type" : "t" } `,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var strict fuzzT
		err := StrictUnmarshal(b, &strict)
		exact := refExact(b)
		var plain fuzzT
		perr := json.Unmarshal(b, &plain)
		if err == nil {
			if !exact {
				t.Fatalf("accepted %q, which has an unknown or repeated key", b)
			}
			if perr != nil || !reflect.DeepEqual(strict, plain) {
				t.Fatalf("%q: strict %+v, plain %+v (%v)", b, strict, plain, perr)
			}
		} else if exact && perr == nil {
			t.Fatalf("refused exact-key input %q: %v", b, err)
		}
	})
}
