package main

// The sandbox flags of `check run` and `check worker` (docs/ci.md); the
// sandbox is package receive/sandbox, composed by receive/checkrun.

import (
	"github.com/urfave/cli/v2"

	"github.com/gitplus/gitplus/receive/checkrun"
	"github.com/gitplus/gitplus/receive/sandbox"
)

func sandboxFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "sandbox", Value: string(sandbox.BestEffort), Usage: "how the command is confined: required (refuse to run it where the kernel has no Landlock), best-effort (Landlock where the kernel has it, else the environment allowlist alone), off (the worker's environment and files, as before)"},
		&cli.StringSliceFlag{Name: "pass-env", Usage: "also give the command this variable of the worker's environment (repeat); it gets PATH, the locale, TERM, USER, a scratch HOME and TMPDIR and the GITPLUS_CHECK_* variables, nothing else"},
		&cli.StringSliceFlag{Name: "cache", Usage: "a directory the command may write, shared by every run (repeat): DIR, or NAME=DIR to also set NAME to it (GOCACHE=/var/cache/ci/go-build)"},
		&cli.StringSliceFlag{Name: "read", Usage: "a file or directory the command may also read and run (repeat): a CI script's directory, a toolchain outside /usr"},
		&cli.StringFlag{Name: "run-as", Usage: "run the command as this user (the worker must run as root)"},
		&cli.BoolFlag{Name: "confine-reads", Usage: "a lane's candidate reads, of its checkout, only its partition's paths and reads (no .git; the rest write-only), so an undeclared input fails the check; needs Landlock"},
	}
}

// sandboxOptions reads the sandbox flags (checkrun.SandboxOf); a mistake
// is a usage error.
func sandboxOptions(c *cli.Context) (checkrun.Sandbox, error) {
	sb, err := checkrun.SandboxOf(c.String("sandbox"), c.StringSlice("pass-env"), c.StringSlice("cache"), c.StringSlice("read"), c.String("run-as"), c.Bool("confine-reads"))
	if err != nil {
		return sb, usageErr("%v", err)
	}
	return sb, nil
}
