package sandbox

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// run runs script under c with policy p in dir and returns its output,
// failing the test when it cannot start.
func run(t *testing.T, c Confinement, p Policy, dir string, env []string, script string) string {
	t.Helper()
	cmd, release, err := Command{Argv: []string{"sh", "-c", script}, Dir: dir, Env: env, Policy: p, Confinement: c}.Cmd(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s: %v\n%s", script, err, out)
	}
	return string(out)
}

// lines turns the "name: result" lines of a script's output into a map.
func lines(out string) map[string]string {
	m := map[string]string{}
	for _, l := range strings.Split(out, "\n") {
		if k, v, ok := strings.Cut(l, ": "); ok {
			m[k] = v
		}
	}
	return m
}

// The attempts a command makes outside what it is given; each line says
// "ok" when it succeeded.
const probeScript = `
try() { name=$1; shift; if "$@" >/dev/null 2>&1; then echo "$name: ok"; else echo "$name: denied"; fi; }
try read-secret cat "$SECRET"
try list-outside ls "$OUTSIDE"
try write-outside sh -c 'echo x >"$OUTSIDE/evil"'
try write-inside sh -c 'echo x >"$INSIDE/good" && cat "$INSIDE/good"'
try write-home sh -c 'echo x >"$HOME/f"'
try rename-inside sh -c 'mkdir -p "$INSIDE/a" "$INSIDE/b" && echo y >"$INSIDE/a/f" && mv "$INSIDE/a/f" "$INSIDE/b/f"'
try read-etc-passwd cat /etc/passwd
try read-etc-shadow cat /etc/shadow
try dev-null sh -c 'echo x >/dev/null'
try parent-cmdline cat /proc/$PPID/cmdline
try parent-environ cat /proc/$PPID/environ
try parent-mem dd if=/proc/$PPID/mem bs=1 count=1
try parent-cwd readlink /proc/$PPID/cwd
try signal-parent kill -0 $PPID
echo "caps: $(grep CapEff /proc/self/status | tr -d ' \t' | cut -d: -f2)"
echo "env-secret: ${GITPLUS_KEY:-none}"
`

func TestLandlockConfines(t *testing.T) {
	abi, why := ABI()
	if abi == 0 {
		t.Skipf("this kernel has no Landlock (%s)", why)
	}
	t.Setenv("GITPLUS_KEY", "/the/key")
	base := t.TempDir()
	inside, outside, scratch := filepath.Join(base, "in"), filepath.Join(base, "out"), filepath.Join(base, "scratch")
	for _, d := range []string{inside, outside} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := MakeScratch(scratch, -1, -1); err != nil {
		t.Fatal(err)
	}
	secret := filepath.Join(outside, "key")
	if err := os.WriteFile(secret, []byte("secret"), 0o600); err != nil {
		t.Fatal(err)
	}
	p := System(os.Getenv("PATH")).Merge(Policy{Write: []string{inside, scratch}})
	env := Env(os.Environ(), "", scratch, nil, []string{"SECRET=" + secret, "OUTSIDE=" + outside, "INSIDE=" + inside})
	got := lines(run(t, Confinement{ABI: abi}, p, inside, env, probeScript))
	want := map[string]string{
		"read-secret": "denied", "list-outside": "denied", "write-outside": "denied",
		"write-inside": "ok", "write-home": "ok", "read-etc-passwd": "ok", "read-etc-shadow": "denied", "dev-null": "ok",
		"parent-cmdline": "ok", "parent-environ": "denied", "parent-mem": "denied", "parent-cwd": "denied",
		"caps": "0000000000000000", "env-secret": "none",
	}
	if abi >= 2 {
		want["rename-inside"] = "ok"
	}
	if abi >= 6 {
		want["signal-parent"] = "denied"
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: %q, want %q", k, got[k], v)
		}
	}
	if _, err := os.Stat(filepath.Join(outside, "evil")); err == nil {
		t.Error("the command wrote outside its sandbox")
	}
}

