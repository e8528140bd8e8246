package main

import (
	"errors"
	"strings"
	"testing"
)

func TestMatchPrefix(t *testing.T) {
	ids := []string{
		"01a23af3-1111-7000-8000-000000000001",
		"01a23af3-1112-7000-8000-000000000002",
		"01a23af4-0000-7000-8000-000000000003",
	}
	cases := []struct {
		prefix string
		want   string
		err    error
	}{
		{"01a23af4", ids[2], nil},
		{"01a23af3-1111", ids[0], nil},
		{ids[1], ids[1], nil},
		{"01a23af3", "", ErrAmbiguousID},
		{"01a2", "", ErrAmbiguousID},
		{"ffff", "", ErrUnknownID},
	}
	for _, tc := range cases {
		got, err := matchPrefix(ids, tc.prefix, "pull request", "repo.git")
		if !errors.Is(err, tc.err) || got != tc.want {
			t.Errorf("matchPrefix(%q) = %q, %v; want %q, %v", tc.prefix, got, err, tc.want, tc.err)
		}
		if errors.Is(err, ErrAmbiguousID) && (!strings.Contains(err.Error(), ids[0]) || !strings.Contains(err.Error(), ids[1])) {
			t.Errorf("ambiguity %q does not list the matches", err)
		}
	}
}

func TestValidPrefix(t *testing.T) {
	for s, ok := range map[string]bool{
		"01a2": true, "01A2-b": true, "01a": false, "": false, "01a2x": false, "../x": false,
		"01a23af3-1111-7000-8000-0000000000011": false, // longer than a UUID
	} {
		if err := validPrefix(s); (err == nil) != ok {
			t.Errorf("validPrefix(%q) = %v, want ok=%v", s, err, ok)
		}
	}
}

// FuzzMatchPrefix: a match is one of the ids and starts with the prefix;
// no match or an ambiguity is an error.
func FuzzMatchPrefix(f *testing.F) {
	f.Add("01a2", "01a23af3-1111-7000-8000-000000000001", "01a23af4-0000-7000-8000-000000000003")
	f.Fuzz(func(t *testing.T, p, a, b string) {
		got, err := matchPrefix([]string{a, b}, p, "queue", "x")
		if err != nil {
			return
		}
		if got != a && got != b || !strings.HasPrefix(got, p) {
			t.Fatalf("matchPrefix(%q) = %q", p, got)
		}
		if a != b && strings.HasPrefix(a, p) && strings.HasPrefix(b, p) {
			t.Fatalf("matchPrefix(%q) picked %q of two matches", p, got)
		}
	})
}
