package install

// Installing the hook scripts (docs/operating.md "Installing the hooks").
//
// Decisions for installing:
//   - The scripts exec the git+ binary by absolute path (no PATH lookup at
//     push time), so a server's hook environment needs nothing else;
//     pre-receive execs the lean git+hook binary instead when lean.go's
//     conditions hold. Without a chained hook the script execs the binary
//     directly (standard input is not copied).
//   - The hooks directory is git's own answer (`git rev-parse --git-path
//     hooks`), so core.hooksPath is honoured.
//   - In a repository gitolite manages, no hook is written or renamed:
//     git+ goes in as a gitolite repo-specific hook (gitolite.go).
//   - Install does not judge who runs it; the CLI asks CheckInstall first
//     (owner.go: the hook user must be able to use what is written).
//   - A hook already there that git+ did not write is kept: it is renamed to
//     <name>.chained and the git+ script runs it first with the same standard
//     input and arguments. A chained pre-receive that fails refuses the push
//     before git+ judges it; a chained post-receive that fails does not stop
//     git+'s own post-receive, but the script exits non-zero.
//   - Re-installing is idempotent: a script carrying the git+ marker is
//     rewritten in place (a new binary path takes effect) and never chained to
//     itself. If <name>.chained already exists and the current hook is not
//     git+'s, Install refuses rather than lose either hook.
//   - Scripts are written to a temporary file and renamed into place.
//   - The post-receive script starts nothing when none of the after-push
//     configuration files (RemotesFile, WebhooksFile, WakeFile) exists, no
//     hook is chained and git+'s pre-receive script is still the one beside
//     it: git+'s post-receive would do nothing, and starting it cost about
//     5.5 ms a push (more than pre-receive). When the pre-receive is no
//     longer git+'s (an operator dropped it), git+'s post-receive runs on
//     every push, to raise the unjudged-update alarm.
//   - receive.advertisePushOptions is set to true in the repository's config
//     so that pushes may carry options (wake tags, docs/operating.md), and
//     receive.fsckObjects to true so that git checks every object a push
//     brings (docs/objects.md says what it costs).
//   - receive.certNonceSeed (and receive.certNonceSlop) are set when absent,
//     so that the repository takes signed pushes (pushcert.go).
//   - Installs run one at a time per repository, and config writes outlast
//     another writer's lock (installlock.go).
//   - The after-push configuration directory hub/ is created (empty), so
//     an operator following docs/operating.md finds where wake.json goes.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/gitplus/gitplus/hooks/config"
	"github.com/gitplus/gitplus/receive/gitio"
)

// Marker is the line that identifies a hook script written by git+.
const Marker = "# git+ managed hook"

// ChainedSuffix is appended to the name of a hook that git+ found in place.
const ChainedSuffix = ".chained"

// Names are the hooks Install writes.
var Names = []string{"pre-receive", "post-receive"}

// ErrInstall reports a hook installation that could not be completed.
var ErrInstall = errors.New("hook installation failed")

