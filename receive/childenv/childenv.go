// Package childenv is the environment allowlist of the programs git+ starts
// on someone else's behalf: a check command (receive/sandbox) and a wake
// rule's command (hooks/wake/wakeenv.go). They inherit the search path, the
// locale and time zone, the terminal and the user's name, and otherwise only what
// is named on purpose (docs/ci.md). Standard library only: the lean hook
// binary links it.
package childenv

import (
	"fmt"
	"regexp"
	"strings"
)

// System reports whether an environment variable is one every such program
// inherits: PATH, LANG, LANGUAGE, LC_*, TZ, TERM, USER, LOGNAME. Nothing
// else passes unless named: no key (GITPLUS_KEY), agent socket
// (SSH_AUTH_SOCK), git variable (GIT_*), token or host identity.
func System(name string) bool {
	switch name {
	case "PATH", "LANG", "LANGUAGE", "TZ", "TERM", "USER", "LOGNAME":
		return true
	}
	return strings.HasPrefix(name, "LC_")
}

// SystemVars returns the variables of environ that System lets through,
// in environ's order.
func SystemVars(environ []string) []string {
	var out []string
	for _, kv := range environ {
		if k, _, ok := strings.Cut(kv, "="); ok && System(k) {
			out = append(out, kv)
		}
	}
	return out
}

// Pick returns the variables of environ named in names, in names' order (a
// name environ lacks is left out; of a name set twice, the last, as getenv
// reads it).
func Pick(environ []string, names []string) []string {
	var out []string
	for _, n := range names {
		for i := len(environ) - 1; i >= 0; i-- {
			if k, _, _ := strings.Cut(environ[i], "="); k == n {
				out = append(out, environ[i])
				break
			}
		}
	}
	return out
}

// Dedup keeps the last entry of each name, at the place of its first.
func Dedup(env []string) []string {
	last := map[string]string{}
	var order []string
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		if _, ok := last[k]; !ok {
			order = append(order, k)
		}
		last[k] = kv
	}
	out := make([]string, 0, len(order))
	for _, k := range order {
		out = append(out, last[k])
	}
	return out
}

var nameRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// ValidName checks a variable name given to be passed (--pass-env, a wake
// rule's "env"): a shell name.
func ValidName(name string) error {
	if !nameRE.MatchString(name) {
		return fmt.Errorf("%q is not an environment variable name (letters, digits and _, not starting with a digit)", name)
	}
	return nil
}
