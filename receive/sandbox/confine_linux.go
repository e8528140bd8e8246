package sandbox

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"unsafe"

	"github.com/landlock-lsm/go-landlock/landlock"
	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"
)

// presets are go-landlock's configurations by ABI version (1 first).
var presets = []landlock.Config{landlock.V1, landlock.V2, landlock.V3, landlock.V4, landlock.V5, landlock.V6,
	landlock.V7, landlock.V8, landlock.V9, landlock.V10, landlock.V11}

// probe answers ABI; a variable so that tests can be another kernel.
var probe = kernelABI

// ABI returns the Landlock ABI version the kernel offers (at most the
// newest go-landlock knows), or 0 and why there is none. An ABI from 6 on
// whose signal scoping misses the kernel's fix (Landlock's errata) counts
// as 5, as go-landlock counts it.
func ABI() (int, string) { return probe() }

func kernelABI() (int, string) {
	v, err := ll.LandlockGetABIVersion()
	switch {
	case err != nil:
		return 0, "landlock_create_ruleset: " + err.Error()
	case v <= 0:
		return 0, "the kernel reports no Landlock ABI"
	}
	if v >= 6 {
		if errata, err := ll.LandlockGetErrata(); err != nil || errata&0x2 == 0 {
			v = 5
		}
	}
	return min(v, len(presets)), ""
}

// config is what a run at ABI abi restricts: every filesystem right up to
// ABI 8 (not ABI 9's pathname unix sockets: like the network, they are
// not confined), and the IPC scopes (signals, abstract unix sockets).
func config(abi int) landlock.Config {
	p := presets[min(abi, len(presets))-1]
	return landlock.Config{HandledAccessFS: p.HandledAccessFS &^ ll.AccessFSResolveUnix, Scoped: p.Scoped}
}

// Rights granted by kind of grant (intersected with what the ABI handles).
const (
	rightsExecDir  = ll.AccessFSExecute | ll.AccessFSReadFile | ll.AccessFSReadDir
	rightsExecFile = ll.AccessFSExecute | ll.AccessFSReadFile
	rightsReadDir  = ll.AccessFSReadFile | ll.AccessFSReadDir
	rightsReadFile = ll.AccessFSReadFile
	rightsWriteDir = ^uint64(ll.AccessFSIoctlDev | ll.AccessFSResolveUnix) // everything else: read, write, run, create, remove, rename
	// rightsWriteOnlyDir: what a write-only grant allows beneath a
	// directory. Landlock's rule for reparenting (a file moved or linked
	// into another directory must not gain a right there) keeps a file
	// that cannot be read from becoming readable by a rename into a
	// readable directory.
	rightsWriteOnlyDir = rightsWriteDir &^ (ll.AccessFSReadFile | ll.AccessFSReadDir | ll.AccessFSExecute)
	rightsDevice       = ll.AccessFSReadFile | ll.AccessFSWriteFile | ll.AccessFSTruncate | ll.AccessFSIoctlDev
)

// rules are the Landlock rules of in's paths. A path that does not exist
// or that this process cannot reach is left out: a grant only ever widens
// what the command may do.
func rules(in instructions, handled landlock.AccessFSSet) []landlock.Rule {
	var out []landlock.Rule
	add := func(paths []string, dirRights, fileRights uint64) {
		for _, p := range paths {
			fi, err := os.Stat(p)
			if err != nil {
				continue
			}
			r := fileRights
			if fi.IsDir() {
				r = dirRights
			}
			if a := landlock.AccessFSSet(r) & handled; a != 0 {
				out = append(out, landlock.PathAccess(a, p))
			}
		}
	}
	add(in.Exec, rightsExecDir, rightsExecFile)
	add(in.Read, rightsReadDir, rightsReadFile)
	add(in.Write, rightsWriteDir, rightsWriteDir&(ll.AccessFSReadFile|ll.AccessFSWriteFile|ll.AccessFSTruncate|ll.AccessFSExecute))
	add(in.WriteOnly, rightsWriteOnlyDir, ll.AccessFSWriteFile|ll.AccessFSTruncate)
	add(in.Devices, 0, rightsDevice)
	return out
}

// confine restricts the calling (locked) thread for in: Landlock when
// in.ABI > 0, the user in.User names, no_new_privs, and no capabilities —
// the bounding, ambient and inheritable sets emptied, so that executing
// the command, even as root, gives it none.
func confine(in instructions) error {
	fd := -1
	var flags uint32
	if in.ABI > 0 {
		cfg := config(in.ABI)
		var err error
		if fd, flags, err = cfg.NewRulesetFD(rules(in, cfg.HandledAccessFS)...); err != nil {
			return err
		}
		defer unix.Close(fd)
	}
	for c := 0; c <= capLast(); c++ {
		// EPERM without CAP_SETPCAP (a worker not running as root, or
		// --run-as): such a process has no capability to lose.
		_ = unix.Prctl(unix.PR_CAPBSET_DROP, uintptr(c), 0, 0, 0)
	}
	_ = unix.Prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0)
	if u := in.User; u != nil {
		if err := becomeUser(u); err != nil {
			return err
		}
	}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return err
	}
	if fd >= 0 {
		if err := ll.LandlockRestrictSelf(fd, flags); err != nil {
			return err
		}
	}
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var none [2]unix.CapUserData
	return unix.Capset(&hdr, &none[0])
}

// becomeUser gives the calling thread u's groups, group and user ids (real,
// effective and saved). The raw system calls change this thread alone —
// the one that executes the command — where the Go runtime's would change
// every thread of the launcher.
func becomeUser(u *identity) error {
	groups := u.Groups
	if len(groups) == 0 {
		groups = []uint32{u.GID}
	}
	if _, _, e := unix.RawSyscall(unix.SYS_SETGROUPS, uintptr(len(groups)), uintptr(unsafe.Pointer(&groups[0])), 0); e != 0 {
		return fmt.Errorf("setgroups: %w", e)
	}
	if _, _, e := unix.RawSyscall(unix.SYS_SETRESGID, uintptr(u.GID), uintptr(u.GID), uintptr(u.GID)); e != 0 {
		return fmt.Errorf("setresgid %d: %w", u.GID, e)
	}
	if _, _, e := unix.RawSyscall(unix.SYS_SETRESUID, uintptr(u.UID), uintptr(u.UID), uintptr(u.UID)); e != 0 {
		return fmt.Errorf("setresuid %d: %w", u.UID, e)
	}
	return nil
}

// capLast is the kernel's highest capability number.
func capLast() int {
	b, err := os.ReadFile("/proc/sys/kernel/cap_last_cap")
	if n, err2 := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && err2 == nil && n > 0 && n < 64 {
		return n
	}
	return 63
}

// ProtectSelf makes the calling process non-dumpable: its memory and
// environment (/proc/<pid>/mem, environ) can then be read only by a
// process holding CAP_SYS_PTRACE, and it leaves no core dump.
func ProtectSelf() error {
	return unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0)
}
