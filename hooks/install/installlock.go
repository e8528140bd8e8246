package install

// Installing from several processes at once (docs/operating.md "Installing
// the hooks"): two `git+ serve` starting on one root, or an operator's `git+
// hook install` while serve installs on first use.
//
// Decisions:
//   - One install at a time per repository: Install holds an exclusive flock
//     on <gitdir>/gitplus/install.lock for its whole run. The second install
//     then finds the first one's scripts (its own, rewritten in place, never
//     chained to themselves), an operator's hook already kept as .chained,
//     and the push certificate seed already set (so it keeps it: a second
//     seed would invalidate the nonces issued under the first). The kernel
//     releases the lock when its holder dies.
//   - Other writers of the config file (an operator's `git config`, git
//     itself) do not take that lock: a `git config` write that finds the
//     config's lock file held ("could not lock config file") is retried with
//     backoff (10 ms doubling to 640 ms, about 1.3 s in all) before Install
//     fails.

import (
	"path/filepath"
	"strings"
	"time"

	"github.com/gitplus/gitplus/hooks/delivery"
)

// InstallLock is the install lock, relative to the git directory.
const InstallLock = "gitplus/install.lock"

// withInstallLock runs fn holding gitDir's install lock.
func withInstallLock(gitDir string, fn func() error) error {
	return delivery.WithLock(filepath.Join(gitDir, InstallLock), fn)
}

// setConfig sets key to value in gitDir's config file, retrying while
// another process holds the config's lock file. It returns git's output.
func setConfig(gitDir, key, value string) (string, error) {
	delay := 10 * time.Millisecond
	for attempt := 0; ; attempt++ {
		out, err := git(gitDir, "config", key, value)
		if err == nil || attempt == 7 || !strings.Contains(out, "could not lock config file") {
			return out, err
		}
		time.Sleep(delay)
		delay *= 2
	}
}
