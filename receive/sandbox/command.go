package sandbox

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
)

// LauncherArg, as the only argument, makes a program linking this package
// the launcher (the package doc).
const LauncherArg = "__gitplus-sandbox-launch"

// Command is one run of a check command.
type Command struct {
	Argv []string
	Dir  string
	// Env is the command's whole environment (Env builds it); with
	// Confinement.Off the command inherits the caller's instead.
	Env         []string
	Policy      Policy
	Confinement Confinement
	// Credential, when set, runs the command as that user (--run-as).
	Credential *syscall.Credential
}

// instructions are what the launcher reads from its pipe.
type instructions struct {
	Argv  []string `json:"argv"`
	Env   []string `json:"env"`
	Dir   string   `json:"dir"`
	ABI   int      `json:"abi"`
	Exec  []string `json:"exec,omitempty"`
	Read  []string `json:"read,omitempty"`
	Write []string `json:"write,omitempty"`
	// WriteOnly are granted the writing rights alone (Policy.WriteOnly).
	WriteOnly []string `json:"writeOnly,omitempty"`
	Devices   []string `json:"devices,omitempty"`
	// User, when set, is who the command runs as (--run-as): the launcher
	// starts as the worker, so that it can reach this binary and every
	// path it grants, and takes the user's identity last.
	User *identity `json:"user,omitempty"`
}

type identity struct {
	UID    uint32   `json:"uid"`
	GID    uint32   `json:"gid"`
	Groups []uint32 `json:"groups"`
}

// Cmd returns the process that runs c — the command itself when c is Off,
// else the launcher, which confines itself and executes the command (same
// process) — and a release function to call once the process has been
// waited for or failed to start. The caller sets the standard streams,
// process attributes and cancellation (keeping what SysProcAttr holds:
// the credential of an unconfined command run as another user).
func (c Command) Cmd(ctx context.Context) (*exec.Cmd, func(), error) {
	if len(c.Argv) == 0 {
		return nil, nil, errors.New("no command to run")
	}
	if c.Confinement.Off {
		cmd := exec.CommandContext(ctx, c.Argv[0], c.Argv[1:]...)
		cmd.Dir = c.Dir
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: c.Credential}
		return cmd, func() {}, nil
	}
	self, err := os.Executable()
	if err != nil {
		return nil, nil, fmt.Errorf("finding this program to launch the sandbox: %w", err)
	}
	if r, err := filepath.EvalSymlinks(self); err == nil {
		self = r
	}
	in := instructions{Argv: c.Argv, Env: c.Env, Dir: c.Dir, ABI: c.Confinement.ABI}
	if cr := c.Credential; cr != nil {
		in.User = &identity{UID: cr.Uid, GID: cr.Gid, Groups: append([]uint32{}, cr.Groups...)}
	}
	if c.Confinement.Landlock() {
		in.Exec, in.Read, in.Devices = c.Policy.Exec, c.Policy.Read, c.Policy.Devices
		in.Write = append(append([]string{}, c.Policy.Write...), c.Policy.Caches...)
		in.WriteOnly = c.Policy.WriteOnly
	}
	data, err := json.Marshal(in)
	if err != nil {
		return nil, nil, err
	}
	r, w, err := os.Pipe()
	if err != nil {
		return nil, nil, err
	}
	go func() {
		// Blocks until the launcher reads (or the read end is closed:
		// the write then fails and nothing waits for it).
		_, _ = w.Write(data)
		w.Close()
	}()
	cmd := exec.CommandContext(ctx, self, LauncherArg)
	cmd.Dir = c.Dir
	// The launcher's own command line and environment are what any process
	// may read of it in /proc until it executes the command: nothing but
	// the command's allowlisted environment.
	cmd.Env = c.Env
	if cmd.Env == nil {
		cmd.Env = []string{}
	}
	cmd.ExtraFiles = []*os.File{r}
	cmd.SysProcAttr = &syscall.SysProcAttr{}
	return cmd, func() { r.Close() }, nil
}
