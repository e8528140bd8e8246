package repo

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"
)

// pr merge's report: the result names a squash step and the source
// branch; the JSON document is the one the verb always printed (the keys
// of a map, in name order).
func TestMergeView(t *testing.T) {
	head := plumbing.NewHash("1111111111111111111111111111111111111111")
	m := &Merged{ID: "p1", Branch: "refs/heads/main", Head: head, Pushed: true, Result: "merged",
		Squash: plumbing.NewHash("2222222222222222222222222222222222222222"), SourceDeleted: "refs/heads/topic"}
	v := m.View(nil)
	var b strings.Builder
	v.WriteText(&b)
	want := "p1 main " + head.String() + ": merged as squash step 2222222222222222222222222222222222222222; deleted its source branch refs/heads/topic (deleteSourceBranch)\n"
	if b.String() != want {
		t.Fatalf("text %q\nwant %q", b.String(), want)
	}
	got, _ := json.Marshal(v)
	old, _ := json.Marshal(map[string]any{"pr": "p1", "branch": "refs/heads/main", "commit": head.String(), "pushed": true, "result": v.Result,
		"undelivered": []string{}})
	if string(got) != string(old) {
		t.Fatalf("json %s\nwant %s", got, old)
	}
	b.Reset()
	(&Merged{ID: "p1", Branch: "refs/heads/main", Head: head, Result: "already merged", SourceNote: "kept"}).View([]string{"mirror m"}).WriteText(&b)
	if !strings.HasSuffix(b.String(), ": already merged; kept\nundelivered: mirror m\n") {
		t.Fatalf("text %q", b.String())
	}
}
