package hubrefs

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/matryer/is"
)

// h makes a recognisable id: the byte repeated.
func h(b byte) plumbing.Hash {
	var x plumbing.Hash
	for i := range x {
		x[i] = b
	}
	return x
}

func ev(id byte, t int64, parents ...byte) Event {
	e := Event{ID: h(id), Time: t}
	for _, p := range parents {
		e.Parents = append(e.Parents, h(p))
	}
	return e
}

func ids(evs []Event) string {
	var b strings.Builder
	for _, e := range evs {
		b.WriteString(e.ID.String()[:2] + " ")
	}
	return strings.TrimSpace(b.String())
}

func TestCausalOrder(t *testing.T) {
	cases := []struct {
		name string
		in   []Event
		want string
	}{
		{"empty", nil, ""},
		{"chain given backwards", []Event{ev(3, 1, 2), ev(2, 1, 1), ev(1, 1)}, "01 02 03"},
		// diamond: root 01; 0b and 0a both at t=5 (tie broken by id: 0a first); join 0f
		{"diamond tie by id", []Event{ev(0x0f, 9, 0x0b, 0x0a), ev(0x0b, 5, 1), ev(0x0a, 5, 1), ev(1, 0)}, "01 0a 0b 0f"},
		// same diamond, time decides before id
		{"diamond by time", []Event{ev(0x0f, 9, 0x0a, 0x0b), ev(0x0b, 4, 1), ev(0x0a, 5, 1), ev(1, 0)}, "01 0b 0a 0f"},
		// a child becomes ready and beats an older-ready event on time
		{"ready set, not global sort", []Event{ev(1, 10), ev(2, 100, 1), ev(3, 50, 1), ev(4, 1, 3)}, "01 03 04 02"},
		// a child with an earlier (untrusted) time than its parent still follows it
		{"parents first despite time", []Event{ev(1, 100), ev(2, 1, 1)}, "01 02"},
		// parents outside the set count as delivered
		{"suffix", []Event{ev(5, 3, 4), ev(6, 2, 0x99)}, "06 05"},
		{"join of three", []Event{ev(9, 0, 2, 3, 4), ev(4, 0, 1), ev(3, 0, 1), ev(2, 0, 1), ev(1, 0)}, "01 02 03 04 09"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			in := append([]Event(nil), tc.in...)
			got, err := CausalOrder(in)
			if err != nil {
				t.Fatal(err)
			}
			if ids(got) != tc.want {
				t.Fatalf("got %q, want %q", ids(got), tc.want)
			}
			if ids(in) != ids(tc.in) {
				t.Fatal("input modified")
			}
		})
	}
	if _, err := CausalOrder([]Event{ev(1, 0, 2), ev(2, 0, 1)}); !errors.Is(err, ErrMalformed) {
		t.Fatalf("cycle: %v", err)
	}
	if _, err := CausalOrder([]Event{ev(1, 0), ev(1, 0)}); !errors.Is(err, ErrMalformed) {
		t.Fatalf("duplicate: %v", err)
	}
}

var putSeq int

// put writes a distinct event into st and returns its id.
func put(t testing.TB, st *memStore, when int64, parents ...plumbing.Hash) plumbing.Hash {
	t.Helper()
	putSeq++
	payload := json.RawMessage(fmt.Sprintf(`{"type":"thread.opened","repo":"r","thread":"t%d"}`, putSeq))
	obj, err := NewEvent(payload, parents, "alice", time.Unix(when, 0), quickSigner())
	if err != nil {
		t.Fatal(err)
	}
	id, _ := st.SetEncodedObject(obj)
	return id
}

