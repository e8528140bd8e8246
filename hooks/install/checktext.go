package install

// `git+ hook check`'s output and exit status (docs/operating.md "Checking
// the boundary: git+ hook check"; the decisions are hookcheck.go's).

import (
	"errors"
	"fmt"
	"io"

	"github.com/gitplus/gitplus/receive/gitio"
)

// CheckDir is Check of the repository dir names, found without asking git
// (no safe.directory refusal, so root can check a repository another user
// owns), or of the current one when dir is "".
func CheckDir(dir string) (*CheckReport, error) {
	var gitDir string
	var err error
	if dir != "" {
		gitDir, err = gitio.ResolveGitDir(dir)
	} else {
		gitDir, _, err = gitio.FindGitDir("")
	}
	if err != nil {
		return nil, err
	}
	return Check(gitDir)
}

// Sentinel errors of Exit.
var (
	// ErrNotInPlace: the boundary is not in place (a problem).
	ErrNotInPlace = errors.New("hook check failed")
	// ErrWarnings: the boundary is in place, with warnings.
	ErrWarnings = errors.New("hook check warned")
)

// WriteText prints the report: the repository, its hooks, the hook user,
// the identity source, each warning and problem, and "ok" when the
// boundary is in place without warnings.
func (c *CheckReport) WriteText(w io.Writer) {
	fmt.Fprintf(w, "repository: %s\n", c.GitDir)
	fmt.Fprintf(w, "hooks: %s\n", c.HooksDir)
	if c.Gitolite {
		fmt.Fprintln(w, "host: gitolite manages this repository's hooks")
	}
	for _, h := range []struct {
		name string
		r    Reach
	}{{"pre-receive", c.PreReceive}, {"post-receive", c.PostReceive}} {
		if h.r.Via == ViaNone {
			fmt.Fprintf(w, "%s: does not reach git+\n", h.name)
		} else {
			fmt.Fprintf(w, "%s: %s\n", h.name, h.r.Detail())
		}
	}
	fmt.Fprintf(w, "hook user: %s, the owner of %s\n", c.Owner, c.GitDir)
	fmt.Fprintf(w, "identity source (gitplus.pusher): %s\n", c.Pusher)
	for _, p := range c.Warnings {
		fmt.Fprintf(w, "warning: %s\n", p)
	}
	for _, p := range c.Problems {
		fmt.Fprintf(w, "problem: %s\n", p)
	}
	if c.OK() && len(c.Warnings) == 0 {
		fmt.Fprintln(w, "ok: the boundary is in place")
	}
}

// Exit is hook check's exit status for the report, and the error it ends
// with: 1 (ErrNotInPlace) with a problem, ExitWarnings (ErrWarnings) with
// warnings alone, 0 (nil) otherwise.
func (c *CheckReport) Exit() (int, error) {
	switch {
	case !c.OK():
		return 1, fmt.Errorf("the boundary of %s is not in place (%d problems above): %w", c.GitDir, len(c.Problems), ErrNotInPlace)
	case len(c.Warnings) > 0:
		return ExitWarnings, fmt.Errorf("the boundary of %s is in place, with %d warning(s) above: %w", c.GitDir, len(c.Warnings), ErrWarnings)
	}
	return 0, nil
}
