package gitio

// git's safe.directory check ("detected dubious ownership in repository"):
// git refuses to discover a repository owned by another user. Reported as
// what it is, with who owns the repository and the ways out, instead of as
// "not a git repository" (docs/operating.md "Ownership and the hook user").

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// ErrDubiousOwnership: git refused the repository because another user
// owns it (git's safe.directory check).
var ErrDubiousOwnership = errors.New("dubious ownership")

// dubiousError returns the error for git's dubious-ownership refusal of
// dir, or nil when stderr is not that refusal.
func dubiousError(dir string, stderr []byte) error {
	if !strings.Contains(string(stderr), "dubious ownership") {
		return nil
	}
	if _, rest, ok := strings.Cut(string(stderr), "repository at '"); ok {
		if at, _, ok := strings.Cut(rest, "'"); ok && at != "" {
			dir = at // git names the repository it refused
		}
	}
	owner, sudo := "another user", "OWNER"
	if fi, err := os.Stat(dir); err == nil {
		if uid, ok := fileUID(fi); ok {
			owner, sudo = userName(uid), "#"+strconv.Itoa(uid)
			if u, ok := LookupUID(uid); ok {
				sudo = u.Name
			}
		}
	}
	return fmt.Errorf("git refuses %s: dubious ownership: it is owned by %s and you are %s (git's safe.directory check); "+
		"run git+ as its owner (e.g. `sudo -u '%s' git+ ...`), which is also the user its hooks run as: %w",
		dir, owner, userName(os.Geteuid()), sudo, ErrDubiousOwnership)
}

func userName(uid int) string { return UserName(uid) }
