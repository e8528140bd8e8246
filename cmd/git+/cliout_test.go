package main

import (
	"strings"
	"testing"
)

func TestCapEditApply(t *testing.T) {
	cases := []struct {
		name        string
		edit        capEdit
		have, want  []string
		errContains string
	}{
		{"add", capEdit{add: []string{"hub.review"}}, []string{"hub.pr"}, []string{"hub.pr", "hub.review"}, ""},
		{"add held", capEdit{add: []string{"hub.pr"}}, []string{"hub.pr"}, []string{"hub.pr"}, ""},
		{"remove", capEdit{remove: []string{"hub.pr"}}, []string{"hub.pr", "hub.queue"}, []string{"hub.queue"}, ""},
		{"remove and add", capEdit{add: []string{"hub.check:ci"}, remove: []string{"hub.pr"}}, []string{"hub.pr"}, []string{"hub.check:ci"}, ""},
		{"remove missing", capEdit{remove: []string{"hub.queue"}}, []string{"hub.pr"}, nil, "does not hold hub.queue"},
		{"remove last", capEdit{remove: []string{"hub.pr"}}, []string{"hub.pr"}, nil, "would hold no capability"},
	}
	for _, tc := range cases {
		got, err := tc.edit.apply("dev", tc.have)
		if tc.errContains != "" {
			if err == nil || !strings.Contains(err.Error(), tc.errContains) {
				t.Errorf("%s: err %v, want %q", tc.name, err, tc.errContains)
			}
			continue
		}
		if err != nil || strings.Join(got, " ") != strings.Join(tc.want, " ") {
			t.Errorf("%s: %v, %v; want %v", tc.name, got, err, tc.want)
		}
	}
}