// Install writes the pre-receive and post-receive scripts into the hooks
// directory of the git directory gitDir, each exec'ing binary (made
// absolute) as `<binary> hook <name>`, and sets receive.advertisePushOptions.
func Install(gitDir, binary string) error {
	if binary == "" {
		return fmt.Errorf("installing hooks into %s: no git+ binary given: %w", gitDir, ErrInstall)
	}
	bin, err := filepath.Abs(binary)
	if err != nil {
		return fmt.Errorf("git+ binary %s: %w", binary, err)
	}
	if fi, err := os.Stat(bin); err != nil || fi.IsDir() {
		return fmt.Errorf("git+ binary %s is not a file: %w", bin, ErrInstall)
	}
	dir, err := filepath.Abs(gitDir)
	if err != nil {
		return fmt.Errorf("git directory %s: %w", gitDir, err)
	}
	hooksDir, err := hooksPath(dir)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(hooksDir, 0o755); err != nil {
		return fmt.Errorf("creating %s: %w", hooksDir, err)
	}
	lean, _ := LeanHook(bin)
	// One install at a time (installlock.go).
	return withInstallLock(dir, func() error {
		// gitolite's hooks are never rewritten nor chained (gitolite.go).
		gitolite, err := gitoliteInstall(dir, hooksDir, bin, lean)
		if err != nil {
			return err
		}
		for _, name := range Names {
			if gitolite {
				break
			}
			if err := installOne(hooksDir, name, bin, lean); err != nil {
				return err
			}
		}
		if out, err := setConfig(dir, "receive.advertisePushOptions", "true"); err != nil {
			return fmt.Errorf("setting receive.advertisePushOptions in %s: %v: %s: %w", dir, err, out, ErrInstall)
		}
		// Defence in depth (docs/objects.md): git itself refuses objects its
		// fsck refuses, on every branch; the hook's own checks (bad-object)
		// stand without it.
		if out, err := setConfig(dir, "receive.fsckObjects", "true"); err != nil {
			return fmt.Errorf("setting receive.fsckObjects in %s: %v: %s: %w", dir, err, out, ErrInstall)
		}
		if err := configurePushCerts(dir); err != nil { // signed pushes (pushcert.go)
			return err
		}
		// The after-push configuration's directory, so that hub/wake.json
		// (webhooks.json, remotes.json) has a home an operator can see.
		if err := os.MkdirAll(filepath.Join(dir, "hub"), 0o755); err != nil {
			return fmt.Errorf("creating %s: %w", filepath.Join(dir, "hub"), err)
		}
		return markInitialized(dir) // mark.go
	})
}

// Installed reports whether both git+ hooks are in place in gitDir, and the
// binary the pre-receive script runs.
func Installed(gitDir string) (bool, string, error) {
	dir, err := filepath.Abs(gitDir)
	if err != nil {
		return false, "", err
	}
	hooksDir, err := hooksPath(dir)
	if err != nil {
		return false, "", err
	}
	bin := ""
	for _, name := range Names {
		data, err := os.ReadFile(filepath.Join(hooksDir, name))
		if errors.Is(err, os.ErrNotExist) {
			return false, "", nil
		}
		if err != nil {
			return false, "", err
		}
		if !bytes.Contains(data, []byte(Marker)) {
			return false, "", nil
		}
		if name == "pre-receive" {
			bin = scriptBinary(data)
		}
	}
	return true, bin, nil
}

func hooksPath(gitDir string) (string, error) {
	out, err := git(gitDir, "rev-parse", "--git-path", "hooks")
	if err != nil {
		return "", fmt.Errorf("%s is not a git directory: %v: %s: %w", gitDir, err, out, ErrInstall)
	}
	p := strings.TrimSpace(out)
	if !filepath.IsAbs(p) {
		p = filepath.Join(gitDir, p)
	}
	return p, nil
}

// git runs git in gitDir (gitio.RunGit) and returns its output, standard
// error after standard output, trimmed.
func git(gitDir string, args ...string) (string, error) {
	out, errb, err := gitio.RunGit(context.Background(), gitDir, nil, append([]string{"--git-dir=" + gitDir}, args...)...)
	return strings.TrimSpace(string(out) + string(errb)), err
}

func installOne(hooksDir, name, bin, lean string) error {
	path := filepath.Join(hooksDir, name)
	chained := path + ChainedSuffix
	fi, err := os.Lstat(path)
	switch {
	case errors.Is(err, os.ErrNotExist):
	case err != nil:
		return fmt.Errorf("reading hook %s: %w", path, err)
	default:
		ours := false
		if fi.Mode().IsRegular() {
			data, err := os.ReadFile(path)
			if err != nil {
				return fmt.Errorf("reading hook %s: %w", path, err)
			}
			ours = bytes.Contains(data, []byte(Marker))
		}
		if !ours {
			if _, err := os.Lstat(chained); err == nil {
				return fmt.Errorf("hook %s is not git+'s and %s already exists: merge the two by hand (or remove one), then re-run git+ hook install: %w",
					path, chained, ErrInstall)
			}
			if err := os.Rename(path, chained); err != nil {
				return fmt.Errorf("keeping the existing hook %s as %s: %w", path, chained, err)
			}
		}
	}
	return writeAtomic(path, []byte(script(name, bin, lean)), 0o755)
}

