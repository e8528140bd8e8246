package main

// git+ demo [--keep DIR]: the whole story on a throwaway repository, told by
// package hooks/demo (which says what it does). The directory is removed at
// the end unless --keep DIR names where to build it (DIR must not exist or
// be empty).

import (
	"errors"
	"fmt"

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
	err = demo.Tell(c.String("keep"), bin, c.App.Writer)
	if errors.Is(err, demo.ErrKeepDir) {
		return fail(2, fmt.Errorf("--keep: %w", err))
	} else if err != nil {
		return fail(1, err)
	}
	return nil
}
