package main

// The server's wake failures in `git+ queue show` (hooks/wakeoutcome.go,
// docs/operating.md "When a wake rule fails").
//
// Decisions:
//   - The records live in the server's git directory: queue show reads
//     them when the repository it reads is the server's (a bare
//     repository, --remote .) or a clone whose remote is a local path;
//     a clone over the network finds them in the server's published
//     status ref (hooks.StatusRef), fetched with the hub refs.

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/gitplus/gitplus/hooks/opstatus"
	"github.com/gitplus/gitplus/receive/gitio"
	"github.com/gitplus/gitplus/receive/repo"
)

// serverGitDir is the git directory of h's server when it is on this
// machine, else "".
func serverGitDir(h *repo.Repo) string {
	if h.Remote == "." {
		return h.GitDir
	}
	url := h.Remote
	if u, err := repo.Git(h.GitDir, "config", "--get", "remote."+h.Remote+".url"); err == nil && u != "" {
		url = u
	}
	url = strings.TrimPrefix(url, "file://")
	if strings.Contains(url, "://") {
		return ""
	}
	if i := strings.Index(url, ":"); i > 0 && !strings.Contains(url[:i], "/") {
		return "" // host:path, git's scp-like ssh syntax
	}
	if !filepath.IsAbs(url) {
		base := filepath.Dir(h.GitDir) // a clone's work tree holds .git
		if h.Bare {
			base = h.GitDir
		}
		url = filepath.Join(base, url)
	}
	if fi, err := os.Stat(url); err != nil || !fi.IsDir() {
		return ""
	}
	d, err := gitio.ResolveGitDir(url)
	if err != nil {
		return ""
	}
	return d
}

// wakeFailures are the failing wake rules of h's server: read from its git
// directory when it is local, else from the status it publishes.
func wakeFailures(h *repo.Repo) []repo.WakeFailure {
	var fs []opstatus.WakeFailure
	if d := serverGitDir(h); d != "" {
		fs, _ = opstatus.WakeFailingIn(d)
	} else {
		fs = opstatus.PublishedWakeFailures(h.GitDir)
	}
	out := make([]repo.WakeFailure, 0, len(fs))
	for _, f := range fs {
		out = append(out, repo.WakeFailure{Rule: f.Rule, Failures: f.Failures, Since: f.Since, Last: f.Last, Exit: f.Exit,
			Error: f.Error, Line: f.Line, Text: f.String()})
	}
	return out
}
