package hooks

import (
	"strings"

	"github.com/gitplus/gitplus/receive"
)

// pusherEnv names what identifies the pusher of a push to its hooks: git+
// serve's GITPLUS_SERVED, GITKIT_KEY and GITPLUS_TOKEN_KEY, and the push
// certificate variables receive-pack sets for a signed push (and never
// clears).
var pusherEnv = map[string]bool{receive.EnvServed: true, receive.EnvSSHKey: true, receive.EnvTokenKey: true,
	"GIT_PUSH_CERT": true, "GIT_PUSH_CERT_NONCE": true, "GIT_PUSH_CERT_NONCE_STATUS": true, "GIT_PUSH_CERT_STATUS": true,
	"GIT_PUSH_CERT_SIGNER": true, "GIT_PUSH_CERT_KEY": true, "GIT_PUSH_CERT_NONCE_SLOP": true}

// WithoutPusher returns environ without the variables that say who pushed.
// Who pushed a push is no one's identity for what its after-push chain
// starts (docs/serving.md): a wake rule's own push into this repository
// would otherwise carry this push's certificate or token member into its
// hook.
func WithoutPusher(environ []string) []string {
	out := make([]string, 0, len(environ))
	for _, kv := range environ {
		name, _, _ := strings.Cut(kv, "=")
		if !pusherEnv[name] {
			out = append(out, kv)
		}
	}
	return out
}
