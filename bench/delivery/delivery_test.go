// Package delivery benchmarks the cost a push pays for after-push delivery
// (docs/delivery.md): the same push into two bare repositories initialised
// by git+ with the hooks installed, in the same run, alternating:
//
//	none   no after-push configuration: the post-receive script starts
//	       nothing
//
// Both repositories run the lean hooks (git+hook pre-receive and
// post-receive), as an installation by `go install ./cmd/...` does.
//
//	hole   hub/webhooks.json with one webhook and hub/remotes.json with one
//	       mirror, both at an address that accepts connections and never
//	       answers (timeouts 60 s): post-receive spools both and the
//	       delivery worker, a separate process, waits on the receivers
//
//	go test ./bench/delivery -run '^$' -bench . -benchtime 40x
//
// Each iteration pushes a new commit to each repository (`git push` of one
// branch, separate processes, hooks run); reported: the median push time
// of each and their ratio hole/none (the goal: ≤ 1.2).
package delivery

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gitplus/gitplus/fixtures"
	"github.com/gitplus/gitplus/hooks/config"
	"github.com/gitplus/gitplus/hooks/delivery"
	"github.com/gitplus/gitplus/hooks/install"
)

func run(b *testing.B, env []string, dir string, args ...string) string {
	b.Helper()
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Dir, cmd.Env = dir, env
	out, err := cmd.CombinedOutput()
	if err != nil {
		b.Fatalf("%s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

func median(d []time.Duration) time.Duration {
	s := append([]time.Duration{}, d...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[len(s)/2]
}

func BenchmarkPushWithBlackHole(b *testing.B) {
	bin := fixtures.Binary(b)
	home := b.TempDir()
	env := fixtures.GitEnv(home)
	key := fixtures.NewKey(b, b.TempDir(), "admin")
	env = append(env, "GITPLUS_KEY="+key.Path)

	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	var conns []net.Conn
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			conns = append(conns, c) // held open, never answered
		}
	}()
	hole := l.Addr().String()

	root := b.TempDir()
	repos := map[string]string{}
	lean := fixtures.HookBinary(b)
	for _, name := range []string{"none", "hole"} {
		repos[name] = filepath.Join(root, name+".git")
		run(b, env, root, bin, "init", "--open", "--admin", "admin", repos[name]) // --open: the client pushes unsigned
		// The hooks `go install ./cmd/...` gets: both run git+hook (a test
		// build is not from a clean checkout, so install would not pick it).
		for _, h := range []string{"pre-receive", "post-receive"} {
			body := "#!/bin/sh\n" + install.Marker + "\n"
			if h == "post-receive" {
				body += "[ -e \"$GIT_DIR/" + config.RemotesFile + "\" ] || [ -e \"$GIT_DIR/" + config.WebhooksFile + "\" ] || exit 0\n"
			}
			body += "exec '" + lean + "' " + h
			if h == "post-receive" {
				body += " '" + bin + "'"
			}
			if err := os.WriteFile(filepath.Join(repos[name], "hooks", h), []byte(body+"\n"), 0o755); err != nil {
				b.Fatal(err)
			}
		}
	}
	cfg := filepath.Join(repos["hole"], "hub")
	if err := os.MkdirAll(cfg, 0o755); err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(repos["hole"], config.WebhooksFile), []byte(`{"hooks":[{"name":"hole","url":"http://`+hole+`/hook","secret":"s","timeout_seconds":60}]}`), 0o644); err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(repos["hole"], config.RemotesFile), []byte(`{"remotes":[{"name":"hole","url":"http://`+hole+`/m.git","timeout_seconds":60}]}`), 0o644); err != nil {
		b.Fatal(err)
	}
	defer func() {
		if pid := delivery.WorkerPID(repos["hole"]); pid > 0 {
			_ = syscall.Kill(pid, syscall.SIGTERM)
			for i := 0; i < 100 && delivery.WorkerRunning(repos["hole"]); i++ {
				time.Sleep(50 * time.Millisecond)
			}
		}
	}()
	work := filepath.Join(root, "work")
	run(b, env, root, "git", "init", "-q", work)

	times := map[string][]time.Duration{}
	push := func(i int) {
		run(b, env, work, "git", "commit", "-q", "--allow-empty", "-m", fmt.Sprint("c", i))
		for _, name := range []string{"none", "hole"} {
			start := time.Now()
			run(b, env, work, "git", "push", "-q", repos[name], "HEAD:refs/heads/main")
			times[name] = append(times[name], time.Since(start))
		}
	}
	push(-1) // warm up both (the first push starts the worker)
	times = map[string][]time.Duration{}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		push(i)
	}
	b.StopTimer()
	none, withHole := median(times["none"]), median(times["hole"])
	b.ReportMetric(float64(none.Microseconds())/1000, "none-ms")
	b.ReportMetric(float64(withHole.Microseconds())/1000, "hole-ms")
	b.ReportMetric(float64(withHole)/float64(none), "ratio")
	d, _ := delivery.Deliveries(repos["hole"])
	pending := 0
	for _, j := range d {
		if j.State == delivery.StatePending {
			pending++
		}
	}
	b.Logf("%d webhook deliveries spooled, %d pending (the receiver never answers); worker running: %v", len(d), pending, delivery.WorkerRunning(repos["hole"]))
}
