package main

// git+ member {add,change,remove,list,allowed-signers}: the members of
// refs/hub/trust.

import (
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/gitplus/gitplus/hubrefs"
	"github.com/gitplus/gitplus/hubrefs/trust"
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
			Action:    memberRemove,
		},
		&cli.Command{
			Name:   "list",
			Usage:  "list the members, their key fingerprints and capabilities",
			Flags:  []cli.Flag{jsonFlag(), remoteFlag()},
			Action: memberList,
		},
		&cli.Command{
			Name:   "allowed-signers",
			Usage:  "print the members' keys as git's gpg.ssh.allowedSignersFile",
			Flags:  []cli.Flag{remoteFlag()},
			Action: memberAllowedSigners,
		},
		memberTokenCommand(), // token.go
	))
}

// adminContext opens the repository, folds trust and checks that the
// signing key belongs to a member holding repo.admin.
func adminContext(c *cli.Context) (*hubRepo, *trust.State, *hubKey, *trust.Member, error) {
	s, err := openSigning(c, trust.CapAdmin)
	if err != nil {
		return nil, nil, nil, nil, err
	}
	return s.h, s.t, s.key, s.m, nil
}

// appendTrust judges a trust event against the current state and appends it.
func appendTrust(h *hubRepo, t *trust.State, key *hubKey, m *trust.Member, payload any) (string, error) {
	ev, err := newEvent(payload, t.Tip, key, time.Now())
	if err != nil {
		return "", err
	}
	if err := trust.Authorize(ev, t); err != nil {
		var ee *trust.EventError
		if errors.As(err, &ee) {
			err = ee.Err
		}
		return "", fmt.Errorf("%s refused, nothing written: %w", ev.Type, err)
	}
	id, err := h.appendEvent(hubrefs.TrustRef, payload, key, m.Name, t)
	if err != nil {
		return "", err
	}
	return id.String(), nil
}

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
			k, err := readKeyArg(c.String("key"))
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
		h, t, key, m, err := adminContext(c)
		if err != nil {
			return fail(1, err)
		}
		var before []string // member change: the capabilities held until now
		if typ == hubrefs.TypeMemberChanged {
			cur, ok := t.Members[name]
			if !ok {
				return fail(1, fmt.Errorf("no member %q in %s (see `git+ member list`)", name, hubrefs.TrustRef))
			}
			if keyLine == "" {
				keyLine = cur.KeyLine
			}
			if !c.IsSet("cap") {
				caps = append([]string(nil), cur.Caps...)
			}
			if caps, err = edit.apply(name, caps); err != nil {
				return fail(1, err)
			}
			before = cur.Caps
		} else if _, ok := t.Members[name]; ok {
			return fail(1, fmt.Errorf("member %q already exists in %s: use `git+ member change %s`", name, hubrefs.TrustRef, name))
		}
		payload := hubrefs.MemberAdded{
			Base: hubrefs.Base{Type: typ, Repo: t.RepoID},
			Name: name, Key: keyLine, Caps: caps,
		}
		id, err := appendTrust(h, t, key, m, payload)
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
	if c.NArg() != 1 {
		return usageErr("usage: git+ member remove NAME")
	}
	name := c.Args().First()
	h, t, key, m, err := adminContext(c)
	if err != nil {
		return fail(1, err)
	}
	if _, ok := t.Members[name]; !ok {
		return fail(1, fmt.Errorf("no member %q in %s (see `git+ member list`)", name, hubrefs.TrustRef))
	}
	payload := hubrefs.MemberRemoved{Base: hubrefs.Base{Type: hubrefs.TypeMemberRemoved, Repo: t.RepoID}, Name: name}
	id, err := appendTrust(h, t, key, m, payload)
	if err != nil {
		return fail(1, err)
	}
	fmt.Fprintf(c.App.ErrWriter, "member.removed %s\n", name)
	fmt.Fprintln(c.App.Writer, id)
	return nil
}

type memberJSON struct {
	Name        string   `json:"name"`
	Key         string   `json:"key"`
	Fingerprint string   `json:"fingerprint"`
	Caps        []string `json:"caps"`
}

func readTrust(c *cli.Context) (*hubRepo, *trust.State, error) {
	h, err := openHub(c)
	if err != nil {
		return nil, nil, err
	}
	t, err := h.trust()
	return h, t, err
}

func memberList(c *cli.Context) error {
	if c.NArg() != 0 {
		return usageErr("usage: git+ member list [--json]")
	}
	_, t, err := readTrust(c)
	if err != nil {
		return fail(1, err)
	}
	out := []memberJSON{}
	for _, n := range t.MemberNames() {
		m := t.Members[n]
		caps := append([]string{}, m.Caps...)
		sort.Strings(caps)
		out = append(out, memberJSON{Name: m.Name, Key: m.KeyLine, Fingerprint: fingerprint(m.Key), Caps: caps})
	}
	if wantJSON(c) {
		return printJSON(c, out)
	}
	for _, m := range out {
		fmt.Fprintf(c.App.Writer, "%-16s %s  %s\n", m.Name, m.Fingerprint, strings.Join(m.Caps, ","))
	}
	return nil
}

// allowedSignerPrincipal is the principal of a member in the allowed
// signers file: the e-mail of the member's event identity. git finds the
// principal by key (ssh-keygen -Y find-principals), so it only has to be
// unique and free of spaces.
func allowedSignerPrincipal(name string) string { return name + "@hub.invalid" }

func memberAllowedSigners(c *cli.Context) error {
	if c.NArg() != 0 {
		return usageErr("usage: git+ member allowed-signers")
	}
	_, t, err := readTrust(c)
	if err != nil {
		return fail(1, err)
	}
	for _, n := range t.MemberNames() {
		m := t.Members[n]
		fmt.Fprintf(c.App.Writer, "%s namespaces=\"git\" %s\n", allowedSignerPrincipal(m.Name), m.KeyLine)
	}
	return nil
}
