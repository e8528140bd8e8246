// Package sandbox runs a check command — the code under test, which may be
// hostile — out of reach of what signs its verdict (docs/ci.md).
//
// Decisions:
//   - Three modes (Mode): Required refuses to run a command the kernel
//     cannot confine (ErrUnconfinable, before anything is started or
//     recorded), BestEffort confines what the kernel allows, Off runs the
//     command as git+ always did (the worker's environment, no
//     confinement). What a run was is Confinement: "landlock-<ABI>",
//     "env-only" or "off", the value check.completed records.
//   - Confined runs (landlock or env-only) get the environment Env builds
//     (an allowlist, nothing inherited by default), no capabilities (the
//     bounding, inheritable and ambient sets emptied, so even a root
//     worker's command holds none: on Linux 6.18 a root command with its
//     capabilities reads /proc/<worker>/environ although Landlock forbids
//     it to trace the worker; without them it cannot), and no_new_privs
//     (no setuid or file-capability gain).
//   - Landlock (landlock-N): the filesystem rights a Policy lists and
//     nothing else; from ABI 6 on, no signal to and no abstract unix
//     socket of a process outside the command's own domain; like every
//     Landlock domain, no ptrace (nor /proc/<pid>/mem, environ, fd) of a
//     process outside it. The network and pathname unix sockets are not
//     confined.
//   - Landlock applies to the thread that asks and what it executes, so a
//     command is started through a launcher: this binary executed again
//     with LauncherArg, its instructions (the command, its environment and
//     the policy's paths) read from a pipe, never from its command line or
//     environment. The launcher restricts its one thread and executes the
//     command from it. Any program that links this package is a launcher:
//     the check is in the package's init, before main runs.
//   - Policy is an input: the caller (receive/checkrun) says which paths
//     the command may run, read and write; System gives the system and
//     toolchain trees. Without drops any grant that would expose a path
//     that must stay out of reach (the signing key, ~/.ssh, the worker's
//     repository).
//   - A probe of the kernel (ABI) decides what a run can be; a program
//     started under a seccomp filter that answers ENOSYS to Landlock's
//     system calls sees a kernel without Landlock (the end-to-end tests
//     simulate one so).
package sandbox

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Mode is how a check command must be confined (--sandbox).
type Mode string

// The modes.
const (
	Required   Mode = "required"
	BestEffort Mode = "best-effort"
	Off        Mode = "off"
)

// ParseMode reads --sandbox; "" is BestEffort.
func ParseMode(s string) (Mode, error) {
	switch m := Mode(s); m {
	case "":
		return BestEffort, nil
	case Required, BestEffort, Off:
		return m, nil
	}
	return "", fmt.Errorf("sandbox mode %q: use required, best-effort or off", s)
}

// Recorded values of check.completed's "sandbox" (docs/events.md; the
// pull request decoder, pr.ValidSandbox, is their validation).
const (
	RecordOff      = "off"
	RecordEnvOnly  = "env-only"
	RecordLandlock = "landlock-" // followed by the ABI version
)

// ErrUnconfinable is the refusal of Required on a kernel that cannot
// confine the command.
var ErrUnconfinable = errors.New("the kernel cannot confine the check command")

// Confinement is what a run is: Landlock at an ABI version, the
// environment allowlist alone, or nothing.
type Confinement struct {
	Off bool
	ABI int // Landlock's ABI version; 0: env-only (or Off)
	// Why Landlock is not used (env-only): the probe's answer.
	Why string
}

// String is the value check.completed records.
func (c Confinement) String() string {
	switch {
	case c.Off:
		return RecordOff
	case c.ABI > 0:
		return RecordLandlock + strconv.Itoa(c.ABI)
	}
	return RecordEnvOnly
}

// Landlock reports whether the filesystem is confined.
func (c Confinement) Landlock() bool { return !c.Off && c.ABI > 0 }

// Decide returns the confinement mode asks for on this kernel, or
// ErrUnconfinable (Required without Landlock).
func Decide(mode Mode) (Confinement, error) {
	if mode == Off {
		return Confinement{Off: true}, nil
	}
	abi, why := ABI()
	if abi == 0 && mode == Required {
		return Confinement{}, fmt.Errorf("--sandbox required: %w: Landlock is not available (%s); nothing was run or recorded; run the worker on a Linux kernel with Landlock (5.13 or later, \"landlock\" in its lsm= list) or pass --sandbox best-effort", ErrUnconfinable, why)
	}
	return Confinement{ABI: abi, Why: why}, nil
}

// Describe is the one line a best-effort run prints: what is confined.
func (c Confinement) Describe(p Policy) string {
	switch {
	case c.Off:
		return "sandbox off: the command runs with the worker's environment, capabilities and files (the signing key included)"
	case c.ABI == 0:
		return fmt.Sprintf("sandbox env-only (Landlock unavailable: %s): the environment is allowlisted and the command holds no capabilities, but the filesystem is not confined — it can read what the worker's user can, the signing key included; --sandbox required refuses instead", c.Why)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "sandbox %s: the command reads and writes only its checkout and scratch directory", c)
	if len(p.Caches) > 0 {
		fmt.Fprintf(&b, ", the caches %s", strings.Join(p.Caches, ", "))
	}
	b.WriteString(", reads and runs the system and toolchain trees")
	if c.ABI >= 6 {
		b.WriteString(", cannot signal nor reach an abstract socket outside its sandbox")
	} else {
		fmt.Fprintf(&b, ", can still signal the worker (signal scoping needs Landlock ABI 6, this kernel has %d)", c.ABI)
	}
	b.WriteString("; environment allowlisted, no capabilities; not confined: the network")
	return b.String()
}
