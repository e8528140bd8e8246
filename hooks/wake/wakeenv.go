package wake

// A wake rule's environment (docs/operating.md "Wake rules", docs/ci.md).
//
// Decisions:
//   - The command gets an allowlist, the one a check command gets
//     (receive/childenv: PATH, the locale and time zone, TERM, USER,
//     LOGNAME), plus what the server user's own programs need to find
//     their files — HOME, TMPDIR, SHELL, the XDG base directories, git's
//     configuration (GIT_CONFIG_NOSYSTEM, GIT_CONFIG_GLOBAL,
//     GIT_CONFIG_SYSTEM, GIT_EXEC_PATH and the GIT_CONFIG_COUNT entries
//     ChildEnv keeps) and git+'s GITPLUS_DELIVERY_WAIT —, what the host's
//     own hooks need when the command pushes into the repository
//     (gitolite's GL_LIBDIR, GL_BINDIR and GL_BYPASS_ACCESS_CHECKS,
//     Gitea's and Forgejo's GITEA_CUSTOM and GITEA_WORK_DIR), and the wake
//     channel (GITPLUS_WAKE_RULE, the gitplus-wake push option). Nothing
//     else of the hook's environment: no key, agent socket, token or
//     identity of whoever's push woke it.
//   - A rule gets the server's signing key only by naming it: "key":
//     "server" sets GITPLUS_KEY to gitplus.serverKey, or, when that is
//     unset, hands down the hook's own GITPLUS_KEY and SSH_AUTH_SOCK. A
//     rule without it has no key: a git+ verb that signs fails, saying so.
//   - "env": [NAMES] hands down more of the hook's environment, by name.
//     Names that say who pushed, or that the key and the wake channel
//     own, are refused when the file loads (checkWakeEnv).

import (
	"fmt"
	"strings"

	"github.com/gitplus/gitplus/receive/childenv"
	"github.com/gitplus/gitplus/receive/gitio"
)

// WakeKeyServer is the one value of a wake rule's "key".
const WakeKeyServer = "server"

// wakeVar reports whether a variable of the hook's environment, as ChildEnv
// leaves it, reaches every wake rule's command (the package doc).
func wakeVar(name string) bool {
	switch name {
	case "HOME", "TMPDIR", "SHELL", "GIT_CONFIG_NOSYSTEM", "GIT_CONFIG_GLOBAL", "GIT_CONFIG_SYSTEM", "GIT_EXEC_PATH",
		"GIT_CONFIG_COUNT", "GITPLUS_DELIVERY_WAIT", WakeEnv,
		"GL_LIBDIR", "GL_BINDIR", "GL_BYPASS_ACCESS_CHECKS", "GITEA_CUSTOM", "GITEA_WORK_DIR":
		return true
	}
	return childenv.System(name) || strings.HasPrefix(name, "XDG_") ||
		strings.HasPrefix(name, "GIT_CONFIG_KEY_") || strings.HasPrefix(name, "GIT_CONFIG_VALUE_")
}

// wakeEnv is the environment of rule r's command in gitDir, from the hook's
// environ (the package doc).
func wakeEnv(gitDir string, r WakeRule, environ []string) []string {
	var env []string
	for _, kv := range ChildEnv(environ, [][2]string{{"push.pushOption", WakeOptionPrefix + r.ID()}}, WakeEnv+"="+r.ID()) {
		if k, _, _ := strings.Cut(kv, "="); wakeVar(k) {
			env = append(env, kv)
		}
	}
	env = append(env, childenv.Pick(WithoutPusher(environ), r.Env)...)
	if r.Key == WakeKeyServer {
		if key := ServerKey(gitDir); key != "" {
			// The server's own identity for the rule's pushes (serverkey.go),
			// in place of any key the hook's environment carried.
			env = append(env, EnvKey+"="+key)
		} else {
			env = append(env, childenv.Pick(environ, []string{EnvKey, "SSH_AUTH_SOCK"})...)
		}
	}
	return childenv.Dedup(env)
}

// checkWakeEnv checks a rule's "key" and "env".
func (r WakeRule) checkWakeEnv() error {
	if r.Key != "" && r.Key != WakeKeyServer {
		return fmt.Errorf(`rule %q: "key" %q: the one value is %q (the server's signing key, gitplus.serverKey); leave it out for a command that signs nothing`, r.ID(), r.Key, WakeKeyServer)
	}
	for _, n := range r.Env {
		if err := childenv.ValidName(n); err != nil {
			return fmt.Errorf(`rule %q: "env": %v`, r.ID(), err)
		}
		switch {
		case n == EnvKey || n == "SSH_AUTH_SOCK":
			return fmt.Errorf(`rule %q: "env" names %s: a rule gets a signing key with "key": %q`, r.ID(), n, WakeKeyServer)
		case IsPusherVar(n) || strings.HasPrefix(n, "GIT_PUSH_CERT"):
			return fmt.Errorf(`rule %q: "env" names %s, which says who pushed: what a push starts never carries the pusher's identity (docs/serving.md)`, r.ID(), n)
		case n == WakeEnv || n == gitio.EnvPushOptions || strings.HasPrefix(n, "GIT_PUSH_OPTION") || n == "GIT_DIR" ||
			n == "GIT_QUARANTINE_PATH" || n == "GIT_OBJECT_DIRECTORY" || n == "GIT_ALTERNATE_OBJECT_DIRECTORIES":
			return fmt.Errorf(`rule %q: "env" names %s, which describes the push being received; a rule's command runs apart from it`, r.ID(), n)
		}
	}
	return nil
}
