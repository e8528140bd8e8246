package checkworker

import (
	"fmt"
	neturl "net/url"
	"os"
	"strconv"
)

// The remote's password (a member token) never reaches a command line
// (docs/ci.md, "The worker's token"). A URL's user information is part of
// the command line of every git process that uses it — git ls-remote,
// fetch, push and their git-remote-http — and any process on the machine
// reads any other's /proc/<pid>/cmdline, a sandboxed check command
// included; it cannot read another's environment. So the worker's git
// processes get the URL without the password, and the password through a
// credential helper configured in their environment.

// credentialEnv is the variable the worker's credential helper reads.
const credentialEnv = "GITPLUS_WORKER_PASSWORD"

// credentialHelper answers git's "get" with the password of credentialEnv
// (git takes the user name from the URL).
const credentialHelper = `!f() { test "$1" = get && printf 'password=%s\n' "$` + credentialEnv + `"; }; f`

// hideCredentials returns u without its password and the environment
// entries (to add to this process's, whose git processes inherit it) that
// give git the password; u itself and no entries when it has none.
// environ is the environment the entries extend (its GIT_CONFIG_COUNT).
func hideCredentials(u string, environ func(string) string) (string, map[string]string) {
	x, err := neturl.Parse(u)
	if err != nil || x.User == nil {
		return u, nil
	}
	pass, ok := x.User.Password()
	if !ok {
		return u, nil
	}
	x.User = neturl.User(x.User.Username())
	n, _ := strconv.Atoi(environ("GIT_CONFIG_COUNT"))
	return x.String(), map[string]string{
		credentialEnv:                         pass,
		"GIT_CONFIG_KEY_" + strconv.Itoa(n):   "credential." + x.Scheme + "://" + x.Host + ".helper",
		"GIT_CONFIG_VALUE_" + strconv.Itoa(n): credentialHelper,
		"GIT_CONFIG_COUNT":                    strconv.Itoa(n + 1),
	}
}

// useCredentials puts the entries of hideCredentials into this process's
// environment.
func useCredentials(env map[string]string) error {
	for k, v := range env {
		if err := os.Setenv(k, v); err != nil {
			return fmt.Errorf("setting %s: %w", k, err)
		}
	}
	return nil
}
