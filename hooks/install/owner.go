package install

// Installing that cannot break the host (docs/operating.md "Ownership and
// the hook user"). A host that runs git over ssh (plain sshd, gitolite)
// runs the receive hooks as the user who owns the repositories; `git+ init`
// and `git+ hook install` run by another user (root, typically) would leave
// files the hook user cannot write (a root-owned config, hooks, object
// directories written by init, git+'s own state), and the next push would
// fail for a reason nobody sees in the repository.
//
// Decisions:
//   - The hook user is the owner of the git directory (of the nearest
//     existing directory above it when init is about to create it).
//   - Installing as another user is refused with the reason and the two
//     ways out: run as the owner, or, as root, pass --chown, which hands
//     everything install and init wrote (every file under the git
//     directory the installing user owns) to the owner afterwards.
//     Creating a repository as a non-root user in a directory someone
//     else owns is the ordinary case (a shared /tmp, a group directory)
//     and is not refused: such a user can give nothing away anyway.
//   - A repository shared by a group (core.sharedRepository set) has no
//     one hook user: its hooks run as whichever member pushes, and git
//     keeps its files group-writable. A member may install there (root
//     still needs --chown).
//   - The binaries the scripts run must be executable by the hook user:
//     every directory on their path searchable and the file executable
//     for that user, judged from the mode bits (a binary under root's
//     0700 home or a private build directory is refused). ACLs are not
//     read.
//   - The hook user's groups are read from the user database; a user
//     without an entry (a bare uid) is taken to be in the git directory's
//     group only.

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/gitplus/gitplus/receive/gitio"
)

var (
	// ErrNotOwner: the installing user is not the repository's owner (the
	// hook user) and did not ask for --chown.
	ErrNotOwner = errors.New("not the repository's owner")
	// ErrOwnerCannotRun: the hook user cannot execute a binary the hook
	// scripts would run.
	ErrOwnerCannotRun = errors.New("the hook user cannot run the binary")
)

// Owner is the user the receive hooks of a repository run as.
type Owner struct {
	UID, GID int
	Name     string // from the user database; "uid N" without an entry
	groups   []int
}

func (o Owner) String() string {
	if strings.HasPrefix(o.Name, "uid ") {
		return o.Name
	}
	return fmt.Sprintf("%s (uid %d)", o.Name, o.UID)
}

// sudoName is how sudo -u names the user: its name, else #uid.
func (o Owner) sudoName() string {
	if strings.HasPrefix(o.Name, "uid ") {
		return "#" + strconv.Itoa(o.UID)
	}
	return o.Name
}

// chownName is how chown(1) names the user: its name, else its uid.
func (o Owner) chownName() string {
	if strings.HasPrefix(o.Name, "uid ") {
		return strconv.Itoa(o.UID)
	}
	return o.Name
}

func (o Owner) inGroup(gid int) bool {
	for _, g := range o.groups {
		if g == gid {
			return true
		}
	}
	return false
}

// ownerOf returns the owner of path (a file or directory that exists).
func ownerOf(path string) (Owner, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return Owner{}, err
	}
	uid, gid, ok := fileOwner(fi)
	if !ok { // no owners on this system: the installing user owns everything
		return currentUser(), nil
	}
	return lookupOwner(uid, gid), nil
}

// lookupOwner fills in a user's name and groups; gid is the group the user
// is taken to be in when the user database has no entry.
func lookupOwner(uid, gid int) Owner {
	o := Owner{UID: uid, GID: gid, Name: "uid " + strconv.Itoa(uid), groups: []int{gid}}
	u, ok := gitio.LookupUID(uid)
	if !ok {
		return o
	}
	o.Name, o.GID, o.groups = u.Name, u.GID, u.Groups
	return o
}

// currentUser is the user running git+ (the effective uid).
// Its groups are the process's own (the kernel's word, NSS groups
// included), not the user database's.
func currentUser() Owner {
	o := lookupOwner(os.Geteuid(), os.Getegid())
	if gs, err := os.Getgroups(); err == nil {
		o.GID, o.groups = os.Getegid(), append([]int{os.Getegid()}, gs...)
	}
	return o
}

// may reports whether o may access fi with the permission bits want
// (4 read, 2 write, 1 execute or search), judged from the mode bits as
// the kernel would without ACLs.
func (o Owner) may(fi os.FileInfo, want os.FileMode) bool {
	perm := fi.Mode().Perm()
	if o.UID == 0 { // root: anything, but a file is executed only with some x bit
		return want&1 == 0 || fi.IsDir() || perm&0o111 != 0
	}
	uid, gid, ok := fileOwner(fi)
	if !ok {
		return true // not judged where the system does not say
	}
	switch {
	case uid == o.UID:
		return (perm>>6)&want == want
	case o.inGroup(gid):
		return (perm>>3)&want == want
	default:
		return perm&want == want
	}
}

