package main

// git+ demo [--keep DIR]: the whole story on a throwaway repository, told by
// package hooks/demo (which says what it does). The directory is removed at
// the end unless --keep DIR names where to build it (DIR must not exist or
// be empty).

import (
	"errors"
	"fmt"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/gitplus/gitplus/hooks/demo"
	"github.com/gitplus/gitplus/hooks/wake"
)

func init() {
	register(hubVerb(&cli.Command{
		Name:  "demo",
		Usage: "build a throwaway repository and walk through pull requests, the merge queue, a refused push and verify",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "keep", Usage: "build the demo in DIR (must not exist or be empty) and keep it"},
		},
		Action: nargs(0, 0, "usage: git+ demo [--keep DIR]", demoAction),
	}))
}

func demoAction(c *cli.Context) error {
	bin, err := wake.Executable() // under `go run`, the temporary build, which lives as long as the demo runs
	if err != nil {
		return fail(1, err)
	}
	keep := c.String("keep")
	root, done, err := demo.Prepare(keep)
	if errors.Is(err, demo.ErrKeepDir) {
		return fail(2, fmt.Errorf("--keep: %w", err))
	} else if err != nil {
		return fail(1, err)
	}
	defer done()
	start, out := time.Now(), c.App.Writer
	if err := demo.Run(demo.Options{Dir: root, Binary: bin, Out: out}); err != nil {
		fmt.Fprintf(out, "\nDEMO FAILED after %.1fs: %v\n", time.Since(start).Seconds(), err)
		if keep != "" {
			fmt.Fprintf(out, "the repository is kept in %s\n", root)
		}
		return fail(1, fmt.Errorf("demo failed: %w", err))
	}
	fmt.Fprintf(out, "\nDemo finished in %.1fs.", time.Since(start).Seconds())
	if keep != "" {
		fmt.Fprintf(out, " The repository is kept: %s (bare) and %s (a clone).\n", demo.Bare(root), demo.Work(root))
	} else {
		fmt.Fprintln(out, " The throwaway repository has been removed (keep it with --keep DIR).")
	}
	return nil
}
