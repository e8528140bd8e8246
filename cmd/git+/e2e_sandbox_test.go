package main

// Sandboxed check commands (docs/ci.md): a hostile pull request's test,
// run by a real `git+ check worker`, reaches nothing that signs its
// verdict; a kernel without Landlock is refused under --sandbox required
// and recorded env-only under best-effort.

import (
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/gitplus/gitplus/fixtures"
	"github.com/gitplus/gitplus/hubrefs"
	"github.com/gitplus/gitplus/receive/sandbox"
)

// hostileTest is the pull request's test script. Each attempt on what it
// must not reach prints "<name>: ok" when it succeeded and "<name>:
// denied" when it failed; its real work (a Go program built with the
// declared caches and run, git log in its checkout) must succeed, and then
// it exits 0. WORKER_HOME and WORKER_CLONE are filled in by the test: an
// attacker who knows the layout of the CI machine.
const hostileTest = `#!/bin/sh
try() { name=$1; shift; if "$@" >/dev/null 2>&1; then echo "$name: ok"; else echo "$name: denied"; fi; }
worker=$PPID # the check worker: the command's parent
set_or_unset() { if [ -n "$2" ]; then echo "$1: set"; else echo "$1: unset"; fi; }
# The key file, found on the worker's command line.
key=$(tr '\0' '\n' </proc/$worker/cmdline | grep -A1 -x -- --key | tail -n 1)
set_or_unset cmdline-key "$key"
try read-key cat "$key"
# The worker's environment, handed down or read through /proc.
set_or_unset env-gitplus-key "$GITPLUS_KEY"
set_or_unset env-agent "$SSH_AUTH_SOCK"
set_or_unset env-token "$CI_TOKEN"
try read-env-key cat "$GITPLUS_KEY"
try read-ssh cat WORKER_HOME/.ssh/id_ed25519
try list-ssh ls WORKER_HOME/.ssh
try worker-environ cat /proc/$worker/environ
try worker-mem sh -c "exec 3</proc/$worker/mem"
try worker-maps cat /proc/$worker/maps
# The member token of the worker's remote, on a command line of one of its
# git processes (it lists the candidate branches every second while a
# command runs): any process reads any other's command line.
children() { awk -v p="$1" '$4 == p { split(FILENAME, a, "/"); print a[3] }' /proc/[0-9]*/stat 2>/dev/null; }
found=none; i=0
while [ $i -lt 60 ] && [ "$found" = none ]; do
  for k in $(children $worker); do
    for p in $k $(children $k); do
      { tr '\0' ' ' </proc/$p/cmdline | grep -qE '://[^/ :@]+:[^/ @]+@' && found=found; } 2>/dev/null
    done
  done
  sleep 0.05; i=$((i+1))
done
echo "token-in-cmdline: $found"
# The worker's repositories: the job slot and the clone, found through the
# objects the checkout borrows.
slotobj=$(head -n 1 .git/objects/info/alternates)
slot=$(dirname "$slotobj")
cloneobj=$(head -n 1 "$slotobj/info/alternates")
clone=$(dirname "$cloneobj")
try write-slot-ref git --git-dir="$slot" update-ref refs/heads/evil "$(git rev-parse HEAD)"
try write-clone-ref sh -c "git rev-parse HEAD >'$clone/refs/heads/evil'"
try write-objects sh -c "mkdir -p '$cloneobj/ee' && echo x >'$cloneobj/ee/evil'"
try write-clone-tree sh -c "echo x >WORKER_CLONE/evil"
# Outside its scratch directory.
try write-tmp sh -c "echo x >/tmp/gitplus-hostile-$$"
try write-beside sh -c "echo x >'$(dirname "$HOME")/../evil'"
# The worker itself.
try signal-worker kill -0 $worker
# Its own work, which must go on.
echo "check-vars: $GITPLUS_CHECK_NAME $GITPLUS_CHECK_SANDBOX"
echo "gocache: $(go env GOCACHE)"
go build -o "$TMPDIR/hello" . && echo "hello: $("$TMPDIR/hello")" || echo "hello: failed"
git log --format='git-log: %s' -1 || echo "git-log: failed"
echo "in-scratch: $(echo x >"$HOME/f" && echo ok)"
`

