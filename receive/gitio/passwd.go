package gitio

// The local user database, read without os/user: os/user links runtime/cgo
// (for NSS), and the lean hook binary must not (cmd/git+hook's
// TestLeanDependencies). Names are only for messages and the install's
// ownership checks (docs/operating.md "Ownership and the hook user"), so a
// user known only to NSS (LDAP, say) is named by its uid and has only its
// primary group: the checks then err on the side of refusing.

import (
	"bufio"
	"os"
	"strconv"
	"strings"
)

// LocalUser is an /etc/passwd entry and the /etc/group groups naming it.
type LocalUser struct {
	Name   string
	UID    int
	GID    int   // primary group
	Groups []int // every group, the primary first
}

// passwdFile and groupFile are the files read (tests point them elsewhere).
var passwdFile, groupFile = "/etc/passwd", "/etc/group"

// LookupUID returns the local user with uid, and false when /etc/passwd has
// none.
func LookupUID(uid int) (LocalUser, bool) {
	var u LocalUser
	found := false
	eachLine(passwdFile, func(f []string) bool {
		// name:password:uid:gid:gecos:home:shell
		if len(f) < 4 || f[2] != strconv.Itoa(uid) {
			return true
		}
		gid, err := strconv.Atoi(f[3])
		if err != nil {
			return true
		}
		u, found = LocalUser{Name: f[0], UID: uid, GID: gid, Groups: []int{gid}}, true
		return false
	})
	if !found {
		return u, false
	}
	eachLine(groupFile, func(f []string) bool {
		// name:password:gid:member,member
		if len(f) < 4 {
			return true
		}
		gid, err := strconv.Atoi(f[2])
		if err != nil || gid == u.GID {
			return true
		}
		for _, m := range strings.Split(f[3], ",") {
			if m == u.Name {
				u.Groups = append(u.Groups, gid)
				break
			}
		}
		return true
	})
	return u, true
}

// UserName names uid as "name (uid N)", or "uid N" when it has no entry.
func UserName(uid int) string {
	if u, ok := LookupUID(uid); ok {
		return u.Name + " (uid " + strconv.Itoa(uid) + ")"
	}
	return "uid " + strconv.Itoa(uid)
}

// eachLine calls fn with the colon-separated fields of each line of path
// until fn returns false; an unreadable file has no lines.
func eachLine(path string, fn func([]string) bool) {
	f, err := os.Open(path)
	if err != nil {
		return
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || line[0] == '#' {
			continue
		}
		if !fn(strings.Split(line, ":")) {
			return
		}
	}
}
