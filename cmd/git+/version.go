package main

// git+ --version: the module version and the VCS revision the binary was
// built from, as the Go toolchain stamped them (docs/cli.md, "Version").

import (
	"fmt"
	"runtime/debug"
	"strings"

	"github.com/urfave/cli/v2"
)

// buildVersion describes the running binary: module path and version, then
// the revision, its commit time and "+dirty" when the work tree had local
// changes. A binary built without VCS information (go run, -buildvcs=false,
// a source tree that is no git checkout) says "revision unknown".
func buildVersion() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "(devel) revision unknown (no build information)"
	}
	return describeBuild(bi)
}

func describeBuild(bi *debug.BuildInfo) string {
	version := bi.Main.Version
	if version == "" {
		version = "(devel)"
	}
	settings := map[string]string{}
	for _, s := range bi.Settings {
		settings[s.Key] = s.Value
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s", bi.Main.Path, version)
	if rev := settings["vcs.revision"]; rev != "" {
		fmt.Fprintf(&b, " revision %s", rev)
		if settings["vcs.modified"] == "true" {
			b.WriteString("+dirty")
		}
		if t := settings["vcs.time"]; t != "" {
			fmt.Fprintf(&b, " (%s)", t)
		}
	} else {
		b.WriteString(" revision unknown")
	}
	fmt.Fprintf(&b, " %s", bi.GoVersion)
	return b.String()
}

func init() {
	cli.VersionPrinter = func(c *cli.Context) {
		fmt.Fprintf(c.App.Writer, "git+ version %s\n", c.App.Version)
	}
}
