package hubrefs

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
)

// flatTypeNames are the event types whose payload type is flat, sorted.
func flatTypeNames() []string {
	var out []string
	for typ, t := range payloadTypes {
		if _, ok := flatTypes[t]; ok {
			out = append(out, typ)
		}
	}
	sort.Strings(out)
	return out
}

// TestFlatTypes: every pull request payload type is flat (decoded once),
// and the types holding slices or raw JSON are not (their folds decode
// them as before).
func TestFlatTypes(t *testing.T) {
	flat := map[string]bool{}
	for _, typ := range flatTypeNames() {
		flat[typ] = true
	}
	for _, typ := range []string{TypePROpened, TypePRUpdated, TypePRRetargeted, TypePRClosed, TypePRReopened, TypePRMerged,
		TypeReviewSubmit, TypeReviewDismiss, TypePRDraft, TypePRReady, TypePRBypassed, TypeThreadOpened, TypeThreadResolved, TypeCheckStarted, TypeCheckCompleted,
		TypeRepoCreated, TypeMemberRemoved, TypeQueueOpened, TypeQueueEntered, TypeQueueLeft, TypeQueueReset, TypeQueueClosed} {
		if !flat[typ] {
			t.Errorf("%s is not flat", typ)
		}
	}
	for _, typ := range []string{TypeMemberAdded, TypeMemberChanged, TypeRulesSet, TypeTeamSet, TypeQueueCandidate} {
		if flat[typ] {
			t.Errorf("%s is flat, but holds a slice or raw JSON", typ)
		}
	}
}

// randomValue is a JSON value of any kind, biased to the edges decodeFlat
// must leave to json.Unmarshal or must read exactly.
func randomValue(r *rand.Rand, depth int) string {
	switch r.IntN(16) {
	case 0:
		return "null"
	case 1:
		return []string{"true", "false"}[r.IntN(2)]
	case 2:
		return []string{"0", "-0", "7", "-12", "9223372036854775807", "9223372036854775808", "-9223372036854775809", "1.5", "1e3", "2E+1", "-0.0", "100000000000000000000"}[r.IntN(12)]
	case 3:
		if depth > 2 {
			return "{}"
		}
		return `{"name":` + randomValue(r, depth+1) + `,"key":` + randomValue(r, depth+1) + `}`
	case 4:
		if depth > 2 {
			return "[]"
		}
		return "[" + randomValue(r, depth+1) + "]"
	default:
		return randomString(r)
	}
}

// randomString is a JSON string literal, sometimes with escapes: control
// characters, quotes, \u escapes of HTML characters and of surrogates
// (paired and lone), and non-ASCII text.
func randomString(r *rand.Rand) string {
	parts := []string{"a", "main", "refs/heads/x", strings.Repeat("1", 40), "é", "日本", " ", `\n`, `\"`, `\\`, `\/`, `\u003c`, `\u0026`, `\ud83d\ude00`, `\ud800`, `\udc00x`, `\u0000`, `\t`}
	var b strings.Builder
	b.WriteByte('"')
	for n := r.IntN(5); n > 0; n-- {
		b.WriteString(parts[r.IntN(len(parts))])
	}
	b.WriteByte('"')
	return b.String()
}

// randomPayload is a payload of type typ: its "type" and "repo", and some
// of its declared keys (or, rarely, an escaped spelling of one) with values
// of any kind, in random order and spacing.
func randomPayload(r *rand.Rand, typ string) []byte {
	keys := schemaOf(payloadTypes[typ]).keys()
	sp := func() string { return []string{"", " ", "\n\t", "  "}[r.IntN(4)] }
	fields := []string{`"type":` + sp() + `"` + typ + `"`, `"repo":"r"`}
	for _, k := range keys {
		if k == "type" || k == "repo" || r.IntN(3) == 0 {
			continue
		}
		name := `"` + k + `"`
		if r.IntN(10) == 0 {
			name = `"\u00` + fmt.Sprintf("%x", k[0]) + k[1:] + `"`
		}
		fields = append(fields, name+sp()+":"+sp()+randomValue(r, 0))
	}
	r.Shuffle(len(fields), func(i, j int) { fields[i], fields[j] = fields[j], fields[i] })
	return []byte(sp() + "{" + sp() + strings.Join(fields, ","+sp()) + sp() + "}" + sp())
}

