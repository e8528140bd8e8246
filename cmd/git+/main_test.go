package main

import "testing"

func TestUnknownVerbIsUsageError(t *testing.T) {
	if code := run([]string{"git+", "no-such-verb"}); code == 0 {
		t.Fatalf("unknown verb exited 0")
	}
}

// TestHelpVerb: `git+ help [VERB [SUBVERB]]` is `git+ [VERB [SUBVERB]] --help`.
func TestHelpVerb(t *testing.T) {
	for _, args := range [][]string{{"help"}, {"help", "pr"}, {"help", "pr", "open"}, {"help", "queue", "run"}} {
		if code := run(append([]string{"git+"}, args...)); code != 0 {
			t.Errorf("git+ %v exited %d", args, code)
		}
	}
	if code := run([]string{"git+", "help", "no-such-verb"}); code == 0 {
		t.Errorf("git+ help no-such-verb exited 0")
	}
}
