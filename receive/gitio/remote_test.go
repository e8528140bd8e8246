package gitio

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gitplus/gitplus/fixtures"
)

// TestFetchRetriesMovedTip: a fetch the remote refuses because a ref moved
// under it ("not our ref", as git upload-pack says over HTTP when a listed
// commit was left unreachable before the wants were served) is tried again and
// succeeds; another failure is reported at once, and a remote that keeps
// refusing is given up on after fetchAttempts.
func TestFetchRetriesMovedTip(t *testing.T) {
	root := t.TempDir()
	srv := filepath.Join(root, "srv.git")
	fixtures.Git(t, root, "init", "-q", "--bare", srv)
	fixtures.Git(t, root, "init", "-q", "work")
	work := filepath.Join(root, "work")
	fixtures.Git(t, work, "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-q", "--allow-empty", "-m", "one")
	fixtures.Git(t, work, "push", "-q", srv, "HEAD:refs/hub/trust")
	local := filepath.Join(root, "local.git")
	fixtures.Git(t, root, "init", "-q", "--bare", local)
	fixtures.Git(t, local, "remote", "add", "origin", srv)

	// The remote's upload-pack refuses the first failures runs the way a
	// moved tip is refused (or otherwise), then serves.
	count := filepath.Join(root, "count")
	script := filepath.Join(root, "upload-pack")
	setup := func(failures int, why string) {
		t.Helper()
		if err := os.WriteFile(count, nil, 0o644); err != nil {
			t.Fatal(err)
		}
		body := "#!/bin/sh\nn=$(wc -c < " + count + ")\nif [ \"$n\" -lt " + string(rune('0'+failures)) + " ]; then printf x >> " + count +
			"; echo 'fatal: remote error: upload-pack: " + why + "' >&2; exit 128; fi\nexec git-upload-pack \"$@\"\n"
		if err := os.WriteFile(script, []byte(body), 0o755); err != nil {
			t.Fatal(err)
		}
		fixtures.Git(t, local, "config", "remote.origin.uploadpack", script)
	}
	runs := func() int {
		b, _ := os.ReadFile(count)
		return len(b)
	}
	ctx := context.Background()

	setup(2, "not our ref 0123456789abcdef0123456789abcdef01234567")
	if err := Fetch(ctx, local, "origin", nil, "+refs/hub/*:refs/hub/*"); err != nil {
		t.Fatalf("a fetch refused twice for a moved tip: %v", err)
	}
	if got := fixtures.Git(t, local, "rev-parse", "refs/hub/trust"); got != fixtures.Git(t, srv, "rev-parse", "refs/hub/trust") {
		t.Fatalf("refs/hub/trust = %s after the fetch", got)
	}

	setup(1, "access denied")
	if err := Fetch(ctx, local, "origin", nil, "+refs/hub/*:refs/hub/*"); err == nil || !strings.Contains(err.Error(), "access denied") || runs() != 1 {
		t.Fatalf("another refusal: %v after %d runs, want it reported after 1", err, runs())
	}

	setup(9, "not our ref 0123456789abcdef0123456789abcdef01234567")
	if err := Fetch(ctx, local, "origin", nil, "+refs/hub/*:refs/hub/*"); err == nil || !strings.Contains(err.Error(), "not our ref") || runs() != fetchAttempts {
		t.Fatalf("a remote that keeps refusing: %v after %d runs, want it reported after %d", err, runs(), fetchAttempts)
	}
}
