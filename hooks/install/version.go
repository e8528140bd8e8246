package install

// The running binary's version as `git+ --version` prints it (docs/cli.md,
// "Version"): the module path and version, then the VCS revision the Go
// toolchain stamped.

import (
	"fmt"
	"runtime/debug"
	"strings"
)

// BuildVersion describes the running binary: module path and version, then
// the revision, its commit time and "+dirty" when the work tree had local
// changes. A binary built without VCS information (go run, -buildvcs=false,
// a source tree that is no git checkout) says "revision unknown".
func BuildVersion() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "(devel) revision unknown (no build information)"
	}
	return DescribeBuild(bi)
}

// DescribeBuild is BuildVersion for the build information bi.
func DescribeBuild(bi *debug.BuildInfo) string {
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