// Env-only: the environment is the allowlist and the command holds no
// capabilities, but the filesystem is the worker's.
func TestEnvOnly(t *testing.T) {
	t.Setenv("GITPLUS_KEY", "/the/key")
	t.Setenv("SSH_AUTH_SOCK", "/the/agent")
	t.Setenv("PASSED", "yes")
	scratch := t.TempDir()
	if err := MakeScratch(scratch, -1, -1); err != nil {
		t.Fatal(err)
	}
	env := Env(os.Environ(), "", scratch, []string{"PASSED"}, []string{"GITPLUS_CHECK_NAME=ci"})
	out := run(t, Confinement{}, Policy{}, scratch, env, `echo "caps: $(grep CapEff /proc/self/status | tr -d ' \t' | cut -d: -f2)"; env | sort`)
	if !strings.Contains(out, "caps: 0000000000000000") {
		t.Errorf("the env-only command holds capabilities:\n%s", out)
	}
	for _, bad := range []string{"GITPLUS_KEY", "SSH_AUTH_SOCK"} {
		if strings.Contains(out, bad+"=") {
			t.Errorf("%s reached the command:\n%s", bad, out)
		}
	}
	for _, good := range []string{"PASSED=yes", "GITPLUS_CHECK_NAME=ci", "HOME=" + filepath.Join(scratch, "home"), "TMPDIR=" + filepath.Join(scratch, "tmp"), "PATH="} {
		if !strings.Contains(out, good) {
			t.Errorf("%s is missing from the command's environment:\n%s", good, out)
		}
	}
}

func TestEnvAllowlist(t *testing.T) {
	parent := []string{"PATH=/usr/bin", "HOME=/root", "GITPLUS_KEY=/k", "SSH_AUTH_SOCK=/s", "GIT_DIR=/r", "LC_ALL=C", "LANG=C.UTF-8",
		"TERM=xterm", "USER=root", "AWS_SECRET_ACCESS_KEY=x", "GL_USER=bob", "TZ=UTC", "GOFLAGS=-x", "PASS=1", "PASS=2"}
	got := Env(parent, "ci", "/s", []string{"PASS", "MISSING"}, []string{"GITPLUS_CHECK_PR=p", "PATH=/override"})
	want := []string{"PATH=/override", "LC_ALL=C", "LANG=C.UTF-8", "TERM=xterm", "USER=ci", "TZ=UTC", "LOGNAME=ci",
		"HOME=/s/home", "TMPDIR=/s/tmp", "XDG_CONFIG_HOME=/s/home/.config", "XDG_CACHE_HOME=/s/home/.cache",
		"XDG_DATA_HOME=/s/home/.local/share", "XDG_STATE_HOME=/s/home/.local/state", "XDG_RUNTIME_DIR=/s/run",
		"PASS=2", "GITPLUS_CHECK_PR=p"}
	if !slices.Equal(got, want) {
		t.Errorf("Env:\n got %q\nwant %q", got, want)
	}
}

func TestWithout(t *testing.T) {
	base := t.TempDir()
	repo := filepath.Join(base, "clone", ".git")
	objects := filepath.Join(repo, "objects")
	if err := os.MkdirAll(objects, 0o755); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(base, "link")
	if err := os.Symlink(filepath.Join(base, "clone"), link); err != nil {
		t.Fatal(err)
	}
	home := filepath.Join(base, "home")
	p := Policy{
		Exec:   []string{"/usr", "/", base, "/usr/bin", filepath.Join(home, "go", "bin")},
		Read:   []string{objects, link, "/etc/passwd", home},
		Write:  []string{filepath.Join(base, "scratch"), filepath.Join(repo, "refs")},
		Caches: []string{repo, filepath.Join(base, "cache"), filepath.Join(home, ".cache", "go-build")},
	}
	got, dropped := p.Without([]string{repo, home, filepath.Join(home, ".ssh")}, []string{repo, filepath.Join(home, ".ssh")})
	want := Policy{Exec: []string{"/usr", "/usr/bin", filepath.Join(home, "go", "bin")}, Read: []string{objects, "/etc/passwd"},
		Write: []string{filepath.Join(base, "scratch")}, Caches: []string{filepath.Join(base, "cache"), filepath.Join(home, ".cache", "go-build")}}
	if !slices.Equal(got.Exec, want.Exec) || !slices.Equal(got.Read, want.Read) || !slices.Equal(got.Write, want.Write) || !slices.Equal(got.Caches, want.Caches) {
		t.Errorf("Without:\n got %+v\nwant %+v", got, want)
	}
	if wantDropped := []string{"/", base, link, home, filepath.Join(repo, "refs"), repo}; !slices.Equal(dropped, wantDropped) {
		t.Errorf("dropped %q, want %q", dropped, wantDropped)
	}
}

