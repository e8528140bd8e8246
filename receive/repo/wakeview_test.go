package repo

import (
	"path/filepath"
	"testing"

	"github.com/gitplus/gitplus/fixtures"
)

// The server is local for remote ".", a local path (relative to a clone's
// work tree, or to a bare repository) or a file:// URL; not for a network
// URL or git's scp-like host:path.
func TestServerGitDir(t *testing.T) {
	root := t.TempDir()
	server := filepath.Join(root, "srv.git")
	fixtures.Git(t, root, "init", "-q", "--bare", server)
	fixtures.Git(t, root, "init", "-q", "work")
	work := filepath.Join(root, "work")
	clone := &Repo{GitDir: filepath.Join(work, ".git"), Remote: "origin"}
	for _, tc := range []struct{ url, want string }{
		{"../srv.git", server},
		{server, server},
		{"file://" + server, server},
		{"https://example.com/srv.git", ""},
		{"example.com:srv.git", ""},
		{"../nothing.git", ""},
	} {
		fixtures.Git(t, work, "config", "remote.origin.url", tc.url)
		if got := clone.ServerGitDir(); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.url, got, tc.want)
		}
	}
	own := &Repo{GitDir: server, Bare: true, Remote: "."}
	if got := own.ServerGitDir(); got != server {
		t.Errorf("remote .: %q", got)
	}
}
