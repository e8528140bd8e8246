package sourcebranch

import (
	"context"
	"strings"
	"testing"

	"github.com/gitplus/gitplus/hubrefs/trust"
)

// TestDeleteKeeps: what Delete keeps without pushing: rules that do not
// ask, no source, a protected source, the base itself.
func TestDeleteKeeps(t *testing.T) {
	r, err := trust.ParseRulesStrict([]byte(`{"protected":{"refs/heads/main":{"deleteSourceBranch":true},"refs/heads/release/*":{},"refs/heads/dev":{}}}`))
	if err != nil {
		t.Fatal(err)
	}
	head := strings.Repeat("a", 40)
	p := Push{GitDir: t.TempDir(), Remote: "/nonexistent"} // any push would fail
	for _, c := range []struct{ base, source, note string }{
		{"refs/heads/dev", "refs/heads/topic", ""}, // dev does not ask
		{"refs/heads/main", "", ""},                // no source recorded
		{"refs/heads/main", "refs/heads/release/1", "kept refs/heads/release/1: the rules protect it"},
		{"refs/heads/main", "refs/heads/main", "kept refs/heads/main: not a branch other than refs/heads/main"},
	} {
		ok, note := Delete(context.Background(), p, r, c.base, c.source, head)
		if ok || note != c.note {
			t.Errorf("Delete(%s, %s) = %v, %q; want false, %q", c.base, c.source, ok, note, c.note)
		}
	}
}
