package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/gitplus/gitplus/fixtures"
)

// TestQueuePriority: a pull request entered last with --priority high is
// chained first and lands first; entering a queued one again with
// --priority high moves it ahead of the normal ones without evicting anyone
// (docs/queue.md, "Priority"), and the hook accepts both events.
func TestQueuePriority(t *testing.T) {
	t.Parallel()
	e := newHubEnv(t, "admin", "dev", "rev", "ci", "q")
	bare, ids := queueSetup(t, e, 3, "", "", "high")
	c0 := strings.TrimSpace(fixtures.Git(t, bare, "rev-parse", "main"))

	var show queueJSON
	if err := json.Unmarshal([]byte(e.ok(bare, "", "queue", "show", "--target", "main", "--json")), &show); err != nil {
		t.Fatal(err)
	}
	order := func() string {
		var s []string
		for _, a := range show.Active {
			s = append(s, a.PR+":"+a.Priority)
		}
		return strings.Join(s, " ")
	}
	if want := ids[2] + ":high " + ids[0] + ":normal " + ids[1] + ":normal"; order() != want {
		t.Fatalf("queue show order %s, want %s", order(), want)
	}

	// Pass 1 chains the high one on the tip, then the normal ones.
	rep := queueRunJSON(t, e, bare)
	if len(rep.Published) != 3 || rep.Published[0].PR != ids[2] || rep.Published[0].Parents[0] != c0 ||
		rep.Published[1].PR != ids[0] || rep.Published[2].PR != ids[1] {
		t.Fatalf("pass 1 published %+v", rep.Published)
	}
	ci := func(id string) {
		t.Helper()
		e.ok(bare, "ci", "check", "run", "--pr", id, "--rev", "queue/main/"+id, "--name", "ci", "--", "true")
	}
	// CI passes the first candidate only: it lands alone, ahead of the two
	// entered before it.
	ci(ids[2])
	rep = queueRunJSON(t, e, bare)
	if len(rep.Landed) != 1 || rep.Landed[0].PR != ids[2] || len(rep.Evicted) != 0 {
		t.Fatalf("pass 2 landed %+v evicted %+v", rep.Landed, rep.Evicted)
	}
	tip := strings.TrimSpace(fixtures.Git(t, bare, "rev-parse", "main"))
	if tip != rep.Commit || strings.TrimSpace(fixtures.Git(t, bare, "rev-parse", tip+"^2")) != rep.Landed[0].Head {
		t.Fatalf("main is %s, want the candidate of %s (%s)", tip, ids[2], rep.Commit)
	}

	// The second normal entry is raised to high: the next pass rebuilds the
	// chain with it first, evicting nobody.
	_, errOut, code := e.run(bare, "q", nil, "queue", "enter", ids[1], "--priority", "high")
	if code != 0 || !strings.Contains(errOut, "priority high (was normal)") {
		t.Fatalf("raising the priority: exit %d\n%s", code, errOut)
	}
	// Entering it again with the same priority changes nothing and says so.
	if _, errOut, code := e.run(bare, "q", nil, "queue", "enter", ids[1]); code == 0 || !strings.Contains(errOut, "already queued") {
		t.Fatalf("entering a queued pull request again: exit %d\n%s", code, errOut)
	}
	if err := json.Unmarshal([]byte(e.ok(bare, "", "queue", "show", "--target", "main", "--json")), &show); err != nil {
		t.Fatal(err)
	}
	if want := ids[1] + ":high " + ids[0] + ":normal"; order() != want {
		t.Fatalf("queue show order after the change %s, want %s", order(), want)
	}
	rep = queueRunJSON(t, e, bare)
	if len(rep.Evicted) != 0 || len(rep.Settled) != 0 || len(rep.Landed) != 0 {
		t.Fatalf("the change of priority evicted, settled or landed: %+v", rep)
	}
	if len(rep.Published) != 2 || rep.Published[0].PR != ids[1] || rep.Published[0].Parents[0] != tip || rep.Published[1].PR != ids[0] {
		t.Fatalf("pass after the change published %+v", rep.Published)
	}
	ci(ids[1])
	ci(ids[0])
	rep = queueRunJSON(t, e, bare)
	if len(rep.Landed) != 2 || rep.Landed[0].PR != ids[1] || rep.Landed[1].PR != ids[0] {
		t.Fatalf("last pass landed %+v", rep.Landed)
	}
	// The target's first-parent history holds them in priority order.
	var heads []string
	for _, c := range strings.Fields(fixtures.Git(t, bare, "rev-list", "--first-parent", "--reverse", c0+"..main")) {
		heads = append(heads, strings.TrimSpace(fixtures.Git(t, bare, "rev-parse", c+"^2")))
	}
	var want []string
	for _, i := range []int{2, 1, 0} {
		want = append(want, prShowJSON(t, e, bare, ids[i]).Merged[0].Revision)
	}
	if strings.Join(heads, " ") != strings.Join(want, " ") {
		t.Fatalf("first-parent order of heads %v, want %v", heads, want)
	}
}
