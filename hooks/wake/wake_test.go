package wake

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestMatchOncePerPushAndSkip(t *testing.T) {
	rules := []WakeRule{
		{Name: "q", Ref: "refs/hub/pr/*", On: []string{"check.completed"}, Run: []string{"git+", "queue", "run"}},
		{Name: "any", Ref: "refs/heads/*", On: []string{"*"}, Run: []string{"true"}},
	}
	ups := []RefUpdate{
		{Ref: "refs/hub/pr/a", Types: []string{"check.completed"}},
		{Ref: "refs/hub/pr/b", Types: []string{"check.completed"}},
		{Ref: "refs/heads/x"},
	}
	got := Match(rules, ups, nil)
	if len(got) != 2 || got[0].ID() != "q" || got[1].ID() != "any" {
		t.Fatalf("Match = %+v", got)
	}
	if got := Match(rules, ups, SkippedRules([]string{"gitplus-wake=q"})); len(got) != 1 || got[0].ID() != "any" {
		t.Fatalf("Match skipping q = %+v", got)
	}
	if got := Match(rules, ups[:1], map[string]bool{}); len(got) != 1 {
		t.Fatalf("Match on a pr ref = %+v", got)
	}
}

func TestExpandPerEvent(t *testing.T) {
	r := WakeRule{Ref: "refs/hub/queue/*", On: []string{"queue.candidate"},
		Run: []string{"git+", "check", "run", "--pr", "{event.pr}", "--rev", "{event.step}", "--", "x{ref}"}}
	if !r.PerEvent() {
		t.Fatal("not per-event")
	}
	ev := WakeEvent{ID: "e1", Type: "queue.candidate", Payload: json.RawMessage(`{"pr":"P","step":"S"}`)}
	refs, evs := MatchEvents(r, []RefUpdate{{Ref: "refs/hub/queue/q", Events: []WakeEvent{ev, {ID: "e2", Type: "queue.left"}}}})
	if len(evs) != 1 {
		t.Fatalf("MatchEvents = %v", evs)
	}
	x, err := r.Expand(refs[0], evs[0])
	if err != nil || strings.Join(x.Run, " ") != "git+ check run --pr P --rev S -- xrefs/hub/queue/q" || x.ID() != r.ID() {
		t.Fatalf("Expand = %v (id %s, want %s), %v", x.Run, x.ID(), r.ID(), err)
	}
	if _, err := r.Expand("r", WakeEvent{ID: "e3", Payload: json.RawMessage(`{}`)}); err == nil {
		t.Fatal("missing field not reported")
	}
}

func TestChildEnv(t *testing.T) {
	env := ChildEnv([]string{"PATH=/bin", "GIT_DIR=.", "GIT_PUSH_OPTION_COUNT=1", "GIT_PUSH_OPTION_0=x",
		"GIT_CONFIG_COUNT=2", "GIT_CONFIG_KEY_0=push.pushOption", "GIT_CONFIG_VALUE_0=old",
		"GIT_CONFIG_KEY_1=user.name", "GIT_CONFIG_VALUE_1=u", "GITPLUS_WAKE_RULE=a",
		"GIT_PUSH_CERT=abc", "GIT_PUSH_CERT_NONCE=n", "GIT_PUSH_CERT_NONCE_STATUS=OK", "GITKIT_KEY=ssh-ed25519 AAAA",
		"GITPLUS_TOKEN_KEY=ssh-ed25519 BBBB", "GITPLUS_SERVED=1", "GITPLUS_PUSH_OPTIONS=gitplus.no-notify"},
		[][2]string{{"push.pushOption", "gitplus-wake=b"}}, "GITPLUS_WAKE_RULE=b")
	want := "PATH=/bin GIT_CONFIG_COUNT=2 GIT_CONFIG_KEY_0=user.name GIT_CONFIG_VALUE_0=u GIT_CONFIG_KEY_1=push.pushOption GIT_CONFIG_VALUE_1=gitplus-wake=b GITPLUS_WAKE_RULE=b"
	if got := strings.Join(env, " "); got != want {
		t.Fatalf("childEnv =\n%s\nwant\n%s", got, want)
	}
	if o := PushOptions([]string{"GIT_PUSH_OPTION_COUNT=2", "GIT_PUSH_OPTION_0=a", "GIT_PUSH_OPTION_1=gitplus-wake=q"}); len(o) != 2 || !SkippedRules(o)["q"] {
		t.Fatalf("PushOptions = %v", o)
	}
	// A push into "." hands its options over in the environment
	// (receive/gitio/pushenv.go); git then sets GIT_PUSH_OPTION_COUNT empty.
	if o := PushOptions([]string{"GIT_PUSH_OPTION_COUNT=", "GITPLUS_PUSH_OPTIONS=a\ngitplus-wake=q"}); len(o) != 2 || !SkippedRules(o)["q"] {
		t.Fatalf("PushOptions from GITPLUS_PUSH_OPTIONS = %v", o)
	}
}
