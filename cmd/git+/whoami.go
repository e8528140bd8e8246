package main

// git+ whoami: the signing key and what it may do here.

import (
	"github.com/urfave/cli/v2"

	"github.com/gitplus/gitplus/receive/repo"
)

func init() {
	register(&cli.Command{
		Name:   "whoami",
		Usage:  "print the signing key's fingerprint, member name and capabilities (with --branch: the branch's protection and what this key may do there)",
		Flags:  []cli.Flag{jsonFlag(), remoteFlag(), &cli.StringFlag{Name: "branch", Usage: "also show this branch's protection and whether this key may push, land and run the queue on it"}},
		Action: nargs(0, 0, "usage: git+ whoami [--branch B] [--json]", whoamiAction),
	})
}

func whoamiAction(c *cli.Context) error {
	key, err := loadKey(c)
	if err != nil {
		return fail(1, err)
	}
	_, t, err := readTrust(c)
	if err != nil {
		return fail(1, err)
	}
	out, err := repo.Whoami(t, key, c.String("branch"))
	if err != nil {
		return failed(err)
	}
	return printView(c, out)
}
