package main

// Sessions as a user types them: testdata/script/*.txtar, run by
// github.com/rogpeppe/go-internal/testscript against the built git+ binary
// and the real git, each in a throwaway work directory whose users have
// their own HOME, SSH key and git config (testdata/script/README.md).

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/gitplus/gitplus/fixtures"
)

func TestScript(t *testing.T) {
	bin := fixtures.Binary(t)
	testscript.Run(t, testscript.Params{
		Dir:                 filepath.Join("testdata", "script"),
		RequireExplicitExec: true,
		RequireUniqueNames:  true,
		Setup: func(env *testscript.Env) error {
			return scriptSetup(env, filepath.Dir(bin))
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"capture": scriptCapture,
			"exits":   scriptExits,
			"serve":   scriptServe,
			"until":   scriptUntil,
		},
	})
}

// scriptSetup puts the built git+ first on PATH and isolates git: no
// system configuration, HOME inside the work directory (each script points
// HOME at one of its users' homes), no ssh-agent, and fixed commit dates so
// source commit ids do not depend on the clock. testscript starts from an
// empty environment apart from PATH, so nothing else of the caller's leaks
// in (GITPLUS_KEY, SSH_AUTH_SOCK, GIT_*).
func scriptSetup(env *testscript.Env, binDir string) error {
	if binDir == "" {
		return fmt.Errorf("no git+ binary directory")
	}
	env.Setenv("PATH", binDir+string(os.PathListSeparator)+env.Getenv("PATH"))
	env.Setenv("HOME", filepath.Join(env.WorkDir, "home"))
	env.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	env.Setenv("GIT_AUTHOR_DATE", "1700000000 +0000")
	env.Setenv("GIT_COMMITTER_DATE", "1700000000 +0000")
	return nil
}

// scriptCapture is `capture [-stderr] VAR [REGEXP]`: sets VAR to the last
// non-empty line of the previous command's standard output (the id a writer
// prints last), failing when there is none. With REGEXP, VAR is its first
// match's first group (or the whole match) in that output instead — in the
// standard error with -stderr (a command a hint names, to follow it).
func scriptCapture(ts *testscript.TestScript, neg bool, args []string) {
	stream := "stdout"
	if len(args) > 0 && args[0] == "-stderr" {
		stream, args = "stderr", args[1:]
	}
	if neg || len(args) < 1 || len(args) > 2 {
		ts.Fatalf("usage: capture [-stderr] VAR [REGEXP]")
	}
	text := ts.ReadFile(stream)
	if len(args) == 2 {
		re, err := regexp.Compile(args[1])
		ts.Check(err)
		m := re.FindStringSubmatch(text)
		if m == nil {
			ts.Fatalf("capture %s: no match for %q in %s", args[0], args[1], stream)
		}
		v := m[0]
		if len(m) > 1 {
			v = m[1]
		}
		ts.Setenv(args[0], v)
		ts.Logf("%s=%s", args[0], v)
		return
	}
	lines := strings.Split(strings.TrimSpace(text), "\n")
	last := strings.TrimSpace(lines[len(lines)-1])
	if last == "" {
		ts.Fatalf("capture %s: the previous command printed nothing on standard %s", args[0], strings.TrimPrefix(stream, "std"))
	}
	ts.Setenv(args[0], last)
	ts.Logf("%s=%s", args[0], last)
}

// scriptExits is `exits N PROGRAM ARGS...`: runs PROGRAM like exec and
// fails unless it exits with status N (its output is kept for stdout and
// stderr, as after exec).
func scriptExits(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: exits STATUS PROGRAM [ARGS...]")
	}
	want, err := strconv.Atoi(args[0])
	if err != nil {
		ts.Fatalf("exits: status %q is not a number", args[0])
	}
	got := 0
	if err := ts.Exec(args[1], args[2:]...); err != nil {
		code, ok := exitCode(err)
		if !ok {
			ts.Fatalf("exits: %s: %v", args[1], err)
		}
		got = code
	}
	if got != want {
		ts.Fatalf("%s exited %d, want %d", args[1], got, want)
	}
}

func exitCode(err error) (int, bool) {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode(), true
	}
	return 0, false
}