// TestSandboxHostilePR (docs/ci.md): a pull request nobody approved
// carries a test that tries, under a real check worker, everything that
// would let it sign its own verdict or tamper with the worker — the key
// file, the worker's environment, memory and member token, its
// repositories, files outside its scratch directory, a signal — each
// attempt fails, and the same test still builds and runs a Go program with the
// declared caches and reads its checkout's history with git. The result is
// recorded "sandbox": "landlock-<ABI>".
func TestSandboxHostilePR(t *testing.T) {
	t.Parallel()
	abi, why := sandbox.ABI()
	if abi == 0 {
		t.Skipf("this kernel has no Landlock (%s): the hostile pull request's test needs it", why)
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go on PATH: the hostile pull request builds a Go program")
	}
	w := newE2E(t, map[string][]string{"dev": {"hub.pr"}, "ci": {"hub.check:ci"}})
	// The worker's machine: a home with an SSH key, an agent socket, a
	// token in its environment; its clone (below).
	home := t.TempDir()
	if err := os.MkdirAll(filepath.Join(home, ".ssh"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, ".ssh", "id_ed25519"), []byte("the worker's ssh key\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	agent := filepath.Join(t.TempDir(), "agent.sock")
	l, err := net.Listen("unix", agent)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	clone := filepath.Join(t.TempDir(), "clone")

	script := strings.NewReplacer("WORKER_HOME", home, "WORKER_CLONE", clone).Replace(hostileTest)
	base := w.commit(nil, map[string]string{"base.txt": "base\n"}, "base")
	h := w.commit([]string{base}, map[string]string{
		"test.sh": script,
		"go.mod":  "module example.com/hello\n\ngo 1.21\n",
		"main.go": "package main\n\nimport \"fmt\"\n\nfunc main() { fmt.Println(\"built in a sandbox\") }\n",
	}, "a test that tries everything")
	p := w.localPR("dev", "refs/heads/main", h)
	if out, err := w.push("origin", base+":refs/heads/main", h+":refs/heads/hostile", p.tip+":"+p.Ref()); err != nil {
		t.Fatalf("push: %v\n%s", err, out)
	}
	// The check runs at pull request heads (main takes no candidates), so
	// an unapproved pull request's test runs as soon as it is opened.
	w.mustGP("admin", w.origin, `{"requireKnownPusher":true,"protected":{"refs/heads/main":{"requiredApprovals":1,"requiredChecks":["ci"]}}}`, "rules", "set", "-")
	s := startServe(t, w.bin, w.env, filepath.Dir(w.origin))
	token := strings.TrimSpace(w.mustGP("", w.origin, "", "--repo", w.origin, "member", "token", "issue", "ci"))
	w.git(filepath.Dir(clone), "clone", "-q", strings.Replace(s.URL, "http://", "http://ci:"+token+"@", 1)+"/origin.git", clone)

	goCache := strings.TrimSpace(runOut(t, goBin, "env", "GOCACHE")) // warm: the build takes a moment
	modCache := t.TempDir()
	env := append(fixtures.GitEnv(home), "GITPLUS_KEY="+w.keys["ci"].Path, "SSH_AUTH_SOCK="+agent, "CI_TOKEN=s3cret")
	wk := startCheckWorker(t, w.bin, env, clone, w.keys["ci"].Path,
		[]string{"--cache", "GOCACHE=" + goCache, "--cache", "GOMODCACHE=" + modCache}, "sh", "test.sh")
	var done hubrefs.Check
	if !waitFor(120*time.Second, func() bool {
		last := fixtures.Git(t, w.origin, "log", "-1", "--format=%b", p.Ref())
		return json.Unmarshal([]byte(strings.TrimSpace(last)), &done) == nil && done.Type == hubrefs.TypeCheckCompleted
	}) {
		t.Fatalf("no check.completed at the hostile head:\n%s", wk.Log())
	}
	wk.stop(t)
	got := map[string]string{}
	for _, l := range strings.Split(done.Output, "\n") {
		if k, v, ok := strings.Cut(l, ": "); ok {
			got[k] = v
		}
	}
	want := map[string]string{
		// It finds the key's path, and cannot read the file.
		"cmdline-key": "set", "read-key": "denied",
		"env-gitplus-key": "unset", "env-agent": "unset", "env-token": "unset", "read-env-key": "denied",
		"read-ssh": "denied", "list-ssh": "denied",
		"worker-environ": "denied", "worker-mem": "denied", "worker-maps": "denied", "token-in-cmdline": "none",
		"write-slot-ref": "denied", "write-clone-ref": "denied", "write-objects": "denied", "write-clone-tree": "denied",
		"write-tmp": "denied", "write-beside": "denied",
		"check-vars": "ci landlock-" + fmt.Sprint(abi),
		"gocache":    goCache,
		"hello":      "built in a sandbox",
		"git-log":    "a test that tries everything",
		"in-scratch": "ok",
	}
	if abi >= 6 {
		want["signal-worker"] = "denied"
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: %q, want %q", k, got[k], v)
		}
	}
	if t.Failed() {
		t.Logf("the test's output, as check.completed recorded it:\n%s\nworker log:\n%s", done.Output, wk.Log())
	}
	if done.Conclusion != "success" || done.Sandbox != fmt.Sprintf("landlock-%d", abi) {
		t.Errorf("check.completed: %s, sandbox %q; want success, landlock-%d", done.Conclusion, done.Sandbox, abi)
	}
	// Nothing of the attempts is left behind.
	if _, err := exec.Command("git", "-C", clone, "rev-parse", "-q", "--verify", "refs/heads/evil").Output(); err == nil {
		t.Error("the clone has refs/heads/evil")
	}
	for _, f := range []string{filepath.Join(clone, "evil"), filepath.Join(clone, ".git", "objects", "ee", "evil")} {
		if _, err := os.Stat(f); err == nil {
			t.Errorf("%s exists", f)
		}
	}
	if wk.cmd.ProcessState == nil || !wk.cmd.ProcessState.Success() {
		t.Errorf("the worker did not exit cleanly after SIGTERM: %v", wk.cmd.ProcessState)
	}
}

// runOut runs a command and returns its standard output, failing the test
// on an error.
func runOut(t *testing.T, name string, args ...string) string {
	t.Helper()
	out, err := exec.Command(name, args...).Output()
	if err != nil {
		t.Fatalf("%s %s: %v", name, strings.Join(args, " "), err)
	}
	return string(out)
}

// noLandlockEnv, set to a JSON argv, makes TestHelperNoLandlock run that
// command under a seccomp filter answering ENOSYS to Landlock's system
// calls: a kernel without Landlock, as go-landlock's probe sees it.
const noLandlockEnv = "GITPLUS_TEST_NO_LANDLOCK"

// TestHelperNoLandlock is not a test: run with noLandlockEnv set, it
// executes the command that variable names on a kernel without Landlock
// (noLandlockEnv's doc). Otherwise it does nothing.
func TestHelperNoLandlock(t *testing.T) {
	spec := os.Getenv(noLandlockEnv)
	if spec == "" {
		return
	}
	var argv []string
	if err := json.Unmarshal([]byte(spec), &argv); err != nil || len(argv) == 0 {
		fmt.Fprintf(os.Stderr, "%s: %v\n", noLandlockEnv, err)
		os.Exit(2)
	}
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, noLandlockEnv+"=") {
			env = append(env, kv)
		}
	}
	// The filter is the thread's, and what it executes inherits it.
	runtime.LockOSThread()
	const retErrno, retAllow = 0x00050000, 0x7fff0000
	deny := func(nr uint32) []unix.SockFilter {
		return []unix.SockFilter{{Code: unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K, Jt: 0, Jf: 1, K: nr}, {Code: unix.BPF_RET | unix.BPF_K, K: retErrno | uint32(syscall.ENOSYS)}}
	}
	filter := []unix.SockFilter{{Code: unix.BPF_LD | unix.BPF_W | unix.BPF_ABS, K: 0}} // the system call's number
	filter = append(filter, deny(unix.SYS_LANDLOCK_CREATE_RULESET)...)
	filter = append(filter, deny(unix.SYS_LANDLOCK_ADD_RULE)...)
	filter = append(filter, deny(unix.SYS_LANDLOCK_RESTRICT_SELF)...)
	filter = append(filter, unix.SockFilter{Code: unix.BPF_RET | unix.BPF_K, K: retAllow})
	prog := unix.SockFprog{Len: uint16(len(filter)), Filter: &filter[0]}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	if err := unix.Prctl(unix.PR_SET_SECCOMP, unix.SECCOMP_MODE_FILTER, uintptr(unsafe.Pointer(&prog)), 0, 0); err != nil {
		fmt.Fprintln(os.Stderr, "seccomp:", err)
		os.Exit(2)
	}
	err := syscall.Exec(argv[0], argv, env)
	fmt.Fprintln(os.Stderr, err)
	os.Exit(2)
}

