package main

// git+ whoami: the signing key and what it may do here.

import (
	"fmt"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/gitplus/gitplus/hubrefs"
)

func init() {
	register(&cli.Command{
		Name:   "whoami",
		Usage:  "print the signing key's fingerprint, member name and capabilities",
		Flags:  []cli.Flag{jsonFlag(), remoteFlag()},
		Action: whoamiAction,
	})
}

type whoamiJSON struct {
	Fingerprint string   `json:"fingerprint"`
	Key         string   `json:"key"`
	Source      string   `json:"source"`
	Member      string   `json:"member,omitempty"`
	Caps        []string `json:"caps"`
}

func whoamiAction(c *cli.Context) error {
	if c.NArg() != 0 {
		return usageErr("usage: git+ whoami [--json]")
	}
	key, err := loadKey(c)
	if err != nil {
		return fail(1, err)
	}
	_, t, err := readTrust(c)
	if err != nil {
		return fail(1, err)
	}
	pub := key.Signer.PublicKey()
	out := whoamiJSON{Fingerprint: fingerprint(pub), Key: hubrefs.AuthorizedKey(pub), Source: key.Source, Caps: []string{}}
	if m, ok := t.MemberByKey(pub); ok {
		out.Member = m.Name
		out.Caps = append(out.Caps, m.Caps...)
	}
	if wantJSON(c) {
		return printJSON(c, out)
	}
	if out.Member == "" {
		fmt.Fprintf(c.App.Writer, "%s not a member\n", out.Fingerprint)
		return nil
	}
	fmt.Fprintf(c.App.Writer, "%s %s %s\n", out.Fingerprint, out.Member, strings.Join(out.Caps, ","))
	return nil
}