func writeAtomic(path string, data []byte, mode os.FileMode) error {
	if err := gitio.WriteFileAtomic(path, "."+filepath.Base(path)+".tmp-*", mode, data); err != nil {
		return fmt.Errorf("writing hook %s: %w", path, err)
	}
	return nil
}

// shellQuote quotes s for a POSIX shell.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

const (
	binPrefix  = "gitplus_bin="
	leanPrefix = "gitplus_hook="
)

func scriptBinary(data []byte) string {
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, binPrefix); ok {
			v = strings.TrimSuffix(strings.TrimPrefix(v, "'"), "'")
			return strings.ReplaceAll(v, `'\''`, "'")
		}
	}
	return ""
}

// shellPattern quotes s for a case pattern: every character matched as
// itself.
func shellPattern(s string) string {
	var b strings.Builder
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// script renders the hook script for name. Standard input is read once and
// handed to the chained hook (if any) and to git+ unchanged. lean, when not
// empty, is the lean binary pre-receive runs (see lean.go).
func script(name, bin, lean string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "#!/bin/sh\n%s (written by `git+ hook install`; re-run it to update).\n", Marker)
	fmt.Fprintf(&b, "# A hook found here before lives on as %s%s and runs first.\n", name, ChainedSuffix)
	fmt.Fprintf(&b, "%s%s\n", binPrefix, shellQuote(bin))
	run := `"$gitplus_bin" hook ` + name
	if lean != "" {
		fmt.Fprintf(&b, "%s%s\n", leanPrefix, shellQuote(lean))
		run = `"$gitplus_hook" ` + name
		if name == "post-receive" { // the lean post-receive starts the delivery worker with git+
			run += ` "$gitplus_bin"`
		}
	}
	// The hooks directory without a subshell: git runs a hook by a path
	// with a slash in it; a bare name means the current directory.
	b.WriteString("case $0 in */*) hooks=${0%/*} ;; *) hooks=. ;; esac\n")
	fmt.Fprintf(&b, "chained=\"$hooks/%s%s\"\n", name, ChainedSuffix)
	// Without a chained hook, git+ takes standard input itself: no copy,
	// one process fewer on every push. post-receive has nothing to do
	// without an after-push configuration file (docs/operating.md): then no
	// process is started at all (git ignores a hook that leaves its input
	// unread).
	b.WriteString(`if [ ! -x "$chained" ]; then
`)
	if name == "post-receive" {
		// ... unless git+'s pre-receive is no longer the one beside it
		// (its second line is Marker's): then a push may have moved a
		// protected branch unjudged, and git+'s post-receive raises the
		// alarm (hooks/opstatus, docs/operating.md "When a protected
		// branch moves unjudged"). Two reads, no process.
		b.WriteString("\tpre=\n\t{ read -r pre && read -r pre; } 2>/dev/null <\"$hooks/pre-receive\"\n")
		fmt.Fprintf(&b, "\tcase $pre in\n\t%s*)\n", shellPattern(Marker))
		fmt.Fprintf(&b, "\t\tgitdir=${GIT_DIR:-.}\n\t\t[ -e \"$gitdir/%s\" ] || [ -e \"$gitdir/%s\" ] || [ -e \"$gitdir/%s\" ] || exit 0\n\t\t;;\n\tesac\n",
			config.RemotesFile, config.WebhooksFile, config.WakeFile)
	}
	b.WriteString(`	exec ` + run + `
fi
input=$(cat; echo x)
input=${input%x}
`)
	if name == "pre-receive" {
		b.WriteString(`printf '%s' "$input" | "$chained" "$@" || exit $?
printf '%s' "$input" | ` + run + "\n")
		return b.String()
	}
	b.WriteString(`status=0
printf '%s' "$input" | "$chained" "$@" || status=$?
printf '%s' "$input" | ` + run + ` || status=$?
exit $status
`)
	return b.String()
}