// noLandlock returns cmd changed to run on a kernel without Landlock
// (TestHelperNoLandlock).
func noLandlock(t *testing.T, cmd *exec.Cmd) *exec.Cmd {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	argv, _ := json.Marshal(append([]string{cmd.Path}, cmd.Args[1:]...))
	c := exec.Command(self, "-test.run=^TestHelperNoLandlock$")
	c.Dir, c.Stdin, c.Stdout, c.Stderr = cmd.Dir, cmd.Stdin, cmd.Stdout, cmd.Stderr
	c.Env = append(append([]string{}, cmd.Env...), noLandlockEnv+"="+string(argv))
	return c
}

// TestSandboxWithoutLandlock (docs/ci.md): on a kernel without Landlock,
// --sandbox required refuses before anything is recorded (check run, and a
// worker at its start), and best-effort runs the command with the
// environment allowlist alone and records "env-only".
func TestSandboxWithoutLandlock(t *testing.T) {
	t.Parallel()
	w := newE2E(t, map[string][]string{"dev": {"hub.pr"}, "ci": {"hub.check:ci"}})
	base := w.commit(nil, map[string]string{"base.txt": "base\n"}, "base")
	h := w.commit([]string{base}, map[string]string{"f.txt": "f\n"}, "f")
	p := w.localPR("dev", "refs/heads/main", h)
	if out, err := w.push("origin", base+":refs/heads/main", h+":refs/heads/f", p.tip+":"+p.Ref()); err != nil {
		t.Fatalf("push: %v\n%s", err, out)
	}
	run := func(args ...string) (string, int) {
		cmd := exec.Command(w.bin, append([]string{"--key", w.keys["ci"].Path}, args...)...)
		cmd.Dir, cmd.Env = w.origin, append(append([]string{}, w.env...), "GITPLUS_KEY="+w.keys["ci"].Path, "CI_TOKEN=s3cret")
		var out strings.Builder
		cmd = noLandlock(t, cmd)
		cmd.Stdout, cmd.Stderr = &out, &out
		err := cmd.Run()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		return out.String(), code
	}
	// What this helper simulates is what the probe sees.
	if out, code := run("check", "run", "--pr", p.ID, "--rev", h, "--name", "ci", "--sandbox", "required", "--", "true"); code != 1 ||
		!strings.Contains(out, "--sandbox required: the kernel cannot confine the check command: Landlock is not available (landlock_create_ruleset: function not implemented); nothing was run or recorded") {
		t.Fatalf("check run --sandbox required without Landlock: exit %d, want 1 with the reason:\n%s", code, out)
	}
	if got := checkEvents(t, w.origin, p.Ref()); len(got) != 0 {
		t.Fatalf("a refused run recorded %q (not even check.started may be)", got)
	}
	out, code := run("check", "run", "--pr", p.ID, "--rev", h, "--name", "ci", "--",
		"sh", "-c", `echo "token=${CI_TOKEN:-unset} key=${GITPLUS_KEY:-unset} sandbox=$GITPLUS_CHECK_SANDBOX caps=$(grep CapEff /proc/self/status | tr -d ' \t' | cut -d: -f2)"`)
	if code != 0 || !strings.Contains(out, "sandbox env-only (Landlock unavailable: landlock_create_ruleset: function not implemented)") ||
		!strings.Contains(out, "token=unset key=unset sandbox=env-only caps=0000000000000000") {
		t.Fatalf("check run best-effort without Landlock: exit %d, want 0, the one line saying it is env-only, the allowlist:\n%s", code, out)
	}
	last := fixtures.Git(t, w.origin, "log", "-1", "--format=%b", p.Ref())
	var done hubrefs.Check
	if err := json.Unmarshal([]byte(strings.TrimSpace(last)), &done); err != nil || done.Type != hubrefs.TypeCheckCompleted || done.Sandbox != "env-only" {
		t.Fatalf("check.completed does not say env-only: %s", last)
	}
	// A worker that requires the sandbox refuses to start.
	out, code = run("check", "worker", "--name", "ci", "--sandbox", "required", "--", "true")
	if code != 1 || !strings.Contains(out, "the kernel cannot confine the check command") {
		t.Fatalf("check worker --sandbox required without Landlock: exit %d, want 1:\n%s", code, out)
	}
}

