package main

import "testing"

func TestUnknownVerbIsUsageError(t *testing.T) {
	if code := run([]string{"git+", "no-such-verb"}); code == 0 {
		t.Fatalf("unknown verb exited 0")
	}
}
