package main

// git+ team {set,list}: the teams of refs/hub/trust (docs/trust.md,
// "Teams").

import (
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/gitplus/gitplus/hubrefs/trust"
	"github.com/gitplus/gitplus/receive/repo"
)

func init() {
	register(hubGroup("team", "set and list the teams rules name as approvers (team:NAME)",
		&cli.Command{
			Name:      "set",
			Usage:     "set a team to exactly these members (repo.admin only); no member leaves it defined and empty",
			ArgsUsage: "NAME [MEMBER]...",
			Flags:     []cli.Flag{remoteFlag()},
			Action:    nargs(1, 1<<20, "usage: git+ team set NAME [MEMBER]...", teamSet),
		},
		&cli.Command{
			Name:   "list",
			Usage:  "list the teams and their members",
			Flags:  []cli.Flag{jsonFlag(), remoteFlag()},
			Action: nargs(0, 0, "usage: git+ team list [--json]", teamList),
		},
	))
}

func teamSet(c *cli.Context) error {
	args := c.Args().Slice()
	name, members := args[0], args[1:]
	if err := trust.ValidName(name); err != nil {
		return fail(1, fmt.Errorf("team name %q: %w", name, err))
	}
	for _, m := range members {
		if err := trust.ValidName(m); err != nil {
			return fail(1, fmt.Errorf("member name %q: %w", m, err))
		}
	}
	s, err := adminContext(c)
	if err != nil {
		return fail(1, err)
	}
	id, err := s.SetTeam(name, members)
	if err != nil {
		return fail(1, err)
	}
	fmt.Fprintf(c.App.ErrWriter, "team.set %s (%d members)\n", name, len(members))
	fmt.Fprintln(c.App.Writer, id)
	return nil
}

func teamList(c *cli.Context) error {
	_, t, err := readTrust(c)
	if err != nil {
		return fail(1, err)
	}
	return printLines(c, repo.Teams(t))
}
