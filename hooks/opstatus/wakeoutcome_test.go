package opstatus

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestWakeFailing: a rule is failing from its first failure after its last
// success; a success clears it; the totals count every failure.
func TestWakeFailing(t *testing.T) {
	at := func(m int) time.Time { return time.Date(2026, 1, 1, 0, m, 0, 0, time.UTC) }
	outs := []WakeOutcome{
		{Rule: "ci", Time: at(1), Exit: 1, Line: "old"},
		{Rule: "ci", Time: at(2), OK: true},
		{Rule: "ci", Time: at(3), Exit: 2, Line: "a"},
		{Rule: "ci", Time: at(4), Exit: 3, Line: "b"},
		{Rule: "queue", Time: at(5), Exit: 1},
		{Rule: "queue", Time: at(6), OK: true},
		{Rule: "gone", Time: at(7), Exit: -1, Error: "cannot start: no such file"},
	}
	fs := WakeFailing(outs)
	if len(fs) != 2 || fs[0].Rule != "ci" || fs[0].Failures != 2 || !fs[0].Since.Equal(at(3)) || fs[0].Line != "b" || fs[0].Exit != 3 || fs[1].Rule != "gone" {
		t.Fatalf("WakeFailing = %+v", fs)
	}
	if s := fs[0].String(); s != "wake rule ci failed 2 times since 2026-01-01T00:03:00Z: b" {
		t.Fatalf("line %q", s)
	}
	if s := fs[1].String(); !strings.Contains(s, "failed once since") || !strings.Contains(s, "cannot start") {
		t.Fatalf("line %q", s)
	}
	if tot := WakeFailureTotals(outs); tot["ci"] != 3 || tot["queue"] != 1 || tot["gone"] != 1 {
		t.Fatalf("totals %v", tot)
	}
}

func FuzzReadWakeOutcomes(f *testing.F) {
	f.Add([]byte(`{"rule":"ci","time":"2026-01-01T00:00:00Z","ok":false,"exit":1,"line":"x"}` + "\n{bad\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		dir := t.TempDir()
		p := filepath.Join(dir, WakeOutcomesFile)
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, data, 0o644)
		outs, _ := ReadWakeOutcomes(dir)
		WakeFailing(outs)
	})
}
