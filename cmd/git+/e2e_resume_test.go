package main

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gitplus/gitplus/hooks/config"
	"github.com/gitplus/gitplus/hooks/delivery"
)

// TestServeResumesDeliveries: refs that moved without post-receive (a
// server killed mid-push: git updated the refs, the hook chain never ran)
// leave the mirror behind with no change recorded. `git+ mirror status`
// says behind, and the next `git+ serve` to start on the repository
// starts the delivery worker, which syncs it.
func TestServeResumesDeliveries(t *testing.T) {
	t.Parallel()
	w := newE2E(t, nil)
	t.Cleanup(func() { stopWorker(t, w.origin) })
	mirror := filepath.Join(t.TempDir(), "mirror.git")
	w.git(filepath.Dir(mirror), "init", "-q", "--bare", mirror)
	writeJSONFile(t, filepath.Join(w.origin, config.RemotesFile), delivery.RemotesConfig{Remotes: []delivery.Remote{{Name: "m", URL: mirror}}})
	c := w.commit(nil, map[string]string{"a": "0"}, "c0")
	if out, err := w.push("origin", c+":refs/heads/main"); err != nil {
		t.Fatalf("push: %v\n%s", err, out)
	}
	if !waitFor(60*time.Second, func() bool { return hubAndHeads(w, w.origin) == hubAndHeads(w, mirror) }) {
		t.Fatalf("the mirror did not follow the first push")
	}
	stopWorker(t, w.origin)
	// The refs move with no hook: as a push whose server died before
	// post-receive.
	c = w.commit([]string{c}, map[string]string{"a": "1"}, "c1")
	w.git(w.origin, "fetch", "-q", w.work, c+":refs/heads/main")
	if out := w.mustGP("", w.origin, "", "mirror", "status"); !strings.Contains(out, "m "+mirror+": behind") {
		t.Fatalf("mirror status with refs the mirror never received:\n%s", out)
	}
	startServe(t, w.bin, w.env, filepath.Dir(w.origin))
	if !waitFor(60*time.Second, func() bool { return hubAndHeads(w, w.origin) == hubAndHeads(w, mirror) }) {
		t.Fatalf("serve started and the mirror is still behind:\n%s\nlog:\n%s", w.mustGP("", w.origin, "", "mirror", "status"), readFile(filepath.Join(w.origin, delivery.WorkerLog)))
	}
	if !waitFor(30*time.Second, func() bool { return strings.Contains(w.mustGP("", w.origin, "", "mirror", "status"), ": in step") }) {
		t.Fatalf("mirror status after the sync:\n%s", w.mustGP("", w.origin, "", "mirror", "status"))
	}
}
