package queuerun

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/gitplus/gitplus/hubrefs/trust"
)

// TestAllStatsMemo: AllStats is Stats of every target; over unchanged hub
// refs it answers from the memo without reading the trust state, and a
// moved ref is a miss that counts the new event.
func TestAllStatsMemo(t *testing.T) {
	m := newMemoRepo(t)
	m.pass(0) // candidates for the three entries
	reads := 0
	trustOf := func() (*trust.State, error) { reads++; return m.r.Trust() }
	want := func() string {
		tr, err := m.r.Trust()
		if err != nil {
			t.Fatal(err)
		}
		st, err := Stats(m.gitDir, tr, "refs/heads/main", 0)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(st)
		return "[" + string(b) + "]"
	}
	got := func() string {
		all, err := AllStats(m.gitDir, trustOf)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(all)
		return string(b)
	}
	if g, w := got(), want(); g != w || reads != 1 {
		t.Fatalf("AllStats (%d trust reads):\n%s\nwant\n%s", reads, g, w)
	}
	if g, w := got(), want(); g != w || reads != 1 {
		t.Fatalf("AllStats over the same refs read the trust state again (%d reads) or differs:\n%s\nwant\n%s", reads, g, w)
	}
	rep, _, _ := m.pass(time.Minute)
	m.check(m.prs[0], "ci", rep.Chain[0].Commit)
	g, w := got(), want()
	if g != w || reads != 2 {
		t.Fatalf("after a check run (%d trust reads):\n%s\nwant\n%s", reads, g, w)
	}
	var all []struct {
		CheckRunsByConclusion map[string]int `json:"checkRunsByConclusion"`
	}
	if json.Unmarshal([]byte(g), &all) != nil || len(all) != 1 || all[0].CheckRunsByConclusion["success"] != 1 {
		t.Fatalf("the check run is not counted: %s", g)
	}
}
