package install

// The lean pre-receive binary.
//
// Decisions:
//   - The pre-receive script runs `git+hook pre-receive` (cmd/git+hook, which
//     links only what judging a push needs) when that binary sits beside the
//     git+ binary being installed and both were built from the same source;
//     otherwise it runs `git+ hook pre-receive`, which judges identically but
//     starts slower. The post-receive script likewise runs `git+hook
//     post-receive <git+ binary>` (the git+ binary starts the delivery
//     worker), else `git+ hook post-receive`.
//   - "The same source" is read from the two files' Go build information
//     (debug/buildinfo, nothing is executed): the same module version when
//     installed as a module, or the same VCS revision of a clean checkout.
//     A build of a checkout with uncommitted changes, or without VCS stamps
//     (go run, go test), has no identity, so a stale git+hook left beside a
//     newer git+ is never picked up.

import (
	"debug/buildinfo"
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
)

// HookBinary is the file name of the lean pre-receive binary.
const HookBinary = "git+hook"

// BuildIdentity names the source the Go binary at path was built from, or
// "" when that is not known exactly (see the decisions above).
func BuildIdentity(path string) string {
	bi, err := buildinfo.ReadFile(path)
	if err != nil {
		return ""
	}
	return identity(bi)
}

func identity(bi *debug.BuildInfo) string {
	var rev, modified string
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			modified = s.Value
		}
	}
	if rev != "" { // built in a checkout: only a clean one is exact
		if modified != "false" {
			return ""
		}
		return bi.Main.Path + "@" + rev
	}
	// Installed as a module: its version and checksum.
	if v := bi.Main.Version; v != "" && v != "(devel)" && bi.Main.Sum != "" && !strings.Contains(v, "+dirty") {
		return bi.Main.Path + "@" + v + " " + bi.Main.Sum
	}
	return ""
}

// LeanHook returns the lean pre-receive binary to run for the git+ binary
// bin (absolute), or "" and the reason it cannot be used.
func LeanHook(bin string) (string, string) {
	lean := filepath.Join(filepath.Dir(bin), HookBinary)
	fi, err := os.Stat(lean)
	if err != nil || !fi.Mode().IsRegular() || fi.Mode().Perm()&0o111 == 0 {
		return "", fmt.Sprintf("no executable %s beside %s", HookBinary, bin)
	}
	want := BuildIdentity(bin)
	if want == "" {
		return "", fmt.Sprintf("%s was not built from a clean checkout or a module version, so %s cannot be matched to it", bin, lean)
	}
	if got := BuildIdentity(lean); got != want {
		return "", fmt.Sprintf("%s was built from other source than %s (%q, not %q); rebuild both with go install ./cmd/...", lean, bin, got, want)
	}
	return lean, ""
}
