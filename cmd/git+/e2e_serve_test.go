package main

// End-to-end tests of git+ serve: stock git over smart HTTP against the
// built binary, hooks installed by the server.

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gitplus/gitplus/hooks"
)

// gpServer is a running `git+ serve`.
type gpServer struct {
	URL string // http://127.0.0.1:PORT
	cmd *exec.Cmd
}

// startServe starts git+ serve on a free port of 127.0.0.1 and stops it
// (SIGTERM, expecting a clean exit) when the test ends.
func startServe(t *testing.T, w *e2e, root string) *gpServer {
	t.Helper()
	cmd := exec.Command(w.bin, "serve", "--root", root, "--listen", "127.0.0.1:0")
	cmd.Env = w.env
	logf, err := os.Create(filepath.Join(t.TempDir(), "serve.log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = logf
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		if sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	var line string
	select {
	case line = <-lines:
	case <-time.After(20 * time.Second):
		cmd.Process.Kill()
		t.Fatalf("git+ serve printed nothing in 20 s")
	}
	url, ok := strings.CutPrefix(line, "listening on ")
	if !ok {
		cmd.Process.Kill()
		t.Fatalf("git+ serve printed %q", line)
	}
	s := &gpServer{URL: strings.TrimSuffix(url, "/"), cmd: cmd}
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("git+ serve after SIGTERM: %v\n%s", err, readFile(logf.Name()))
			}
		case <-time.After(35 * time.Second):
			cmd.Process.Kill()
			t.Errorf("git+ serve did not stop on SIGTERM")
		}
		logf.Close()
	})
	return s
}

func TestServe(t *testing.T) {
	t.Parallel()
	w := newE2E(t, map[string][]string{"dev": {"hub.pr"}})
	root := filepath.Dir(w.origin)
	// A bare repository the server must find and equip with hooks.
	other := filepath.Join(root, "team", "other.git")
	w.git(root, "init", "-q", "--bare", other)
	writeJSONFile(t, filepath.Join(w.origin, hooks.WakeFile), hooks.WakeConfig{Rules: []hooks.WakeRule{
		{Name: "late", Ref: "refs/heads/*", On: []string{"*"}, Run: []string{"sh", "-c", "sleep 1; echo survived"}},
	}})
	s := startServe(t, w, root)
	if ok, _, err := hooks.Installed(other); err != nil || !ok {
		t.Fatalf("git+ serve did not install the hooks in %s: %v", other, err)
	}

	// Clone, commit, push a branch over HTTP.
	clone := filepath.Join(t.TempDir(), "c")
	w.git(root, "clone", "-q", s.URL+"/origin.git", clone)
	w.git(clone, "commit", "-q", "--allow-empty", "-m", "first")
	w.git(clone, "push", "-q", "origin", "HEAD:refs/heads/main", "HEAD:refs/heads/feature")
	head := w.git(clone, "rev-parse", "HEAD")
	if got := w.ref("refs/heads/feature"); got != head {
		t.Fatalf("feature = %q after the HTTP push, want %s", got, head)
	}
	// The wake run outlives the request (gitkit signals receive-pack's group).
	late := hooks.WakeLog(w.origin, "late")
	if !waitFor(15*time.Second, func() bool { return strings.Contains(readFile(late), "exit 0") }) {
		t.Fatalf("wake run did not survive the request:\n%s", readFile(late))
	}
	if !strings.Contains(readFile(late), "survived") {
		t.Fatalf("wake log: %s", readFile(late))
	}

	// Protect main; a direct push is refused, and the client is told.
	w.mustGP("admin", w.origin, `{"protected":{"refs/heads/main":{"requiredApprovals":1}}}`, "rules", "set", "-")
	w.git(clone, "commit", "-q", "--allow-empty", "-m", "second")
	out, errs, err := w.gitRun(clone, "", nil, "push", "origin", "HEAD:refs/heads/main")
	if err == nil {
		t.Fatalf("push to protected main over HTTP succeeded:\n%s%s", out, errs)
	}
	if !strings.Contains(errs, "remote: git+: refused refs/heads/main") {
		t.Fatalf("refusal did not reach the client:\n%s", errs)
	}
	if got := w.ref("refs/heads/main"); got != head {
		t.Fatalf("main moved to %s despite the refusal", got)
	}

	// Fetch works; unknown repositories and escapes are 404/400.
	w.git(clone, "fetch", "-q", "origin")
	if _, errs, err := w.gitRun(root, "", nil, "ls-remote", s.URL+"/nope.git"); err == nil {
		t.Fatalf("ls-remote of a missing repository succeeded")
	} else if !strings.Contains(errs, "not found") && !strings.Contains(errs, "404") {
		t.Logf("ls-remote of a missing repository: %s", errs)
	}
	if _, _, err := w.gitRun(root, "", nil, "ls-remote", s.URL+"/team/other.git"); err != nil {
		t.Fatalf("ls-remote of a nested repository: %v", err)
	}
}