// TestSandboxRunAs (docs/ci.md, "Running a worker as its own user"): a
// check run as root with --run-as USER runs the command as that user, in a
// checkout and scratch directory handed to it (git works there), and the
// key file, root's, is out of its reach even without Landlock.
func TestSandboxRunAs(t *testing.T) {
	t.Parallel()
	if os.Geteuid() != 0 {
		t.Skip("--run-as needs the worker to run as root")
	}
	if _, err := exec.LookPath("useradd"); err != nil {
		t.Skip("no useradd: cannot create the user --run-as names")
	}
	name := fmt.Sprintf("gp36r%d", os.Getpid()%100000)
	if out, err := exec.Command("useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", name).CombinedOutput(); err != nil {
		t.Skipf("useradd %s: %v\n%s", name, err, out)
	}
	t.Cleanup(func() { _ = exec.Command("userdel", name).Run() })
	w := newE2E(t, map[string][]string{"dev": {"hub.pr"}, "ci": {"hub.check:ci"}})
	base := w.commit(nil, map[string]string{"base.txt": "base\n"}, "base")
	h := w.commit([]string{base}, map[string]string{"f.txt": "f\n"}, "the head")
	p := w.localPR("dev", "refs/heads/main", h)
	if out, err := w.push("origin", base+":refs/heads/main", h+":refs/heads/f", p.tip+":"+p.Ref()); err != nil {
		t.Fatalf("push: %v\n%s", err, out)
	}
	// The user reads the objects its checkout borrows: the directories down
	// to the repository are open to it, as an operator makes them.
	for d := filepath.Dir(w.origin); d != filepath.Dir(d) && strings.HasPrefix(d, os.TempDir()+"/"); d = filepath.Dir(d) {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	key := w.keys["ci"].Path
	script := `echo "user=$(id -un) log=$(git log -1 --format=%s)"; cat "$0" >/dev/null 2>&1 && echo key=read || echo key=denied`
	for _, mode := range []string{"best-effort", "off"} {
		out, errs, code := w.gp("ci", w.origin, "", "check", "run", "--pr", p.ID, "--rev", h, "--name", "ci", "--sandbox", mode,
			"--run-as", name, "--", "sh", "-c", script, key)
		if code != 0 || !strings.Contains(errs, "user="+name+" log=the head") || !strings.Contains(errs, "key=denied") {
			t.Errorf("check run --sandbox %s --run-as %s: exit %d, want the command as %s, git working, the key out of reach:\n%s%s", mode, name, code, name, out, errs)
		}
	}
}
