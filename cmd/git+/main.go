// Command git+ is the git+ CLI: a server-side policy plugin for git whose
// protected branches advance only to revisions the repository's own signed
// records justify. See README.md for the verbs.
//
// Each verb group lives in a file of its own and registers itself with
// register() from an init function, so verbs can be added without touching
// this file.
package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"sort"

	"github.com/urfave/cli/v2"

	"github.com/gitplus/gitplus/hooks/install"
	"github.com/gitplus/gitplus/hubrefs/sshsign"
	"github.com/gitplus/gitplus/receive/termtext"
)

var commands []*cli.Command

// register adds top-level verbs to the CLI; call it from init().
func register(cmds ...*cli.Command) { commands = append(commands, cmds...) }

// globalFlags are accepted before the verb; jsonFlag is also accepted after it.
func globalFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "repo", Usage: "git directory of the repository (default: the current git dir)"},
		&cli.StringFlag{Name: "key", Usage: "SSH private key file that signs events (default: $GITPLUS_KEY, then the first key in ssh-agent)", EnvVars: []string{"GITPLUS_KEY"}},
		jsonFlag(),
	}
}

func jsonFlag() cli.Flag {
	return &cli.BoolFlag{Name: "json", Usage: "print machine-readable JSON"}
}

// exitError carries an exit code: 1 refused or failed, 2 usage, 128 merge-tree errors.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

// fail returns an error that exits with code after printing err.
func fail(code int, err error) error { return &exitError{code: code, err: err} }

// usageErr is a usage mistake (exit 2).
func usageErr(format string, args ...any) error {
	return fail(2, fmt.Errorf(format, args...))
}

func newApp() *cli.App {
	sort.SliceStable(commands, func(i, j int) bool { return commands[i].Name < commands[j].Name })
	for _, c := range commands {
		// --json on every verb (docs/cli.md); hub verbs get it in runLeaf,
		// serve and hook speak HTTP and git's hook protocol.
		if !c.SkipFlagParsing && c.Name != "serve" && c.Name != "hook" {
			withJSON(c, c.Name)
		}
	}
	return &cli.App{
		Name:                 "git+",
		Usage:                "signed records and an exact-candidate merge queue for protected git branches",
		Version:              install.BuildVersion(),
		Flags:                globalFlags(),
		Commands:             commands,
		EnableBashCompletion: false,
		HideHelpCommand:      true,
		// Every text the CLI writes goes through termtext (docs/cli.md,
		// "Text on a terminal"): record text cannot act on a terminal.
		// --json switches standard output to JSON's escapes (wantJSON).
		Writer:    termtext.NewWriter(os.Stdout),
		ErrWriter: termtext.NewWriter(os.Stderr),
		OnUsageError: func(c *cli.Context, err error, isSubcommand bool) error {
			return fail(2, err)
		},
		ExitErrHandler: func(c *cli.Context, err error) {},
	}
}

func main() {
	if len(os.Args) == 3 && os.Args[1] == "hook" && os.Args[2] == "pre-receive" {
		// The installed hook's exact command line, run on every push:
		// judged without building the CLI (see preReceiveFast).
		os.Exit(preReceiveFast())
	}
	if len(os.Args) > 4 && os.Args[1] == "hook" && os.Args[2] == "wake-run" {
		// A wake rule's run, started by post-receive: the rule's command
		// line follows untouched (no flag of it is git+'s).
		os.Exit(wakeRunFast(os.Args[3], os.Args[4:]))
	}
	if len(os.Args) > 1 && os.Args[1] == "-Y" {
		// git signing a push certificate, with gpg.ssh.program pointed at
		// this binary by git+'s own pushes (docs/serving.md "git+ verbs
		// identify themselves").
		os.Exit(sshsign.Keygen(os.Args[1:], os.Getenv, os.Stderr))
	}
	os.Exit(run(os.Args))
}

// run executes the CLI and returns the process exit code.
func run(args []string) int {
	if len(args) > 1 && args[1] == "help" {
		// `git+ help [VERB [SUBVERB]]` is `git+ [VERB [SUBVERB]] --help`.
		args = append(append([]string{args[0]}, args[2:]...), "--help")
	}
	app := newApp()
	if len(args) > 0 {
		// Flags after positional arguments, for every verb (args.go).
		args = append([]string{args[0]}, normalizeArgs(app.Flags, app.Commands, args[1:])...)
	}
	err := app.Run(args)
	stderr := termtext.NewWriter(app.ErrWriter)
	defer func() {
		for _, w := range []io.Writer{app.Writer, stderr} {
			if t, ok := w.(*termtext.Writer); ok {
				t.Flush()
			}
		}
	}()
	if err == nil {
		return 0
	}
	var ee *exitError
	if errors.As(err, &ee) {
		if ee.err != nil && ee.err.Error() != "" {
			fmt.Fprintln(stderr, "git+:", ee.err)
		}
		return ee.code
	}
	var ce cli.ExitCoder
	if errors.As(err, &ce) {
		if err.Error() != "" {
			fmt.Fprintln(stderr, "git+:", err)
		}
		return ce.ExitCode()
	}
	fmt.Fprintln(stderr, "git+:", err)
	return 1
}

// nargs is action run after checking it has min to max arguments; usage
// is the usage line a mistake prints (exit 2).
func nargs(min, max int, usage string, action cli.ActionFunc) cli.ActionFunc {
	return func(c *cli.Context) error {
		if c.NArg() < min || c.NArg() > max {
			return usageErr("%s", usage)
		}
		return action(c)
	}
}
