package main

// git+ member {add,change,remove,list,allowed-signers}: the members of
// refs/hub/trust.

import (
	"fmt"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/gitplus/gitplus/hubrefs"
	"github.com/gitplus/gitplus/hubrefs/trust"
	"github.com/gitplus/gitplus/receive/repo"
)

func init() {
	register(hubGroup("member", "add, change, remove and list the members of the trust log",
		&cli.Command{
			Name:      "add",
			Usage:     "add a member with a public key and capabilities (repo.admin only)",
			ArgsUsage: "NAME",
			Flags: []cli.Flag{
				&cli.StringFlag{Name: "key", Usage: "the member's public key: an authorized_keys line or a key file"},
				&cli.StringSliceFlag{Name: "cap", Usage: "a capability (repeat): repo.admin, source.push, hub.pr, hub.review, hub.queue, hub.check:NAME"},
				remoteFlag(),
			},
			Action: memberAddOrChange(hubrefs.TypeMemberAdded),
		},
		&cli.Command{
			Name:      "change",
			Usage:     "replace a member's key and/or capabilities (repo.admin only)",
			ArgsUsage: "NAME",
			Flags: []cli.Flag{
				&cli.StringFlag{Name: "key", Usage: "the new public key (default: keep)"},
				&cli.StringSliceFlag{Name: "cap", Usage: "the new capabilities, all of them (default: keep)"},
				&cli.StringSliceFlag{Name: "add-cap", Usage: "a capability to add to those held (repeat)"},
				&cli.StringSliceFlag{Name: "remove-cap", Usage: "a capability to take away (repeat)"},
				remoteFlag(),
			},
			Action: memberAddOrChange(hubrefs.TypeMemberChanged),
		},
		&cli.Command{
			Name:      "remove",
			Usage:     "remove a member (repo.admin only); their approvals and checks stop counting",
			ArgsUsage: "NAME",
			Flags:     []cli.Flag{remoteFlag()},
			Action:    nargs(1, 1, "usage: git+ member remove NAME", memberRemove),
		},
		&cli.Command{
			Name:   "list",
			Usage:  "list the members, their key fingerprints and capabilities",
			Flags:  []cli.Flag{jsonFlag(), remoteFlag()},
			Action: nargs(0, 0, "usage: git+ member list [--json]", memberList),
		},
		&cli.Command{
			Name:   "allowed-signers",
			Usage:  "print the members' keys as git's gpg.ssh.allowedSignersFile",
			Flags:  []cli.Flag{remoteFlag()},
			Action: nargs(0, 0, "usage: git+ member allowed-signers", memberAllowedSigners),
		},
		memberTokenCommand(), // token.go
	))
}

// adminContext opens the signing context of the trust writers (repo.admin).
func adminContext(c *cli.Context) (*repo.Signing, error) { return openSigning(c, trust.CapAdmin) }

func memberAddOrChange(typ string) cli.ActionFunc {
	return func(c *cli.Context) error {
		if c.NArg() != 1 {
			return usageErr("usage: git+ member %s NAME [--key KEY] [--cap CAP]...", strings.TrimPrefix(typ, "member."))
		}
		name := c.Args().First()
		if err := trust.ValidName(name); err != nil {
			return fail(1, fmt.Errorf("member name %q: %w", name, err))
		}
		caps := c.StringSlice("cap")
		for _, cp := range caps {
			if err := trust.ValidCap(cp); err != nil {
				return fail(1, fmt.Errorf("--cap %q: %w", cp, err))
			}
		}
		var keyLine string
		if c.IsSet("key") {
			k, err := repo.ReadKeyArg(c.String("key"))
			if err != nil {
				return fail(1, err)
			}
			keyLine = k
		}
		if typ == hubrefs.TypeMemberAdded {
			if keyLine == "" {
				return usageErr("git+ member add %s: --key KEY is required", name)
			}
			if len(caps) == 0 {
				return usageErr("git+ member add %s: give at least one --cap", name)
			}
		} else if keyLine == "" && !c.IsSet("cap") && !c.IsSet("add-cap") && !c.IsSet("remove-cap") {
			return usageErr("git+ member change %s: give --key, --cap, --add-cap or --remove-cap", name)
		}
		edit, err := capEditFlags(c)
		if err != nil {
			return err
		}
		s, err := adminContext(c)
		if err != nil {
			return fail(1, err)
		}
		var id string
		var before []string // member change: the capabilities held until now
		if typ == hubrefs.TypeMemberChanged {
			id, before, caps, err = s.ChangeMember(name, keyLine, func(held []string) ([]string, error) {
				if c.IsSet("cap") {
					held = caps
				}
				return edit.Apply(name, held)
			})
		} else {
			id, err = s.AddMember(name, keyLine, caps)
		}
		if err != nil {
			return fail(1, err)
		}
		fmt.Fprintf(c.App.ErrWriter, "%s %s\n", typ, name)
		if typ == hubrefs.TypeMemberChanged {
			reportCaps(c, name, before, caps)
		}
		fmt.Fprintln(c.App.Writer, id)
		return nil
	}
}

func memberRemove(c *cli.Context) error {
	name := c.Args().First()
	s, err := adminContext(c)
	if err != nil {
		return fail(1, err)
	}
	id, err := s.RemoveMember(name)
	if err != nil {
		return fail(1, err)
	}
	fmt.Fprintf(c.App.ErrWriter, "member.removed %s\n", name)
	fmt.Fprintln(c.App.Writer, id)
	return nil
}

func memberList(c *cli.Context) error {
	_, t, err := readTrust(c)
	if err != nil {
		return fail(1, err)
	}
	return printLines(c, repo.Members(t))
}

func memberAllowedSigners(c *cli.Context) error {
	_, t, err := readTrust(c)
	if err != nil {
		return fail(1, err)
	}
	for _, l := range repo.AllowedSigners(t) {
		fmt.Fprintln(c.App.Writer, l)
	}
	return nil
}
