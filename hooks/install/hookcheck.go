package install

// `git+ hook check` (docs/operating.md "Checking the boundary: git+ hook
// check"): whether the pre-receive git will run for a repository reaches
// git+, whether the hook user can run it and use the git directory, and
// which identity source is configured. Written for an operator after any
// change on the host (a gitolite admin adding a repo-specific hook made
// gitolite replace git+'s pre-receive, and an unreviewed push to a
// protected branch was accepted).
//
// Decisions:
//   - The hook is found as git finds it: the hooks directory git names
//     (core.hooksPath honoured), symlinks followed.
//   - A hook reaches git+ when it is git+'s script (the marker), when it is
//     a script with a line running `git+ hook pre-receive` or `git+hook
//     pre-receive`, or when it is gitolite's driver and one of the hooks
//     the driver runs does (gitolite.go). Anything else is a problem.
//   - The hook user is the git directory's owner (owner.go); the hook
//     file, the binary it runs and every directory of the git directory
//     are judged from the mode bits for that user.
//   - The identity source is git config gitplus.pusher, printed as set
//     ("none" when unset); check does not judge it.
//   - Problems (the boundary is not in place, or will fail at the next
//     push) make the verb exit 1; warnings (it holds now but is fragile,
//     pushes will be refused for a reason the operator can fix, or an
//     after-push part will not run: hookcheck_ops.go) make it exit 3
//     (ExitWarnings) when there is no problem.

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// Via says how a hook reaches git+.
type Via string

const (
	ViaNone     Via = ""
	ViaDirect   Via = "directly (git+'s script)"
	ViaChained  Via = "after the chained hook (git+'s script)"
	ViaScript   Via = "through a script that runs git+"
	ViaGitolite Via = "through gitolite's repo-specific hook driver"
)

// Reach is how one hook of a repository reaches git+.
type Reach struct {
	Hook   string // the hook git runs
	Via    Via    // ViaNone: it does not reach git+
	Runs   string // the file that runs git+ (the hook, or the driver's companion)
	Binary string // the binary it runs
	Why    string // why it does not reach git+
}

// Detail says in words how (or why not) the hook reaches git+.
func (r Reach) Detail() string {
	if r.Via == ViaNone {
		return r.Why
	}
	s := fmt.Sprintf("%s reaches git+ %s", r.Hook, r.Via)
	if r.Runs != r.Hook {
		s += " (" + filepath.Base(r.Runs) + ")"
	}
	return s + ", running " + r.Binary
}

// reachHook follows hooksDir/name to git+.
func reachHook(hooksDir, name string) Reach {
	p := filepath.Join(hooksDir, name)
	r := Reach{Hook: p}
	if _, err := os.Lstat(p); err != nil {
		r.Why = fmt.Sprintf("there is no %s (%v)", p, errors.Unwrap(err))
		return r
	}
	if _, err := os.Stat(p); err != nil {
		r.Why = fmt.Sprintf("%s is a symlink to nothing (git skips it)", p)
		return r
	}
	if IsGitoliteDriver(p) {
		comps := driverHooks(hooksDir, name)
		for _, c := range comps {
			if bin, _, ok := scriptRuns(c, name); ok {
				r.Via, r.Runs, r.Binary = ViaGitolite, c, bin
				return r
			}
		}
		names := make([]string, len(comps))
		for i, c := range comps {
			names[i] = filepath.Base(c)
		}
		if len(names) == 0 {
			names = []string{"nothing"}
		}
		r.Why = fmt.Sprintf("%s is gitolite's hook driver, which runs %s; none of them runs git+", p, strings.Join(names, ", "))
		return r
	}
	bin, marker, ok := scriptRuns(p, name)
	switch {
	case !ok:
		r.Why = fmt.Sprintf("%s is not git+'s and does not run git+", p)
	case marker:
		r.Via, r.Runs, r.Binary = ViaDirect, p, bin
		if fi, err := os.Stat(p + ChainedSuffix); err == nil && fi.Mode().Perm()&0o111 != 0 {
			r.Via = ViaChained
		}
	default:
		r.Via, r.Runs, r.Binary = ViaScript, p, bin
	}
	return r
}

// scriptRuns reads the hook script at path: the binary it runs for the
// hook name, whether it is git+'s own script (marker), and whether it runs
// git+ at all.
func scriptRuns(path, name string) (bin string, marker, ok bool) {
	data, err := os.ReadFile(path)
	if err != nil {
		return "", false, false
	}
	text := string(data)
	if strings.Contains(text, Marker) {
		bin = scriptBinary(data)
		if name == "pre-receive" {
			if lean := scriptValue(data, leanPrefix); lean != "" {
				bin = lean
			}
		}
		return bin, true, bin != ""
	}
	for _, line := range strings.Split(text, "\n") {
		if i := strings.Index(line, "#"); i >= 0 {
			line = line[:i]
		}
		f := strings.Fields(line)
		for i := range f {
			f[i] = strings.Trim(f[i], `'"`)
		}
		for i, w := range f {
			switch filepath.Base(w) {
			case "git+hook":
				if i+1 < len(f) && f[i+1] == name {
					return w, false, true
				}
			case "git+":
				if i+2 < len(f) && f[i+1] == "hook" && f[i+2] == name {
					return w, false, true
				}
			}
		}
	}
	return "", false, false
}

