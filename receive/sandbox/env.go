package sandbox

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/gitplus/gitplus/receive/childenv"
)

// Env is a confined command's environment: childenv.SystemVars of parent,
// USER and LOGNAME set to user when given, HOME, TMPDIR and the XDG
// directories in the scratch directory (ScratchVars), the variables of
// parent named in pass, then set (NAME=VALUE, the check's own variables).
// A later entry replaces an earlier one of the same name, so the result
// names each variable once.
func Env(parent []string, user, scratch string, pass, set []string) []string {
	env := childenv.SystemVars(parent)
	if user != "" {
		env = append(env, "USER="+user, "LOGNAME="+user)
	}
	if scratch != "" {
		env = append(env, ScratchVars(scratch)...)
	}
	env = append(env, childenv.Pick(parent, pass)...)
	env = append(env, set...)
	return childenv.Dedup(env)
}

// scratchDirs are the directories of a scratch directory and the
// variables that name them.
var scratchDirs = []struct{ name, dir string }{
	{"HOME", "home"},
	{"TMPDIR", "tmp"},
	{"XDG_CONFIG_HOME", "home/.config"},
	{"XDG_CACHE_HOME", "home/.cache"},
	{"XDG_DATA_HOME", "home/.local/share"},
	{"XDG_STATE_HOME", "home/.local/state"},
	{"XDG_RUNTIME_DIR", "run"},
}

// ScratchVars are the variables naming the directories of scratch: HOME,
// TMPDIR and the XDG base directories.
func ScratchVars(scratch string) []string {
	out := make([]string, 0, len(scratchDirs))
	for _, d := range scratchDirs {
		out = append(out, d.name+"="+filepath.Join(scratch, d.dir))
	}
	return out
}

// MakeScratch creates the directories of ScratchVars under scratch
// (XDG_RUNTIME_DIR private, as the XDG specification asks) and, when uid
// is not -1, hands scratch and all of them to uid and gid.
func MakeScratch(scratch string, uid, gid int) error {
	for _, d := range scratchDirs {
		mode := os.FileMode(0o755)
		if d.name == "XDG_RUNTIME_DIR" {
			mode = 0o700
		}
		p := filepath.Join(scratch, d.dir)
		if err := os.MkdirAll(p, mode); err != nil {
			return fmt.Errorf("creating the scratch directory %s: %w", p, err)
		}
	}
	if uid == -1 {
		return nil
	}
	return Chown(scratch, uid, gid)
}

// Chown hands dir and everything beneath it to uid and gid.
func Chown(dir string, uid, gid int) error {
	return filepath.WalkDir(dir, func(p string, _ os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if err := os.Lchown(p, uid, gid); err != nil {
			return fmt.Errorf("handing %s to uid %d: %w", p, uid, err)
		}
		return nil
	})
}

// Cache is a directory a command may write across runs (--cache): Dir,
// and when Env is set the variable naming it to the command (--cache
// GOCACHE=/var/cache/ci/go-build).
type Cache struct{ Env, Dir string }

// ParseCache reads --cache: DIR or NAME=DIR, DIR absolute. A value that
// starts with "/" is a directory whatever it holds ("/tmp/a=b" is one):
// no variable name starts with "/".
func ParseCache(s string) (Cache, error) {
	var c Cache
	if name, dir, ok := strings.Cut(s, "="); ok && !strings.HasPrefix(s, "/") {
		if err := childenv.ValidName(name); err != nil {
			return c, fmt.Errorf("--cache %s: %w", s, err)
		}
		c.Env, s = name, dir
	}
	if !filepath.IsAbs(s) {
		return c, fmt.Errorf("--cache %s: give the directory as an absolute path", s)
	}
	c.Dir = filepath.Clean(s)
	return c, nil
}
