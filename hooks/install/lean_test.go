package install

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/matryer/is"
)

func TestIdentity(t *testing.T) {
	vcs := func(rev, modified string) []debug.BuildSetting {
		return []debug.BuildSetting{{Key: "vcs", Value: "git"}, {Key: "vcs.revision", Value: rev}, {Key: "vcs.modified", Value: modified}}
	}
	for _, tc := range []struct {
		name string
		bi   debug.BuildInfo
		want string
	}{
		{"module version", debug.BuildInfo{Main: debug.Module{Path: "m", Version: "v1.2.3", Sum: "h1:x"}}, "m@v1.2.3 h1:x"},
		{"clean checkout", debug.BuildInfo{Main: debug.Module{Path: "m", Version: "(devel)"}, Settings: vcs("abc", "false")}, "m@abc"},
		{"pseudo-version of a clean checkout", debug.BuildInfo{Main: debug.Module{Path: "m", Version: "v0.0.0-20261202155806-2ed5b5454039"}, Settings: vcs("2ed5b5454039", "false")}, "m@2ed5b5454039"},
		{"dirty checkout", debug.BuildInfo{Main: debug.Module{Path: "m", Version: "(devel)"}, Settings: vcs("abc", "true")}, ""},
		{"dirty pseudo-version", debug.BuildInfo{Main: debug.Module{Path: "m", Version: "v0.0.0-20261202155806-2ed5b5454039+dirty"}, Settings: vcs("2ed5b5454039", "true")}, ""},
		{"no stamp", debug.BuildInfo{Main: debug.Module{Path: "m", Version: "(devel)"}}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := identity(&tc.bi); got != tc.want {
				t.Fatalf("identity = %q, want %q", got, tc.want)
			}
		})
	}
}

// TestLeanHook builds two tiny programs from one commit of a scratch module
// as git+ and git+hook, and checks when install would pick git+hook.
func TestLeanHook(t *testing.T) {
	is := is.New(t)
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go toolchain")
	}
	src, bin := t.TempDir(), t.TempDir()
	run := func(dir string, name string, args ...string) {
		t.Helper()
		cmd := exec.Command(name, args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GOFLAGS=-buildvcs=true", "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t", "GIT_CONFIG_GLOBAL=/dev/null")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
		}
	}
	write := func(rel, content string) {
		t.Helper()
		p := filepath.Join(src, rel)
		is.NoErr(os.MkdirAll(filepath.Dir(p), 0o755))
		is.NoErr(os.WriteFile(p, []byte(content), 0o644))
	}
	write("go.mod", "module example.com/leantest\n\ngo 1.21\n")
	write("cli/main.go", "package main\n\nfunc main() {}\n")
	write("hook/main.go", "package main\n\nfunc main() { println(\"hook\") }\n")
	run(src, "git", "init", "-q")
	run(src, "git", "add", ".")
	run(src, "git", "commit", "-q", "-m", "one")
	build := func(pkg, out string) {
		t.Helper()
		run(src, "go", "build", "-o", filepath.Join(bin, out), "./"+pkg)
	}
	cli := filepath.Join(bin, "git+")

	build("cli", "git+")
	lean, why := LeanHook(cli)
	is.Equal(lean, "") // nothing beside it
	is.True(strings.Contains(why, "no executable git+hook"))

	build("hook", HookBinary)
	lean, why = LeanHook(cli)
	is.Equal(lean, filepath.Join(bin, HookBinary)) // same clean commit: used
	is.Equal(why, "")
	is.True(strings.Contains(script("pre-receive", cli, lean), "exec \"$gitplus_hook\" pre-receive"))
	is.True(strings.Contains(script("post-receive", cli, lean), "exec \"$gitplus_hook\" post-receive \"$gitplus_bin\"")) // the lean post-receive, told where git+ is

	// A git+hook from another commit is not used.
	write("hook/main.go", "package main\n\nfunc main() { println(\"hook 2\") }\n")
	run(src, "git", "commit", "-q", "-am", "two")
	build("hook", HookBinary)
	lean, why = LeanHook(cli)
	is.Equal(lean, "")
	is.True(strings.Contains(why, "other source"))

	// Nor beside a git+ built from uncommitted changes.
	write("cli/main.go", "package main\n\nfunc main() { println() }\n")
	build("cli", "git+")
	lean, why = LeanHook(cli)
	is.Equal(lean, "")
	is.True(strings.Contains(why, "clean checkout"))

	// Nor when it is not executable.
	is.NoErr(os.Chmod(filepath.Join(bin, HookBinary), 0o644))
	lean, _ = LeanHook(cli)
	is.Equal(lean, "")
}
