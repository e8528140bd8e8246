package repo

import (
	"strings"
	"testing"
)

// pr show says why a pull request left its queue once: a detail that
// already begins with the reason is not wrapped in it again.
func TestPRViewLeftWording(t *testing.T) {
	for _, tc := range []struct{ reason, detail, want string }{
		{"failed", "failed: ci at abc", "left the queue for main: failed: ci at abc\n"},
		{"withdrawn", "left by q", "left the queue for main: withdrawn (left by q)\n"},
		{"stale", "", "left the queue for main: stale\n"},
	} {
		var b strings.Builder
		PRView{ID: "x", Queue: &PRQueue{Target: "main", State: "left", Reason: tc.reason, Detail: tc.detail}}.WriteText(&b)
		if !strings.Contains(b.String(), "queue:     "+tc.want) {
			t.Errorf("reason %q detail %q: pr show says\n%s\nwant the line %q", tc.reason, tc.detail, b.String(), tc.want)
		}
	}
}
