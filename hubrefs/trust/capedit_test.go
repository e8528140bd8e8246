package trust

import (
	"errors"
	"strings"
	"testing"
)

func TestCapEditApply(t *testing.T) {
	cases := []struct {
		name        string
		edit        CapEdit
		have, want  []string
		errContains string
	}{
		{"add", CapEdit{Add: []string{"hub.review"}}, []string{"hub.pr"}, []string{"hub.pr", "hub.review"}, ""},
		{"add held", CapEdit{Add: []string{"hub.pr"}}, []string{"hub.pr"}, []string{"hub.pr"}, ""},
		{"remove", CapEdit{Remove: []string{"hub.pr"}}, []string{"hub.pr", "hub.queue"}, []string{"hub.queue"}, ""},
		{"remove and add", CapEdit{Add: []string{"hub.check:ci"}, Remove: []string{"hub.pr"}}, []string{"hub.pr"}, []string{"hub.check:ci"}, ""},
		{"remove missing", CapEdit{Remove: []string{"hub.queue"}}, []string{"hub.pr"}, nil, "does not hold hub.queue"},
		{"remove last", CapEdit{Remove: []string{"hub.pr"}}, []string{"hub.pr"}, nil, "would hold no capability"},
	}
	for _, tc := range cases {
		got, err := tc.edit.Apply("dev", tc.have)
		if tc.errContains != "" {
			if err == nil || !strings.Contains(err.Error(), tc.errContains) || !errors.Is(err, ErrCapEdit) {
				t.Errorf("%s: err %v, want %q wrapping ErrCapEdit", tc.name, err, tc.errContains)
			}
			continue
		}
		if err != nil || strings.Join(got, " ") != strings.Join(tc.want, " ") {
			t.Errorf("%s: %v, %v; want %v", tc.name, got, err, tc.want)
		}
	}
}

func TestCapEditValidate(t *testing.T) {
	var ce *CapEditError
	if err := (CapEdit{Add: []string{"hub.pr"}, Remove: []string{"hub.pr"}}).Validate(); !errors.As(err, &ce) || ce.Conflict != "hub.pr" {
		t.Errorf("add and remove hub.pr: %v, want a conflict on hub.pr", err)
	}
	if err := (CapEdit{Add: []string{"hub.bogus"}}).Validate(); !errors.Is(err, ErrUnknownCap) {
		t.Errorf("hub.bogus: %v, want ErrUnknownCap", err)
	}
	if err := (CapEdit{Add: []string{"hub.check:ci"}, Remove: []string{"hub.pr"}}).Validate(); err != nil {
		t.Errorf("a valid edit: %v", err)
	}
	if got := CapList([]string{"hub.review", "hub.pr"}); got != "hub.pr hub.review" {
		t.Errorf("CapList = %q", got)
	}
	if got := CapList(nil); got != "none" {
		t.Errorf("CapList(nil) = %q", got)
	}
}
