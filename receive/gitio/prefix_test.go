package gitio

import (
	"os/exec"
	"strings"
	"testing"
)

// TestHashesWithPrefix: abbreviated ids expand to what git itself finds,
// loose and packed, and a bad prefix is refused.
func TestHashesWithPrefix(t *testing.T) {
	dir := t.TempDir()
	run := func(args ...string) string {
		t.Helper()
		out, err := exec.Command("git", append([]string{"--git-dir=" + dir}, args...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v: %s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	run("init", "-q", "--bare")
	var ids []string
	for i := 0; i < 300; i++ {
		cmd := exec.Command("git", "--git-dir="+dir, "hash-object", "-w", "--stdin")
		cmd.Stdin = strings.NewReader(strings.Repeat("x", i))
		out, err := cmd.Output()
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, strings.TrimSpace(string(out)))
		if i == 150 {
			run("repack", "-adq") // half packed, half loose
		}
	}
	s, err := OpenStore(dir, QuarantineEnv{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, id := range ids[:40] {
		for _, n := range []int{4, 7, 39} {
			got, err := s.HashesWithPrefix(strings.ToUpper(id[:n]))
			if err != nil {
				t.Fatal(err)
			}
			want := 0
			for _, o := range ids {
				if strings.HasPrefix(o, id[:n]) {
					want++
				}
			}
			if len(got) != want {
				t.Fatalf("prefix %s: %d ids, want %d (%v)", id[:n], len(got), want, got)
			}
			for _, h := range got {
				if !strings.HasPrefix(h.String(), id[:n]) {
					t.Fatalf("prefix %s: got %s", id[:n], h)
				}
			}
		}
	}
	for _, bad := range []string{"abc", "zzzz", strings.Repeat("a", 40), "12 4"} {
		if _, err := s.HashesWithPrefix(bad); err == nil {
			t.Errorf("prefix %q accepted", bad)
		}
	}
}
