package main

// `serve ROOT`: git+ serve started in the background for a session script
// (testdata/script/README.md), the way a team runs it, on a port the kernel
// picks.

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/rogpeppe/go-internal/testscript"
)

// scriptServe is `serve ROOT`: runs `git+ serve --root ROOT --listen
// 127.0.0.1:0` as its own process, waits for its "listening on" line and
// sets SERVE_URL to the address it serves (http://127.0.0.1:PORT, no
// trailing slash). The server's standard error goes to $WORK/serve.log; it
// is stopped (SIGTERM, then waited for) when the script ends. The server
// runs with the script's PATH, HOME and git isolation as they are when the
// command runs.
func scriptServe(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: serve ROOT")
	}
	bin, err := exec.LookPath("git+")
	if p := ts.Getenv("PATH"); p != "" {
		for _, dir := range filepath.SplitList(p) {
			if c := filepath.Join(dir, "git+"); fileExists(c) {
				bin, err = c, nil
				break
			}
		}
	}
	ts.Check(err)
	cmd := exec.Command(bin, "serve", "--root", ts.MkAbs(args[0]), "--listen", "127.0.0.1:0")
	cmd.Dir = ts.Getenv("WORK")
	for _, name := range []string{"PATH", "HOME", "GIT_CONFIG_NOSYSTEM", "GIT_AUTHOR_DATE", "GIT_COMMITTER_DATE", "TMPDIR"} {
		if v := ts.Getenv(name); v != "" {
			cmd.Env = append(cmd.Env, name+"="+v)
		}
	}
	logf, err := os.Create(ts.MkAbs("serve.log"))
	ts.Check(err)
	cmd.Stderr = logf
	out, err := cmd.StdoutPipe()
	ts.Check(err)
	ts.Check(cmd.Start())
	ts.Defer(func() {
		// A clean shutdown on SIGINT; a server that does not stop is
		// killed rather than left behind (cleanup, not an assertion).
		_ = cmd.Process.Signal(os.Interrupt)
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
		logf.Close()
	})
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		if addr, ok := strings.CutPrefix(sc.Text(), "listening on http://"); ok {
			ts.Setenv("SERVE_URL", "http://"+strings.TrimSuffix(addr, "/"))
			go func() { // keep draining what it prints
				for sc.Scan() {
				}
			}()
			return
		}
	}
	ts.Fatalf("git+ serve ended without a listening line (see serve.log)")
}

func fileExists(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && !fi.IsDir()
}
