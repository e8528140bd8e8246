package repo

// The server's wake failures in `git+ queue show` (docs/operating.md "When
// a wake rule fails").
//
// Decisions:
//   - The records live in the server's git directory: queue show reads
//     them when the repository it reads is the server's (a bare
//     repository, --remote .) or a clone whose remote is a local path
//     (ServerGitDir); a clone over the network finds them in the server's
//     published status ref, fetched with the hub refs.

import (
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/gitplus/gitplus/receive/gitio"
)

// WakeFailure is one of the server's wake rules whose latest run failed
// (docs/operating.md "When a wake rule fails"), as `git+ queue show`
// prints it: Text is the line ("wake rule ci failed 3 times since …:
// <its last output line>"). The caller fills QueueView.WakeFailures from
// the server's records (hooks/opstatus.WakeFailuresOf).
type WakeFailure struct {
	Rule     string    `json:"rule"`
	Failures int       `json:"failures"`
	Since    time.Time `json:"since"`
	Last     time.Time `json:"last"`
	Exit     int       `json:"exit"`
	Error    string    `json:"error,omitempty"`
	Line     string    `json:"line,omitempty"`
	Text     string    `json:"text"`
}

// ServerGitDir is the git directory of r's server when it is on this
// machine (r itself with remote ".", or a remote whose URL is a local
// path), else "".
func (r *Repo) ServerGitDir() string {
	if r.Remote == "." {
		return r.GitDir
	}
	url := r.Remote
	if u, err := Git(r.GitDir, "config", "--get", "remote."+r.Remote+".url"); err == nil && u != "" {
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
		base := filepath.Dir(r.GitDir) // a clone's work tree holds .git
		if r.Bare {
			base = r.GitDir
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
