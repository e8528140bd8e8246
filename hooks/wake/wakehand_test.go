package wake

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gitplus/gitplus/hooks/config"
)

// TestWakeByHand runs rules of a wake.json with sh: which rules each
// request picks, what runs in the foreground with the wake environment,
// and how failures and unknown ids come back.
func TestWakeByHand(t *testing.T) {
	gitDir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(gitDir, "hub"), 0o755); err != nil {
		t.Fatal(err)
	}
	run := func(w WakeByHand) (string, string, error) {
		var out, errOut bytes.Buffer
		w.Stdout, w.Stderr, w.Environ = &out, &errOut, []string{"PATH=" + os.Getenv("PATH"), "GITKIT_KEY=someone"}
		err := w.Run(gitDir)
		return out.String(), errOut.String(), err
	}
	if out, _, err := run(WakeByHand{Sweep: true}); err != nil || !strings.Contains(out, "no wake rules in "+gitDir+"/hub/wake.json") {
		t.Fatalf("no wake.json: %q, %v", out, err)
	}
	conf := `{"rules": [
 {"name": "mark", "ref": "refs/heads/*", "on": ["*"], "run": ["sh", "-c", "echo $GITPLUS_WAKE_RULE:${GITKIT_KEY:-none} > marked"]},
 {"name": "bad", "ref": "refs/hub/pr/*", "on": ["pr.opened"], "run": ["sh", "-c", "echo oops >&2; exit 3"]},
 {"name": "per", "ref": "refs/hub/queue/*", "on": ["queue.candidate"], "run": ["sh", "-c", "echo {event.pr}"]}
]}`
	if err := os.WriteFile(filepath.Join(gitDir, config.WakeFile), []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	out, _, err := run(WakeByHand{Ref: "refs/heads/main", Events: []string{"x"}})
	if err != nil || out != "wake mark: sh -c echo $GITPLUS_WAKE_RULE:${GITKIT_KEY:-none} > marked\n" {
		t.Fatalf("--ref refs/heads/main: %q, %v", out, err)
	}
	// The wake environment is there; who pushed is not (the caller's
	// environment named a GITKIT_KEY).
	if b, _ := os.ReadFile(filepath.Join(gitDir, "marked")); string(b) != "mark:none\n" {
		t.Fatalf("the rule ran with %q", b)
	}
	if out, _, err := run(WakeByHand{Ref: "refs/tags/v1", Events: []string{"x"}}); err != nil || out != "no rule matches: nothing to do\n" {
		t.Fatalf("no match: %q, %v", out, err)
	}
	out, errOut, err := run(WakeByHand{Sweep: true})
	if err == nil || err.Error() != "1 of 3 wake rules failed" {
		t.Fatalf("--sweep: %v", err)
	}
	if !strings.Contains(out, "wake per: skipped: its run holds event placeholders") || !strings.Contains(errOut, "oops") ||
		!strings.Contains(errOut, "git+: wake bad (sh -c echo oops >&2; exit 3) in "+gitDir+": exit status 3") {
		t.Fatalf("--sweep printed %q and %q", out, errOut)
	}
	os.Remove(filepath.Join(gitDir, "marked"))
	if out, _, err := run(WakeByHand{Sweep: true, Rule: "mark", DryRun: true}); err != nil || out != "wake mark: sh -c echo $GITPLUS_WAKE_RULE:${GITKIT_KEY:-none} > marked\n" {
		t.Fatalf("--rule mark --dry-run: %q, %v", out, err)
	}
	if _, err := os.Stat(filepath.Join(gitDir, "marked")); err == nil {
		t.Fatal("--dry-run ran the rule")
	}
	if out, _, err := run(WakeByHand{Ref: "refs/tags/v1", Rule: "mark"}); err != nil || out != "no rule matches: nothing to do\n" {
		t.Fatalf("a known rule that does not match: %q, %v", out, err)
	}
	if _, _, err := run(WakeByHand{Sweep: true, Rule: "nope"}); err == nil || !strings.Contains(err.Error(), `no wake rule "nope" in `+gitDir+"/hub/wake.json (rules: mark, bad, per)") {
		t.Fatalf("an unknown rule: %v", err)
	}
}

func TestWithoutPusher(t *testing.T) {
	in := []string{"PATH=/bin", "GITPLUS_SERVED=1", "GITKIT_KEY=k", "GITPLUS_TOKEN_KEY=t", "GIT_PUSH_CERT=c",
		"GIT_PUSH_CERT_NONCE=n", "GIT_PUSH_CERT_NONCE_STATUS=OK", "GIT_PUSH_CERT_STATUS=G", "GIT_PUSH_CERT_SIGNER=s",
		"GIT_PUSH_CERT_KEY=k", "GIT_PUSH_CERT_NONCE_SLOP=1", "GIT_DIR=.", "GIT_PUSH_OPTION_0=x", "GITPLUS_SERVEDX=1"}
	got := strings.Join(WithoutPusher(in), " ")
	if got != "PATH=/bin GIT_DIR=. GIT_PUSH_OPTION_0=x GITPLUS_SERVEDX=1" {
		t.Fatalf("WithoutPusher kept %s", got)
	}
}
