package pr

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/gitplus/gitplus/hubrefs"
	"github.com/gitplus/gitplus/hubrefs/trust"
)

// check.completed's "sandbox" (docs/events.md): the values a worker
// records, and nothing else, on check.completed only.
func TestSandboxField(t *testing.T) {
	for _, tt := range []struct {
		typ, sandbox string
		ok           bool
	}{
		{hubrefs.TypeCheckCompleted, "landlock-7", true},
		{hubrefs.TypeCheckCompleted, "landlock-1", true},
		{hubrefs.TypeCheckCompleted, "landlock-11", true},
		{hubrefs.TypeCheckCompleted, "landlock-7+reads", true},
		{hubrefs.TypeCheckCompleted, "landlock-+reads", false},
		{hubrefs.TypeCheckCompleted, "landlock-7+reads+reads", false},
		{hubrefs.TypeCheckCompleted, "landlock-7+read", false},
		{hubrefs.TypeCheckCompleted, "env-only+reads", false},
		{hubrefs.TypeCheckCompleted, "off+reads", false},
		{hubrefs.TypeCheckCompleted, "+reads", false},
		{hubrefs.TypeCheckCompleted, "env-only", true},
		{hubrefs.TypeCheckCompleted, "off", true},
		{hubrefs.TypeCheckCompleted, "landlock-0", false},
		{hubrefs.TypeCheckCompleted, "landlock-07", false},
		{hubrefs.TypeCheckCompleted, "landlock-", false},
		{hubrefs.TypeCheckCompleted, "landlock-123", false},
		{hubrefs.TypeCheckCompleted, "landlock-7 ", false},
		{hubrefs.TypeCheckCompleted, "Landlock-7", false},
		{hubrefs.TypeCheckCompleted, "on", false},
		{hubrefs.TypeCheckStarted, "landlock-7", false},
	} {
		c := hubrefs.Check{Base: hubrefs.Base{Type: tt.typ, Repo: repoID}, Name: "ci", Head: h1, Sandbox: tt.sandbox}
		if tt.typ == hubrefs.TypeCheckCompleted {
			c.Conclusion = Success
		}
		p, err := decode(hubrefs.Event{ID: id("x"), Type: tt.typ, Payload: mustJSON(t, c)}, repoID)
		switch {
		case tt.ok && (err != nil || p.sandbox != tt.sandbox):
			t.Errorf("%s %q: %v", tt.typ, tt.sandbox, err)
		case !tt.ok && !errors.Is(err, ErrMalformed):
			t.Errorf("%s %q accepted: %v", tt.typ, tt.sandbox, err)
		}
	}
}

// ChecksOn under requireSandbox counts the latest confined conclusion.
func TestChecksOnRequireSandbox(t *testing.T) {
	for _, v := range []string{"landlock-7", "landlock-7+reads", "landlock-1+reads"} {
		if !Confined(v) {
			t.Errorf("Confined(%q) = false", v)
		}
	}
	for _, v := range []string{"", "off", "env-only"} {
		if Confined(v) {
			t.Errorf("Confined(%q) = true", v)
		}
	}
	s := &State{Checks: map[CheckKey]string{{"ci", h1}: Failure, {"lint", h1}: Success}, Confined: map[CheckKey]string{{"ci", h1}: Success}}
	b := trust.Branch{RequiredChecks: []string{"ci", "lint"}}
	if v := s.ChecksOn(b, h1); len(v.Failed) != 1 || v.Failed[0] != "ci" || len(v.Passed) != 1 {
		t.Errorf("without the rule: %+v", v)
	}
	b.RequireSandbox = true
	if v := s.ChecksOn(b, h1); len(v.Passed) != 1 || v.Passed[0] != "ci" || len(v.Missing) != 1 || v.Missing[0] != "lint" {
		t.Errorf("with requireSandbox: %+v", v)
	}
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
