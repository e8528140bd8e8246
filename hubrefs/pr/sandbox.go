package pr

import (
	"fmt"
	"strings"
)

// ReadsSuffix ends check.completed's "sandbox" of a run whose reads were
// confined to its partition's inputs ("landlock-7+reads", docs/ci.md).
const ReadsSuffix = "+reads"

// ValidSandbox checks check.completed's "sandbox" (docs/events.md): "off",
// "env-only", or "landlock-<N>", N the Landlock ABI version from 1 to 99
// written without leading zeros, optionally followed by "+reads" (the
// command's reads were confined to its partition's inputs).
func ValidSandbox(s string) error {
	if s == "off" || s == "env-only" {
		return nil
	}
	if n, ok := strings.CutPrefix(s, "landlock-"); ok {
		n = strings.TrimSuffix(n, ReadsSuffix)
		if len(n) >= 1 && len(n) <= 2 && n[0] != '0' && strings.Trim(n, "0123456789") == "" {
			return nil
		}
	}
	return fmt.Errorf("%w: %q; use \"landlock-<ABI version>\" (with \"+reads\" when the reads were confined to a partition), \"env-only\" or \"off\"", ErrMalformed, s)
}

// Confined reports whether a check.completed's "sandbox" says its command
// ran confined by Landlock (its reads confined to a partition or not):
// what requireSandbox counts (docs/ci.md).
func Confined(sandbox string) bool {
	return strings.HasPrefix(sandbox, "landlock-")
}
