package wake

import (
	"strings"

	"github.com/gitplus/gitplus/receive"
)

// pusherEnv names what identifies the pusher of a push to its hooks: git+
// serve's GITPLUS_SERVED, GITKIT_KEY and GITPLUS_TOKEN_KEY, the push
// certificate variables receive-pack sets for a signed push (and never
// clears), and what other hosts set for the user they authenticated
// (docs/serving.md "Identity from the host"): gitolite's GL_USER, GL_REPO
// and GL_TID, GitLab's GL_ID, GL_USERNAME, GL_REPOSITORY, GL_PROJECT_PATH
// and GL_PROTOCOL, a web server's CGI REMOTE_USER, AUTH_TYPE and
// REMOTE_IDENT, sshd's SSH_USER_AUTH, and the committer git http-backend
// derives from REMOTE_USER (GIT_COMMITTER_NAME, GIT_COMMITTER_EMAIL).
var pusherEnv = map[string]bool{receive.EnvServed: true, receive.EnvSSHKey: true, receive.EnvTokenKey: true,
	"GIT_PUSH_CERT": true, "GIT_PUSH_CERT_NONCE": true, "GIT_PUSH_CERT_NONCE_STATUS": true, "GIT_PUSH_CERT_STATUS": true,
	"GIT_PUSH_CERT_SIGNER": true, "GIT_PUSH_CERT_KEY": true, "GIT_PUSH_CERT_NONCE_SLOP": true,
	"GL_USER": true, "GL_REPO": true, "GL_TID": true,
	"GL_ID": true, "GL_USERNAME": true, "GL_REPOSITORY": true, "GL_PROJECT_PATH": true, "GL_PROTOCOL": true,
	"REMOTE_USER": true, "AUTH_TYPE": true, "REMOTE_IDENT": true,
	receive.EnvSSHUserAuth: true,
	"GIT_COMMITTER_NAME":   true, "GIT_COMMITTER_EMAIL": true,
}

// IsPusherVar reports whether the environment variable name says who
// pushed: one of pusherEnv, or Gitea's and Forgejo's GITEA_PUSHER_*.
func IsPusherVar(name string) bool {
	return pusherEnv[name] || strings.HasPrefix(name, "GITEA_PUSHER_")
}

// WithoutPusher returns environ without the variables that say who pushed.
// Who pushed a push is no one's identity for what its after-push chain
// starts (docs/serving.md): a wake rule's own push into this repository
// would otherwise carry this push's certificate, token member or host user
// into its hook.
func WithoutPusher(environ []string) []string {
	out := make([]string, 0, len(environ))
	for _, kv := range environ {
		name, _, _ := strings.Cut(kv, "=")
		if !IsPusherVar(name) {
			out = append(out, kv)
		}
	}
	return out
}

// HostPusher is what the push's environment says of the pusher, for the
// alarm: the first of the host identity variables that is set.
func HostPusher(environ []string) string {
	env := envMap(environ)
	for _, k := range []string{"GL_USER", "REMOTE_USER", "GITEA_PUSHER_NAME", "GL_USERNAME", "GITKIT_KEY"} {
		if v := env[k]; v != "" {
			return k + "=" + v
		}
	}
	if v := env["SSH_CONNECTION"]; v != "" {
		return "ssh from " + strings.Fields(v)[0]
	}
	return ""
}
