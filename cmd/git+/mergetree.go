package main

// The merge-tree verb: git's `git merge-tree --write-tree`, run by package
// receive/treemerge (which says what it reads and writes).
//
// Decisions: exit codes follow git: 0 clean, 1 conflict, 128 errors
// (unknown revision, missing object, unrelated histories). With --stdin
// every merge is reported on its own line and the exit code is 0 unless an
// error stops the run (then 128).

import (
	"bufio"
	"errors"
	"os"

	"github.com/urfave/cli/v2"

	"github.com/gitplus/gitplus/receive/treemerge"
)

func init() {
	register(&cli.Command{
		Name:      "merge-tree",
		Usage:     "merge two commits' trees as `git merge-tree --write-tree` does",
		ArgsUsage: "OURS THEIRS",
		Description: "Prints the merged tree id and exits 0 when the merge is clean; prints one\n" +
			"`CONFLICT (<kind>): <path>` line per conflicted path and exits 1 otherwise;\n" +
			"exits 128 on errors. With --stdin, reads one `OURS THEIRS` pair per line and\n" +
			"prints `<tree>` or `conflict <path> <path>...` per merge.",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "git-dir", Usage: "git directory (default: --repo, then $GIT_DIR, then discovered from the current directory)"},
			&cli.BoolFlag{Name: "stdin", Usage: "read OURS THEIRS pairs from standard input, one per line"},
			jsonFlag(),
		},
		Action: mergeTreeAction,
	})
}

// errSilent ends a verb with an exit code and nothing more to print.
var errSilent = errors.New("")

func mergeTreeAction(c *cli.Context) error {
	stdin := c.Bool("stdin")
	if stdin && c.NArg() != 0 || !stdin && c.NArg() != 2 {
		return usageErr("usage: git+ merge-tree [--git-dir DIR] OURS THEIRS | --stdin")
	}
	dir, err := mergeTreeGitDir(c)
	if err != nil {
		return fail(128, err)
	}
	s, err := treemerge.Open(dir)
	if err != nil {
		return fail(128, err)
	}
	defer s.Close()
	out := bufio.NewWriter(c.App.Writer)
	defer out.Flush()
	asJSON := wantJSON(c) // one line of mergetree.ResultJSON per merge (docs/cli.md)
	if !stdin {
		clean, err := s.One(c.Args().Get(0), c.Args().Get(1), out, asJSON)
		if err != nil {
			return fail(128, err)
		}
		if !clean {
			return fail(1, errSilent) // a conflict, printed
		}
		return nil
	}
	if err := s.Batch(os.Stdin, out, asJSON); err != nil {
		return fail(128, err)
	}
	return nil
}

// mergeTreeGitDir picks the git directory: --git-dir, the global --repo,
// $GIT_DIR, else the repository containing the current directory.
func mergeTreeGitDir(c *cli.Context) (string, error) {
	d := c.String("git-dir")
	for _, cc := range c.Lineage() {
		if d == "" {
			d = cc.String("repo")
		}
	}
	wd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	return treemerge.GitDir(d, os.Getenv, wd)
}
