package main

// Concurrent writers on one pull request (docs/queue.md, "Concurrent
// writers"): eight clones, each a shell loop of separate `git+` processes,
// add twenty comments each (one in the default suite) to the same pull request at once. Every append
// is a compare-and-swap on the pull request's tip; a lost race re-reads the
// tip and retries with backoff and jitter for a bounded time. All 160
// comments must be recorded, none twice.

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/gitplus/gitplus/hubrefs"
)

func TestConcurrentWritersOnePR(t *testing.T) {
	t.Parallel()
	// Eight writers × 20 events is the acceptance size
	// (GITPLUS_TEST_WRITERS_EACH=20); every event is a push through the
	// hooks, serialised on the one ref, so the suite runs 8 × 1 (eight writers colliding at once) to stay
	// within its time budget on a loaded machine.
	writers, each := 8, 1
	if v, err := strconv.Atoi(os.Getenv("GITPLUS_TEST_WRITERS_EACH")); err == nil && v > 0 {
		each = v
	}
	w := newE2E(t, map[string][]string{"dev": {"hub.pr"}, "rev": {"hub.review"}})
	base := w.commit(nil, map[string]string{"base.txt": "base\n"}, "base")
	h := w.commit([]string{base}, map[string]string{"f.txt": "f\n"}, "f")
	p := w.localPR("dev", "refs/heads/main", h)
	if out, err := w.push("origin", base+":refs/heads/main", h+":refs/heads/f", p.tip+":"+p.Ref()); err != nil {
		t.Fatalf("push: %v\n%s", err, out)
	}
	maintainBeside(t, w.origin)
	root := t.TempDir()
	var wg sync.WaitGroup
	errs := make([]string, writers)
	for i := 0; i < writers; i++ {
		clone := filepath.Join(root, fmt.Sprintf("c%d", i))
		if out, errOut, err := w.gitRun(root, "", nil, "clone", "-q", w.origin, clone); err != nil {
			t.Fatalf("clone: %v\n%s%s", err, out, errOut)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			script := fmt.Sprintf(`for j in $(seq 1 %d); do "$GP" pr review %s --comment --body "w%d-$j" >/dev/null || exit 1; done`, each, p.ID, i)
			cmd := exec.Command("sh", "-c", script)
			cmd.Dir = clone
			cmd.Env = append(append([]string{}, w.env...), "GP="+w.bin, "GITPLUS_KEY="+w.keys["rev"].Path)
			if out, err := cmd.CombinedOutput(); err != nil {
				errs[i] = fmt.Sprintf("writer %d: %v\n%s", i, err, out)
			}
		}()
	}
	wg.Wait()
	for _, e := range errs {
		if e != "" {
			t.Error(e)
		}
	}
	bodies := map[string]int{}
	log, errOut, err := w.gitRun(w.origin, "", nil, "log", "--format=%b", p.Ref())
	if err != nil {
		t.Fatalf("git log: %v\n%s", err, errOut)
	}
	for _, line := range strings.Split(log, "\n") {
		var r hubrefs.Review
		if strings.HasPrefix(line, "{") && json.Unmarshal([]byte(line), &r) == nil && r.Type == hubrefs.TypeReviewSubmit {
			bodies[r.Body]++
		}
	}
	if len(bodies) != writers*each {
		t.Errorf("%d distinct comments recorded, want %d", len(bodies), writers*each)
	}
	for b, n := range bodies {
		if n != 1 {
			t.Errorf("comment %q recorded %d times", b, n)
		}
	}
}