// checkTypedAgrees fails unless decodeTyped of payload b (of type typ)
// agrees with json.Unmarshal: no typed value when json.Unmarshal refuses
// b, else exactly json.Unmarshal's value. Payloads that fail the strict key
// check are not decodeTyped's to see and are skipped.
// It returns whether b was checked and whether json.Unmarshal refused it.
func checkTypedAgrees(t *testing.T, typ string, b []byte) (checked, refused bool) {
	t.Helper()
	rt := payloadTypes[typ]
	if checkKeys(b, schemaOf(rt)) != nil {
		return false, false
	}
	want := reflect.New(rt)
	werr := json.Unmarshal(b, want.Interface())
	got := decodeTyped(typ, b)
	if werr != nil {
		if got != nil {
			t.Fatalf("%s %s: json.Unmarshal refuses (%v), decodeTyped gave %+v", typ, b, werr, got.v.Elem())
		}
		return true, true
	}
	if got == nil {
		t.Fatalf("%s %s: json.Unmarshal accepts, decodeTyped gave nothing", typ, b)
	}
	if !reflect.DeepEqual(got.v.Interface(), want.Interface()) {
		t.Fatalf("%s %s: decodeTyped %+v, json.Unmarshal %+v", typ, b, got.v.Elem(), want.Elem())
	}
	// decodeFlat alone: when it takes the input, it must agree too.
	direct := reflect.New(rt)
	if _, ok := decodeFlat(b, skipSpace(b, 0), flatTypes[rt], direct.Elem()); ok && !reflect.DeepEqual(direct.Interface(), want.Interface()) {
		t.Fatalf("%s %s: decodeFlat %+v, json.Unmarshal %+v", typ, b, direct.Elem(), want.Elem())
	}
	return true, false
}

// TestDecodeFlatAgrees: over random payloads of every flat type, the value
// decoded at read time is json.Unmarshal's, and none is kept where
// json.Unmarshal refuses (the fold then meets the refusal itself).
func TestDecodeFlatAgrees(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 20))
	fast, checked, refused := 0, 0, 0
	for _, typ := range flatTypeNames() {
		for i := 0; i < 400; i++ {
			b := randomPayload(r, typ)
			c, ref := checkTypedAgrees(t, typ, b)
			if c {
				checked++
			}
			if ref {
				refused++
			}
			if _, ok := decodeFlat(b, skipSpace(b, 0), flatTypes[payloadTypes[typ]], reflect.New(payloadTypes[typ]).Elem()); ok {
				fast++
			}
		}
	}
	t.Logf("%d payloads checked, %d refused by json.Unmarshal, %d taken by decodeFlat", checked, refused, fast)
	if fast == 0 || refused == 0 || checked == refused {
		t.Fatal("the random payloads miss a case: the test would check nothing of it")
	}
	for _, tc := range []struct{ typ, in string }{
		{TypeCheckCompleted, `{"type":"check.completed","repo":"r","attempts":3}`},
		{TypeCheckCompleted, `{"type":"check.completed","repo":"r","attempts":"3"}`},
		{TypeCheckCompleted, `{"type":"check.completed","repo":"r","attempts":null}`},
		{TypeCheckCompleted, `{"type":"check.completed","repo":"r","attempts":1e2}`},
		{TypeQueueEntered, `{"type":"queue.entered","repo":"r","pr":null,"head":"x"}`},
		{TypeRepoCreated, `{"type":"repo.created","repo":"r","admin":{"name":"a","key":"k"}}`},
		{TypeRepoCreated, `{"type":"repo.created","repo":"r","admin":null}`},
		{TypeRepoCreated, `{"type":"repo.created","repo":"r","admin":{"name":1}}`},
		{TypePROpened, `{"type":"pr.opened","repo":"r","title":"a\u003cb\u0026\ud800"}`},
		{TypePROpened, `{"type":"pr.opened","r\u0065po":"r","type":"pr.opened"}`},
	} {
		checkTypedAgrees(t, tc.typ, []byte(tc.in))
	}
}

// FuzzDecodeFlat: decodeTyped agrees with json.Unmarshal on any payload
// that passes the strict key check of a flat type.
func FuzzDecodeFlat(f *testing.F) {
	r := rand.New(rand.NewPCG(1, 2))
	names := flatTypeNames()
	for i, typ := range names {
		f.Add(uint8(i), randomPayload(r, typ))
	}
	f.Add(uint8(0), []byte(`{"type":"check.completed","repo":"r","attempts":-9223372036854775808}`))
	f.Fuzz(func(t *testing.T, which uint8, b []byte) {
		checkTypedAgrees(t, names[int(which)%len(names)], b)
	})
}

