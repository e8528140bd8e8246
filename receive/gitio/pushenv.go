package gitio

import (
	"os"
	"slices"
	"strconv"
	"strings"
)

// Push options and a push into the repository itself (docs/queue.md,
// "Transport failures").
//
// git push sends its push options after the command list. When every ref
// turns out to need no command — a lease that no longer holds (the ref
// moved: a lost race), or refs already at their new values (another pass
// landed the same chain) — the command list is empty, receive-pack exits at
// once, and git's write of the options meets a closed pipe: git kills itself
// with SIGPIPE. That is how wake-started passes died of "signal: broken
// pipe": a wake child carries push.pushOption=gitplus-wake=<id> in its
// environment, so each of its lost races was a SIGPIPE.
//
// A push into "." (the repository itself, which every server-side pass and
// append makes) therefore sends no push options over the wire. receive-pack
// runs as a child of git push and its hooks inherit the pusher's
// environment, so the options travel in the environment variable
// GITPLUS_PUSH_OPTIONS instead (one per line; git forbids newlines in push
// options), which hooks/wake's PushOptions reads beside git's
// GIT_PUSH_OPTION_*.
// Options configured through GIT_CONFIG_* push.pushOption (how a wake child
// tags its pushes) are moved there the same way, and, as git does, options
// given explicitly replace the configured ones. Pushes to other remotes
// keep their options; a push that dies in transport is read back and
// retried by every push client.

// EnvPushOptions carries the push options of a push into "." to its hooks.
const EnvPushOptions = "GITPLUS_PUSH_OPTIONS"

// PushArgs returns the --push-option arguments and the environment for a
// git push of opts to remote, with extra added to this process's
// environment. A nil environment means "inherit unchanged".
func PushArgs(remote string, opts, extra []string) (args, env []string) {
	if remote != "." || slices.ContainsFunc(opts, func(o string) bool { return strings.Contains(o, "\n") }) {
		for _, po := range opts {
			args = append(args, "--push-option="+po)
		}
		if len(extra) > 0 {
			env = append(os.Environ(), extra...)
		}
		return args, env
	}
	all := append(os.Environ(), extra...)
	configured, rest := splitConfigPushOptions(all)
	if len(opts) == 0 {
		opts = configured
	}
	if len(opts) > 0 {
		rest = append(rest, EnvPushOptions+"="+strings.Join(opts, "\n"))
	} else {
		rest = append(rest, EnvPushOptions+"=")
	}
	return nil, rest
}

// splitConfigPushOptions returns the push.pushOption values given through
// GIT_CONFIG_COUNT/KEY/VALUE in environ, and environ without them (an
// environment variable given twice counts once, the last, as os/exec does).
func splitConfigPushOptions(environ []string) (opts, rest []string) {
	m := map[string]string{}
	for _, kv := range environ {
		k, v, _ := strings.Cut(kv, "=")
		m[k] = v
	}
	n, _ := strconv.Atoi(m["GIT_CONFIG_COUNT"])
	var kept [][2]string
	for i := 0; i < n && i < 10000; i++ {
		k, v := m["GIT_CONFIG_KEY_"+strconv.Itoa(i)], m["GIT_CONFIG_VALUE_"+strconv.Itoa(i)]
		switch {
		case !strings.EqualFold(k, "push.pushOption"):
			kept = append(kept, [2]string{k, v})
		case v == "": // an empty value clears the list, as in git
			opts = nil
		default:
			opts = append(opts, v)
		}
	}
	for _, kv := range environ {
		k, _, _ := strings.Cut(kv, "=")
		if k == "GIT_CONFIG_COUNT" || strings.HasPrefix(k, "GIT_CONFIG_KEY_") || strings.HasPrefix(k, "GIT_CONFIG_VALUE_") {
			continue
		}
		rest = append(rest, kv)
	}
	if len(kept) > 0 {
		rest = append(rest, "GIT_CONFIG_COUNT="+strconv.Itoa(len(kept)))
		for i, c := range kept {
			rest = append(rest, "GIT_CONFIG_KEY_"+strconv.Itoa(i)+"="+c[0], "GIT_CONFIG_VALUE_"+strconv.Itoa(i)+"="+c[1])
		}
	}
	return opts, rest
}
