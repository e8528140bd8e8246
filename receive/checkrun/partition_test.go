package checkrun

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gitplus/gitplus/fixtures"
	"github.com/gitplus/gitplus/hubrefs/queue"
)

// TestPartitionEnv: a lane's candidate tells the check command its
// partition and, in a file of NUL-ended paths, the files it changes against
// its first parent (a path with a line break included, whole); a revision
// no lane's record names gets nothing.
func TestPartitionEnv(t *testing.T) {
	work := t.TempDir()
	git := func(args ...string) string { t.Helper(); return strings.TrimSpace(fixtures.Git(t, work, args...)) }
	git("init", "-q")
	write := func(name, content string) {
		t.Helper()
		p := filepath.Join(work, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("web/a", "a\n")
	git("add", ".")
	git("commit", "-q", "-m", "base")
	base := git("rev-parse", "HEAD")
	write("web/b", "b\n")
	write("web/two\nlines", "c\n")
	git("add", ".")
	git("commit", "-q", "-m", "step")
	step := git("rev-parse", "HEAD")
	gitDir := filepath.Join(work, ".git")

	dir := t.TempDir()
	recs := []queueRecord{{rec: queue.Recorded{Step: step, Parents: []string{base, "h"}, Partition: "web"}}}
	l, err := laneOf(gitDir, recs, step)
	if err != nil || l == nil {
		t.Fatalf("laneOf: %v, %v", l, err)
	}
	env, file, err := l.write(dir)
	if err != nil {
		t.Fatal(err)
	}
	if want := EnvPaths + "=" + file; len(env) != 2 || env[1] != want {
		t.Fatalf("env: %q; want the file %s", env, file)
	}
	if len(env) != 2 || env[0] != EnvPartition+"=web" || !strings.HasPrefix(env[1], EnvPaths+"=") {
		t.Fatalf("env: %q", env)
	}
	got, err := os.ReadFile(strings.TrimPrefix(env[1], EnvPaths+"="))
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != "web/b\x00web/two\nlines\x00" {
		t.Errorf("paths file: %q", got)
	}
	for _, recs := range [][]queueRecord{nil, {{rec: queue.Recorded{Step: step, Parents: []string{base, "h"}}}}} {
		if l, err := laneOf(gitDir, recs, step); err != nil || l != nil {
			t.Errorf("no lane: %v %v", l, err)
		}
	}
}