// TestPayloadInto: for events decoded from their objects, PayloadInto
// gives exactly StrictUnmarshal's value and error, whether it answers from
// the value decoded at read time or decodes again (a non-flat type, a
// target of another type or not zero, a payload replaced since).
func TestPayloadInto(t *testing.T) {
	s := quickSigner()
	r := rand.New(rand.NewPCG(7, 8))
	answered := 0
	for i := 0; i < 300; i++ {
		names := flatTypeNames()
		typ := names[r.IntN(len(names))]
		if i%10 == 0 {
			typ = TypeMemberAdded
		}
		b := randomPayload(r, typ)
		raw, err := EncodeEvent(json.RawMessage(b), nil, "alice", time.Unix(int64(i), 0), s)
		if err != nil {
			continue // the strict checks refuse it before it is written
		}
		ev, err := Decode(raw, Ceilings{})
		if err != nil {
			t.Fatalf("%s: %v", b, err)
		}
		if ev.typed != nil {
			answered++
		}
		rt := payloadTypes[typ]
		for _, target := range []struct {
			name string
			ev   Event
			v    reflect.Value
		}{
			{"as read", ev, reflect.New(rt)},
			{"payload replaced", Event{Payload: bytes.Clone(ev.Payload), typed: ev.typed}, reflect.New(rt)},
			{"another type", ev, reflect.New(reflect.TypeOf(Base{}))},
			{"not zero", ev, func() reflect.Value {
				v := reflect.New(rt)
				if f := v.Elem().Field(0); f.Kind() == reflect.String {
					f.SetString("x")
				} else {
					f.Set(reflect.ValueOf(Base{Type: "x", Repo: "y"}))
				}
				return v
			}()},
		} {
			want := reflect.New(target.v.Type().Elem())
			want.Elem().Set(target.v.Elem())
			werr := StrictUnmarshal(ev.Payload, want.Interface())
			gerr := target.ev.PayloadInto(target.v.Interface())
			if fmt.Sprint(gerr) != fmt.Sprint(werr) {
				t.Fatalf("%s %s: PayloadInto error %v, StrictUnmarshal %v", target.name, b, gerr, werr)
			}
			if werr == nil && !reflect.DeepEqual(target.v.Interface(), want.Interface()) {
				t.Fatalf("%s %s: PayloadInto %+v, StrictUnmarshal %+v", target.name, b, target.v.Elem(), want.Elem())
			}
		}
	}
	if answered == 0 {
		t.Fatal("no event kept a decoded payload: the test checks nothing of it")
	}
	// Targets StrictUnmarshal refuses are refused alike.
	raw, err := EncodeEvent(PRUpdated{Base: Base{Type: TypePRUpdated, Repo: "r"}, Head: "h"}, nil, "alice", time.Unix(1, 0), s)
	if err != nil {
		t.Fatal(err)
	}
	upd, err := Decode(raw, Ceilings{})
	if err != nil || upd.typed == nil {
		t.Fatalf("decode: %v, typed %v", err, upd.typed)
	}
	var nilPtr *PRUpdated
	for _, v := range []any{nil, PRUpdated{}, nilPtr} {
		gerr, werr := upd.PayloadInto(v), StrictUnmarshal(upd.Payload, v)
		if gerr == nil || fmt.Sprint(gerr) != fmt.Sprint(werr) {
			t.Fatalf("PayloadInto(%T) = %v, StrictUnmarshal %v", v, gerr, werr)
		}
	}
	// An event not decoded from an object (built in memory) decodes as before.
	ev := Event{ID: plumbing.ZeroHash, Type: TypePRClosed, Payload: json.RawMessage(`{"type":"pr.closed","repo":"r"}`)}
	var v Base
	if err := ev.PayloadInto(&v); err != nil || v.Type != TypePRClosed {
		t.Fatalf("in-memory event: %v %+v", err, v)
	}
}

// TestKeySetMany: repeated keys are found past the few keySet compares in
// place, whether the repeat is of an early or a late key.
func TestKeySetMany(t *testing.T) {
	obj := func(keys ...int) string {
		var parts []string
		for _, k := range keys {
			parts = append(parts, fmt.Sprintf(`"k%d":%d`, k, k))
		}
		return `{"type":"rules.set","repo":"r","rules":{` + strings.Join(parts, ",") + `}}`
	}
	seq := func(n int) []int {
		out := make([]int, n)
		for i := range out {
			out[i] = i
		}
		return out
	}
	for _, tc := range []struct {
		name string
		in   string
		ok   bool
	}{
		{"11 keys", obj(seq(11)...), true},
		{"12 keys", obj(seq(12)...), true},
		{"40 keys", obj(seq(40)...), true},
		{"repeat within the few", obj(append(seq(10), 3)...), false},
		{"repeat of the 12th as the 13th", obj(append(seq(12), 11)...), false},
		{"early key repeated late", obj(append(seq(30), 2)...), false},
		{"late key repeated later", obj(append(seq(30), 25)...), false},
	} {
		var v RulesSet
		if err := StrictUnmarshal([]byte(tc.in), &v); (err == nil) != tc.ok {
			t.Errorf("%s: %v, want ok=%v", tc.name, err, tc.ok)
		}
	}
}
