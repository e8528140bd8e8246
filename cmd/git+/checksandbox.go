package main

// The sandbox flags of `check run` and `check worker` (docs/ci.md); the
// sandbox is package receive/sandbox, composed by receive/checkrun.

import (
	"path/filepath"

	"github.com/urfave/cli/v2"

	"github.com/gitplus/gitplus/receive/checkrun"
	"github.com/gitplus/gitplus/receive/childenv"
	"github.com/gitplus/gitplus/receive/sandbox"
)

func sandboxFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "sandbox", Value: string(sandbox.BestEffort), Usage: "how the command is confined: required (refuse to run it where the kernel has no Landlock), best-effort (Landlock where the kernel has it, else the environment allowlist alone), off (the worker's environment and files, as before)"},
		&cli.StringSliceFlag{Name: "pass-env", Usage: "also give the command this variable of the worker's environment (repeat); it gets PATH, the locale, TERM, USER, a scratch HOME and TMPDIR and the GITPLUS_CHECK_* variables, nothing else"},
		&cli.StringSliceFlag{Name: "cache", Usage: "a directory the command may write, shared by every run (repeat): DIR, or NAME=DIR to also set NAME to it (GOCACHE=/var/cache/ci/go-build)"},
		&cli.StringSliceFlag{Name: "read", Usage: "a file or directory the command may also read and run (repeat): a CI script's directory, a toolchain outside /usr"},
		&cli.StringFlag{Name: "run-as", Usage: "run the command as this user (the worker must run as root)"},
	}
}

// sandboxOptions reads the sandbox flags.
func sandboxOptions(c *cli.Context) (checkrun.Sandbox, error) {
	mode, err := sandbox.ParseMode(c.String("sandbox"))
	if err != nil {
		return checkrun.Sandbox{}, usageErr("--sandbox: %v", err)
	}
	sb := checkrun.Sandbox{Mode: mode, RunAs: c.String("run-as")}
	for _, n := range c.StringSlice("pass-env") {
		if err := childenv.ValidName(n); err != nil {
			return sb, usageErr("--pass-env: %v", err)
		}
		if n == "GITPLUS_KEY" {
			return sb, usageErr("--pass-env GITPLUS_KEY: the key that signs a check's verdict never reaches the command it judges")
		}
		sb.PassEnv = append(sb.PassEnv, n)
	}
	for _, s := range c.StringSlice("cache") {
		ch, err := sandbox.ParseCache(s)
		if err != nil {
			return sb, usageErr("%v", err)
		}
		sb.Caches = append(sb.Caches, ch)
	}
	for _, r := range c.StringSlice("read") {
		// The command runs elsewhere: a relative path is the caller's.
		abs, err := filepath.Abs(r)
		if err != nil {
			return sb, usageErr("--read %s: %v", r, err)
		}
		sb.Reads = append(sb.Reads, abs)
	}
	return sb, nil
}