// Required refuses a kernel without Landlock; best-effort runs env-only.
func TestDecide(t *testing.T) {
	defer func(p func() (int, string)) { probe = p }(probe)
	probe = func() (int, string) { return 0, "landlock_create_ruleset: function not implemented" }
	if _, err := Decide(Required); err == nil || !strings.Contains(err.Error(), "function not implemented") || !strings.Contains(err.Error(), "best-effort") {
		t.Errorf("required without Landlock: %v", err)
	}
	c, err := Decide(BestEffort)
	if err != nil || c.String() != RecordEnvOnly || !strings.Contains(c.Describe(Policy{}), "not confined") {
		t.Errorf("best-effort without Landlock: %v %q %q", err, c, c.Describe(Policy{}))
	}
	probe = func() (int, string) { return 5, "" }
	if c, err := Decide(Required); err != nil || c.String() != "landlock-5" || !strings.Contains(c.Describe(Policy{}), "can still signal") {
		t.Errorf("required with ABI 5: %v %q", err, c.Describe(Policy{}))
	}
	if c, _ := Decide(Off); c.String() != RecordOff {
		t.Errorf("off: %q", c)
	}
	for _, s := range []string{"", "required", "best-effort", "off"} {
		if _, err := ParseMode(s); err != nil {
			t.Errorf("ParseMode(%q): %v", s, err)
		}
	}
	if _, err := ParseMode("on"); err == nil {
		t.Error("ParseMode(on) accepted")
	}
}

// The launcher's own command line and environment show nothing of the
// worker's.
func TestLauncherRevealsNothing(t *testing.T) {
	t.Setenv("GITPLUS_KEY", "/the/key")
	cmd, release, err := Command{Argv: []string{"true"}, Env: []string{"PATH=/usr/bin:/bin"}, Confinement: Confinement{}}.Cmd(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	if strings.Join(cmd.Args[1:], " ") != LauncherArg || !slices.Equal(cmd.Env, []string{"PATH=/usr/bin:/bin"}) {
		t.Errorf("launcher %q with environment %q", cmd.Args, cmd.Env)
	}
	if _, err := exec.LookPath(cmd.Path); err != nil {
		t.Error(err)
	}
	if err := cmd.Run(); err != nil {
		t.Error(err)
	}
}

func TestParseCache(t *testing.T) {
	for _, c := range []struct {
		in      string
		want    Cache
		wantErr string
	}{
		{in: "/var/cache/go", want: Cache{Dir: "/var/cache/go"}},
		{in: "GOCACHE=/var/cache/go-build", want: Cache{Env: "GOCACHE", Dir: "/var/cache/go-build"}},
		// A directory whose name holds "=" (t.TempDir of a subtest named
		// "bound=true") is a directory, not NAME=DIR.
		{in: "/tmp/TestX/bound=true/008", want: Cache{Dir: "/tmp/TestX/bound=true/008"}},
		{in: "GOCACHE=/tmp/a=b/", want: Cache{Env: "GOCACHE", Dir: "/tmp/a=b"}},
		{in: "relative/dir", wantErr: "absolute path"},
		{in: "GOCACHE=relative", wantErr: "absolute path"},
		{in: "1BAD=/x", wantErr: "not an environment variable name"},
	} {
		got, err := ParseCache(c.in)
		if c.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), c.wantErr) {
				t.Errorf("ParseCache(%q) = %v, %v; want an error saying %q", c.in, got, err, c.wantErr)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("ParseCache(%q) = %+v, %v; want %+v", c.in, got, err, c.want)
		}
	}
}

// A write-only grant: the command creates, writes and removes files there
// but reads and lists nothing, and a rename cannot carry a file from it
// into a readable directory.
func TestWriteOnly(t *testing.T) {
	abi, why := ABI()
	if abi < 2 {
		t.Skipf("this kernel's Landlock cannot rename across directories (ABI %d; %s)", abi, why)
	}
	base := t.TempDir()
	wo, rw := filepath.Join(base, "wo"), filepath.Join(base, "wo", "rw")
	if err := os.MkdirAll(rw, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(wo, "there"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	p := System(os.Getenv("PATH")).Merge(Policy{WriteOnly: []string{wo}, Write: []string{rw}})
	got := lines(run(t, Confinement{ABI: abi}, p, wo, Env(os.Environ(), "", "", nil, nil), `
try() { name=$1; shift; if "$@" >/dev/null 2>&1; then echo "$name: ok"; else echo "$name: denied"; fi; }
try write sh -c 'echo y >new'
try read cat there
try read-new cat new
try list ls .
try mkdir sh -c 'mkdir d && echo z >d/f'
try remove rm there
try rename-out mv new rw/new
try read-rw sh -c 'echo w >rw/f && cat rw/f'
`))
	want := map[string]string{"write": "ok", "read": "denied", "read-new": "denied", "list": "denied", "mkdir": "ok", "remove": "ok",
		"rename-out": "denied", "read-rw": "ok"}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: %q, want %q", k, got[k], v)
		}
	}
}
