package repo

// Which copy of a branch `git+ verify --branch` judges (docs/cli.md
// "Verify"): in a clone with a remote, the remote's branch and records,
// fetched first, so a clone whose refs/hub/* or branch are behind does not
// judge stale records; --no-fetch judges the clone's copy as it is. The
// branch may be named as the remote's: origin/main or
// refs/remotes/origin/main judge refs/heads/main of origin.

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/gitplus/gitplus/receive/gitio"
)

// AuditSource is the branch an audit judges and where its tip came from.
type AuditSource struct {
	Branch   string        // the branch judged, refs/heads/...
	Remote   string        // the remote it belongs to ("." or "": this repository's own)
	URL      string        // the remote's URL, when it has one
	Tracking string        // the ref the tip was read from (refs/remotes/R/X, or Branch)
	Tip      plumbing.Hash // the commit judged
	Fetched  bool          // the tip and refs/hub/* were fetched from Remote just now
}

// Own reports whether the audit judges this repository's own branch (a
// bare repository, a mirror, a clone with no remote).
func (s AuditSource) Own() bool { return s.Remote == "" || s.Remote == "." }

// ResolveAuditSource interprets verify's --branch arg in gitDir: X or
// refs/heads/X (with remote, "" for DefaultRemote), R/X or
// refs/remotes/R/X for a remote R of this clone. Unless noFetch, a branch
// of a remote is fetched with every hub ref first (+refs/hub/*:refs/hub/*,
// the branch into its remote-tracking ref).
func ResolveAuditSource(ctx context.Context, gitDir string, bare bool, arg, remote string, noFetch bool) (AuditSource, error) {
	var src AuditSource
	tracked := false // named as a remote's branch
	rest, isTracking := strings.CutPrefix(arg, "refs/remotes/")
	if !isTracking && !strings.HasPrefix(arg, "refs/") {
		if r, _, ok := strings.Cut(arg, "/"); ok && remoteURL(gitDir, r) != "" {
			rest, isTracking = arg, true
		}
	}
	if isTracking {
		r, x, ok := strings.Cut(rest, "/")
		if !ok || x == "" || remoteURL(gitDir, r) == "" {
			return src, fmt.Errorf("--branch %s: %s is no remote of %s (git remote -v lists them)", arg, r, gitDir)
		}
		b, err := BranchRef(x)
		if err != nil {
			return src, err
		}
		src = AuditSource{Branch: b, Remote: r, Tracking: "refs/remotes/" + r + "/" + x}
		tracked = true
	} else {
		b, err := BranchRef(arg)
		if err != nil {
			return src, err
		}
		if remote == "" {
			remote, _ = DefaultRemote(gitDir, bare)
		}
		src = AuditSource{Branch: b, Remote: remote, Tracking: b}
	}
	if src.Own() {
		src.Remote = "."
	} else {
		src.URL = remoteURL(gitDir, src.Remote)
		if src.URL == "" {
			src.URL = src.Remote // a URL or path given with --remote
		}
	}
	if !src.Own() && !noFetch {
		short := strings.TrimPrefix(src.Branch, "refs/heads/")
		src.Tracking = "refs/gitplus/verify/" + short
		if remoteURL(gitDir, src.Remote) != "" {
			src.Tracking = "refs/remotes/" + src.Remote + "/" + short
		}
		if err := gitio.Fetch(ctx, gitDir, src.Remote, nil, "+refs/hub/*:refs/hub/*", "+"+src.Branch+":"+src.Tracking); err != nil {
			return src, fmt.Errorf("fetching %s and the records (refs/hub/*) from %s (%s) to judge them: %w; pass --no-fetch to judge this clone's copy as it is", src.Branch, src.Remote, src.URL, err)
		}
		src.Fetched = true
	} else if !tracked {
		src.Tracking = src.Branch
	}
	tip, err := gitio.ReadRef(gitDir, src.Tracking)
	if errors.Is(err, plumbing.ErrReferenceNotFound) {
		return src, fmt.Errorf("%s does not exist in %s (fetch it, or name the remote's: --branch origin/%s)", src.Tracking, gitDir, strings.TrimPrefix(src.Branch, "refs/heads/"))
	}
	if err != nil {
		return src, err
	}
	src.Tip = tip
	return src, nil
}

// remoteURL is remote.NAME.url in gitDir's configuration, or "".
func remoteURL(gitDir, name string) string {
	if name == "" || name == "." || strings.ContainsAny(name, ":\\") {
		return ""
	}
	u, err := Git(gitDir, "config", "--get", "remote."+name+".url")
	if err != nil {
		return ""
	}
	return u
}

// Line says which copy the audit judged, for verify's first line; "" for a
// repository's own branch.
func (s AuditSource) Line() string {
	switch {
	case s.Own():
		return ""
	case s.Fetched:
		return fmt.Sprintf("judged as fetched just now from %s (%s): %s at %s", s.Remote, s.URL, s.Branch, s.Tip)
	case s.Tracking != s.Branch:
		return fmt.Sprintf("not fetched (--no-fetch): judged %s at %s, this clone's copy of %s on %s (%s), with its refs/hub/* as last fetched", s.Tracking, s.Tip, s.Branch, s.Remote, s.URL)
	default:
		return fmt.Sprintf("not fetched (--no-fetch): judged this clone's own %s at %s, with its refs/hub/* as last fetched; %s (%s) may be ahead", s.Branch, s.Tip, s.Remote, s.URL)
	}
}
