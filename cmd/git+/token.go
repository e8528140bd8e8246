package main

// git+ member token {issue,revoke,list}: per-member HTTP tokens for git+
// serve (hooks/serve, docs/serving.md "Tokens"). They run on the server, as
// its operator: they need write access to the git directory, not a key.

import (
	"fmt"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/gitplus/gitplus/hooks/serve"
	"github.com/gitplus/gitplus/hubrefs"
)

func memberTokenCommand() *cli.Command {
	return &cli.Command{
		Name:      "token",
		Usage:     "issue, revoke and list a member's HTTP tokens for git+ serve (git+ member token issue|revoke|list)",
		ArgsUsage: "issue NAME | revoke NAME [--id ID] | list [--json]",
		Subcommands: []*cli.Command{
			{
				Name:      "issue",
				Usage:     "print a new token for member NAME (once; only its hash is kept)",
				ArgsUsage: "NAME",
				Action: inGitDir("usage: git+ member token issue NAME", 1, 1, func(c *cli.Context, gitDir string) error {
					name := c.Args().First()
					token, rec, m, err := serve.IssueToken(gitDir, name, time.Now())
					if err != nil {
						return err
					}
					fmt.Fprintf(c.App.ErrWriter, "issued token %s for %s (%s) in %s: use it as the HTTP password with user name %s; it is not shown again\n",
						rec.ID, name, hubrefs.Fingerprint(m.Key), gitDir, name)
					fmt.Fprintln(c.App.Writer, token)
					return nil
				}),
			},
			{
				Name:      "revoke",
				Usage:     "revoke every token of member NAME, or only --id ID",
				ArgsUsage: "NAME",
				Flags:     []cli.Flag{&cli.StringFlag{Name: "id", Usage: "revoke only this token (its id from git+ member token list)"}},
				Action: inGitDir("usage: git+ member token revoke NAME [--id ID]", 1, 1, func(c *cli.Context, gitDir string) error {
					n, err := serve.RevokeTokens(gitDir, c.Args().First(), c.String("id"))
					if err == nil {
						fmt.Fprintf(c.App.ErrWriter, "revoked %d token(s) of %s in %s\n", n, c.Args().First(), gitDir)
					}
					return err
				}),
			},
			{
				Name:  "list",
				Usage: "list the tokens: member, id, issue time (--json: {\"tokens\":[{\"name\",\"id\",\"created\"}]})",
				Flags: []cli.Flag{jsonFlag()},
				Action: inGitDir("usage: git+ member token list [--json]", 0, 0, func(c *cli.Context, gitDir string) error {
					recs, err := serve.ListTokens(gitDir)
					if err != nil {
						return err
					}
					return printView(c, serve.TokenListOf(recs))
				}),
			},
		},
	}
}