// canRun reports why o cannot execute the file at path ("" when it can):
// every directory above it must be searchable and the file executable.
func (o Owner) canRun(path string) string {
	p, err := filepath.Abs(path)
	if err != nil {
		return err.Error()
	}
	if r, err := filepath.EvalSymlinks(p); err == nil {
		p = r
	}
	fi, err := os.Stat(p)
	if err != nil {
		return err.Error()
	}
	for d := filepath.Dir(p); ; d = filepath.Dir(d) {
		di, err := os.Stat(d)
		if err != nil {
			return err.Error()
		}
		if !o.may(di, 1) {
			return fmt.Sprintf("the directory %s (mode %s) is not searchable by %s", d, di.Mode().Perm(), o)
		}
		if filepath.Dir(d) == d {
			break
		}
	}
	if !o.may(fi, 1) {
		return fmt.Sprintf("%s (mode %s) is not executable by %s", p, fi.Mode().Perm(), o)
	}
	return ""
}

// repoOwner returns the hook user of the repository at dir: its owner, or
// when dir does not exist yet (git+ init creates it), the owner of the
// nearest existing directory above it; exists says which.
func repoOwner(dir string) (o Owner, exists bool, err error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return Owner{}, false, err
	}
	for d := abs; ; d = filepath.Dir(d) {
		o, err := ownerOf(d)
		if err == nil {
			return o, d == abs, nil
		}
		if !errors.Is(err, os.ErrNotExist) || filepath.Dir(d) == d {
			return Owner{}, false, err
		}
	}
}

// InstallCheck is what CheckInstall found: the hook user, and whether
// everything written must be handed to it afterwards (Chown).
type InstallCheck struct {
	Owner Owner
	Chown bool // run ChownWritten after writing
}

// CheckInstall judges, before anything is written, whether installing git+
// into the repository at dir (which init may be about to create) with the
// binaries bin and lean (lean may be empty) leaves a repository its hook
// user can still use: the installing user must be the owner, or root with
// chown; the owner must be able to run the binaries.
func CheckInstall(dir, bin, lean string, chown bool) (InstallCheck, error) {
	owner, exists, err := repoOwner(dir)
	if err != nil {
		return InstallCheck{}, fmt.Errorf("finding the owner of %s: %w", dir, err)
	}
	me := currentUser()
	ic := InstallCheck{Owner: owner}
	switch {
	case owner.UID == me.UID:
	case exists && me.UID != 0 && sharedRepository(dir):
		// A shared repository's hooks run as whichever member pushes, and
		// git writes its files group-writable (see Decisions).
	case !exists && me.UID != 0:
		// A new repository is the creator's (see Decisions).
		ic.Owner = me
	case chown && me.UID != 0:
		return ic, fmt.Errorf("--chown gives files to %s, which only root may do (you are %s): run as %s instead: %w", owner, me, owner.Name, ErrNotOwner)
	case chown:
		ic.Chown = true
	default:
		what := dir + " is owned by " + owner.String()
		if !exists {
			what = dir + " would be created in a directory owned by " + owner.String()
		}
		return ic, fmt.Errorf("%s, not by you (%s): the hooks run as %s, and what this writes (config, hooks, objects, git+'s state) would belong to %s, which %s may not be able to change; "+
			"run it as the owner (e.g. `sudo -u '%s' git+ ...`), or as root add --chown to hand everything written to %s: %w",
			what, me, owner.Name, me.Name, owner.Name, owner.sudoName(), owner.Name, ErrNotOwner)
	}
	for _, b := range []string{bin, lean} {
		if b == "" {
			continue
		}
		if why := ic.Owner.canRun(b); why != "" {
			return ic, fmt.Errorf("the hooks would run %s as %s, who cannot: %s; install the binaries where %s can run them (e.g. /usr/local/bin) and run that copy: %w",
				b, ic.Owner, why, ic.Owner.Name, ErrOwnerCannotRun)
		}
	}
	if exists { // gitolite's hooks (gitolite.go), judged before init writes
		abs, _ := filepath.Abs(dir)
		if _, err := gitoliteInstall(abs, filepath.Join(abs, "hooks"), bin, lean); err != nil {
			return ic, err
		}
	}
	return ic, nil
}

// sharedRepository reports whether the repository at dir is shared by a
// group (git config core.sharedRepository other than false or umask).
func sharedRepository(dir string) bool {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return false
	}
	if fi, err := os.Stat(filepath.Join(abs, ".git")); err == nil && fi.IsDir() {
		abs = filepath.Join(abs, ".git")
	}
	v, err := git(abs, "config", "--get", "core.sharedRepository")
	if err != nil {
		return false
	}
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "", "false", "umask", "0", "no", "off":
		return false
	}
	return true
}

// ChownWritten hands every file and directory under gitDir owned by the
// current user to the hook user (git+ init and git+ hook install with
// --chown, as root).
func ChownWritten(gitDir string, o Owner) error {
	me := os.Geteuid()
	var failed []string
	err := filepath.Walk(gitDir, func(path string, fi os.FileInfo, err error) error {
		if err != nil {
			failed = append(failed, err.Error())
			return nil
		}
		if uid, _, ok := fileOwner(fi); ok && uid == me {
			if err := os.Lchown(path, o.UID, o.GID); err != nil {
				failed = append(failed, err.Error())
			}
		}
		return nil
	})
	if err == nil && len(failed) > 0 {
		err = errors.New(strings.Join(failed, "; "))
	}
	if err != nil {
		return fmt.Errorf("handing %s to %s: %w", gitDir, o, err)
	}
	return nil
}