func TestReadLog(t *testing.T) {
	is := is.New(t)
	st := newMemStore()
	root := put(t, st, 10)
	a := put(t, st, 20, root)
	b := put(t, st, 20, root)
	c := put(t, st, 15, a)
	join := put(t, st, 30, c, b)
	tip := put(t, st, 40, join)

	got, err := ReadLog(st, tip, Ceilings{})
	is.NoErr(err)
	is.Equal(len(got), 6)
	// a and b are ready together at t=20: the smaller id goes first; c
	// (t=15) becomes ready after a and then beats b on time.
	want := []plumbing.Hash{root, a, c, b, join, tip}
	if string(b[:]) < string(a[:]) {
		want = []plumbing.Hash{root, b, a, c, join, tip}
	}
	for i, e := range got {
		is.Equal(e.ID, want[i])
		is.True(e.Signer != nil)
	}

	none, err := ReadLog(st, plumbing.ZeroHash, Ceilings{})
	is.NoErr(err)
	is.Equal(len(none), 0)

	// a log's ceiling
	_, err = ReadLog(st, tip, Ceilings{EventsPerRef: 5})
	is.True(errors.Is(err, ErrCeiling))
	_, err = ReadLog(st, tip, Ceilings{EventsPerRef: 6})
	is.NoErr(err)

	// a missing parent is named
	lost := h(0x77)
	orphan := put(t, st, 50, tip, lost)
	_, err = ReadLog(st, orphan, Ceilings{})
	is.True(errors.Is(err, ErrMissing))
	is.True(strings.Contains(err.Error(), lost.String()))
	is.True(strings.Contains(err.Error(), orphan.String()))

	// a parent that is not an event fails the read
	blob := st.putRaw(plumbing.BlobObject, []byte("x"))
	_, err = ReadLog(st, put(t, st, 50, tip, blob), Ceilings{})
	is.True(errors.Is(err, ErrMalformed))

	// an unsigned commit deep in the log fails the read
	unsigned := st.putRaw(plumbing.CommitObject, unsignedBody(EmptyTree.String(), []string{root.String()}, "pr.closed\n\n{\"type\":\"pr.closed\",\"repo\":\"r\"}\n"))
	_, err = ReadLog(st, put(t, st, 60, tip, unsigned), Ceilings{})
	is.True(errors.Is(err, ErrUnsigned))
	is.True(strings.Contains(err.Error(), unsigned.String()))
}

func TestReadNew(t *testing.T) {
	is := is.New(t)
	st := newMemStore()
	root := put(t, st, 10)
	a := put(t, st, 20, root)
	b := put(t, st, 30, a)
	side := put(t, st, 25, root) // branches off before a
	join := put(t, st, 40, b, side)
	next := put(t, st, 50, join)

	cases := []struct {
		name     string
		old, new plumbing.Hash
		want     []plumbing.Hash
	}{
		{"new ref", plumbing.ZeroHash, a, []plumbing.Hash{root, a}},
		{"no change", b, b, nil},
		{"one append", a, b, []plumbing.Hash{b}},
		{"join bringing a side branch", b, next, []plumbing.Hash{side, join, next}},
		{"side already known", side, next, []plumbing.Hash{a, b, join, next}},
	}
	for _, tc := range cases {
		got, err := ReadNew(st, tc.old, tc.new, Ceilings{})
		is.NoErr(err)
		is.Equal(len(got), len(tc.want)) // tc.name
		for i := range got {
			is.Equal(got[i].ID, tc.want[i]) // tc.name
		}
	}

	_, err := ReadNew(st, b, side, Ceilings{})
	is.True(errors.Is(err, ErrNotForward))
	_, err = ReadNew(st, next, b, Ceilings{})
	is.True(errors.Is(err, ErrNotForward))

	// reading new events verifies them: a bad one after old fails
	bad := st.putRaw(plumbing.CommitObject, unsignedBody(EmptyTree.String(), []string{next.String()}, "pr.closed\n\n{\"type\":\"pr.closed\",\"repo\":\"r\"}\n"))
	_, err = ReadNew(st, next, bad, Ceilings{})
	is.True(errors.Is(err, ErrUnsigned))
	_, err = ReadNew(st, next, put(t, st, 70, bad), Ceilings{})
	is.True(errors.Is(err, ErrUnsigned))
}
