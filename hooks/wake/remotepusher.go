package wake

import (
	"strings"

	"github.com/gitplus/gitplus/receive"
)

// RemotePusher reports whether the push whose hook has environ came over a
// network: through git+ serve (GITPLUS_SERVED), or a host that says which
// user it authenticated (gitolite's and GitLab's GL_*, a web server's
// REMOTE_USER, Gitea's and Forgejo's GITEA_PUSHER_*). A push by path is
// not: its pusher reads the repository's files anyway; nor is a push over
// plain sshd, whose pusher has a login there (sshd's variables are also in
// every shell of that login, so they would not tell the two apart). A remote pusher is told that after-push steps
// failed but not the server's paths or configuration (docs/delivery.md
// "Configuration errors").
func RemotePusher(environ []string) bool {
	for _, kv := range environ {
		name, v, _ := strings.Cut(kv, "=")
		if v == "" {
			continue
		}
		switch {
		case name == receive.EnvServed, name == "GL_USER", name == "GL_ID", name == "GL_USERNAME", name == "REMOTE_USER",
			strings.HasPrefix(name, "GITEA_PUSHER_"):
			return true
		}
	}
	return false
}
