package sandbox

import (
	"errors"
	"fmt"
	"os"
	"os/user"
	"strconv"
	"syscall"
)

// RunAs returns the credential of user name (--run-as): its uid, primary
// group and supplementary groups. Only a worker running as root can take
// another user's identity.
func RunAs(name string) (*syscall.Credential, error) {
	if os.Geteuid() != 0 {
		return nil, fmt.Errorf("--run-as %s: the worker runs as uid %d; only a worker running as root starts commands as another user (run it as root, or leave --run-as out and run the worker itself as its own user)", name, os.Geteuid())
	}
	u, err := user.Lookup(name)
	if err != nil {
		return nil, fmt.Errorf("--run-as %s: %w", name, err)
	}
	uid, err1 := strconv.ParseUint(u.Uid, 10, 32)
	gid, err2 := strconv.ParseUint(u.Gid, 10, 32)
	if err := errors.Join(err1, err2); err != nil {
		return nil, fmt.Errorf("--run-as %s: %w", name, err)
	}
	if uid == 0 {
		return nil, fmt.Errorf("--run-as %s: that is root; name an unprivileged user", name)
	}
	c := &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
	ids, _ := u.GroupIds()
	for _, g := range ids {
		if n, err := strconv.ParseUint(g, 10, 32); err == nil {
			c.Groups = append(c.Groups, uint32(n))
		}
	}
	return c, nil
}
