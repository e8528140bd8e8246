package main

// git+ --version: the module version and the VCS revision the binary was
// built from (install.BuildVersion; docs/cli.md, "Version").

import (
	"fmt"

	"github.com/urfave/cli/v2"
)

func init() {
	cli.VersionPrinter = func(c *cli.Context) {
		fmt.Fprintf(c.App.Writer, "git+ version %s\n", c.App.Version)
	}
}