// scriptValue is the value of a `prefix'value'` line of git+'s script.
func scriptValue(data []byte, prefix string) string {
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, prefix); ok {
			v = strings.TrimSuffix(strings.TrimPrefix(v, "'"), "'")
			return strings.ReplaceAll(v, `'\''`, "'")
		}
	}
	return ""
}

// CheckReport is what Check found.
type CheckReport struct {
	GitDir, HooksDir string
	PreReceive       Reach
	PostReceive      Reach
	Owner            Owner
	Gitolite         bool
	Pusher           string   // git config gitplus.pusher; "none" when unset
	Problems         []string // each says what is wrong and what to do
	Warnings         []string
}

// ExitWarnings is hook check's exit status when the boundary is in place
// but there are warnings (1 is for problems, 2 for usage).
const ExitWarnings = 3

// OK reports whether the boundary is in place.
func (c *CheckReport) OK() bool { return len(c.Problems) == 0 }

// maxDirProblems bounds the git directory entries named as not usable.
const maxDirProblems = 5

// Check inspects the repository at gitDir (docs/operating.md "Checking the
// boundary: git+ hook check").
func Check(gitDir string) (*CheckReport, error) {
	dir, err := filepath.Abs(gitDir)
	if err != nil {
		return nil, err
	}
	hooksDir, err := hooksPath(dir)
	if err != nil {
		return nil, err
	}
	owner, err := ownerOf(dir)
	if err != nil {
		return nil, fmt.Errorf("finding the owner of %s: %w", dir, err)
	}
	c := &CheckReport{GitDir: dir, HooksDir: hooksDir, Owner: owner, Gitolite: isGitolite(dir, hooksDir), Pusher: "none"}
	if v, err := git(dir, "config", "--get", "gitplus.pusher"); err == nil && v != "" {
		c.Pusher = v
	}
	install := "run git+ hook install --repo " + dir
	if c.Gitolite {
		install = "add git+ as gitolite's repo-specific hook (git+ hook install --repo " + dir + " prints how)"
	}

	c.PreReceive = reachHook(hooksDir, "pre-receive")
	pre := c.PreReceive
	if pre.Via == ViaNone {
		c.Problems = append(c.Problems, fmt.Sprintf("pushes are not judged: %s: %s", pre.Why, install))
	} else {
		for _, f := range []string{pre.Hook, pre.Runs} {
			if why := owner.canRun(f); why != "" {
				c.Problems = append(c.Problems, fmt.Sprintf("git will not run %s as the hook user: %s: make it executable by %s", f, why, owner.Name))
				break
			}
		}
		switch {
		case !filepath.IsAbs(pre.Binary):
			c.Warnings = append(c.Warnings, fmt.Sprintf("%s runs %q, found through PATH at push time: %s (the script then names the binary by absolute path)", pre.Runs, pre.Binary, install))
		default:
			if why := owner.canRun(pre.Binary); why != "" {
				c.Problems = append(c.Problems, fmt.Sprintf("the pre-receive runs %s, which the hook user cannot run (every push will be refused): %s: install the binaries where %s can run them and %s",
					pre.Binary, why, owner.Name, install))
			}
		}
		if c.Gitolite && pre.Via != ViaGitolite {
			c.Warnings = append(c.Warnings, fmt.Sprintf("gitolite manages %s: its compile replaces %s with its driver once any repo-specific hook is configured for the repository: %s",
				dir, pre.Hook, "add git+ as gitolite's repo-specific hook (docs/operating.md \"Installing on gitolite\")"))
		}
	}
	c.PostReceive = reachHook(hooksDir, "post-receive")
	if c.PostReceive.Via == ViaNone {
		c.Warnings = append(c.Warnings, fmt.Sprintf("mirrors, webhooks and wake rules will not run after pushes: %s: %s", c.PostReceive.Why, install))
	}
	c.Problems = append(c.Problems, dirProblems(dir, owner)...)
	c.operatorWarnings() // hookcheck_ops.go
	return c, nil
}

// dirProblems names (bounded) the entries of the git directory the hook
// user cannot use: a directory it cannot write into, a file it cannot read.
func dirProblems(dir string, owner Owner) []string {
	var bad []string
	more := 0
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.Type()&fs.ModeSymlink != 0 {
			return nil
		}
		fi, err := d.Info()
		if err != nil {
			return nil
		}
		want, what := os.FileMode(4), "read"
		if d.IsDir() {
			want, what = 7, "write into"
		}
		if owner.may(fi, want) {
			return nil
		}
		if len(bad) == maxDirProblems {
			more++
			return nil
		}
		uid, _, _ := fileOwner(fi)
		bad = append(bad, fmt.Sprintf("the hook user %s cannot %s %s (owned by %s, mode %s): pushes will fail there; run chown -R %s %s",
			owner, what, p, lookupOwner(uid, 0).Name, fi.Mode().Perm(), owner.chownName(), dir))
		return nil
	})
	if more > 0 {
		bad = append(bad, fmt.Sprintf("(%d more entries of %s the hook user cannot use)", more, dir))
	}
	return bad
}
