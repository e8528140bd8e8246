package gitio

// A push the server refused for its credentials is told apart from a lost
// race and from a broken connection (push.go): git ends such a push without
// reporting any ref, which alone would read as "outcome unknown", but the
// server said no before receive-pack ran, so nothing moved and no retry can
// change it. Push reports it as ErrPushAuth, with the way out
// (docs/serving.md "git+ verbs identify themselves").

import (
	"errors"
	"strings"
)

// ErrPushAuth: the server refused the push for its credentials (HTTP 401 or
// 403, git unable to ask for a user name, SSH public key refused). Nothing
// moved. An error wrapping it wraps ErrPushFailed too, never ErrPushStale
// or ErrPushTransport.
var ErrPushAuth = errors.New("the server refused the push's credentials")

// authFailureLine returns the line of git push's standard error that says
// the server wanted other credentials, or "".
func authFailureLine(stderr string) string {
	for _, line := range strings.Split(stderr, "\n") {
		line = strings.TrimSpace(line)
		for _, m := range []string{"could not read Username", "could not read Password", "Authentication failed for",
			"The requested URL returned error: 401", "The requested URL returned error: 403",
			"terminal prompts disabled", "Permission denied (publickey"} {
			if strings.Contains(line, m) {
				return line
			}
		}
	}
	return ""
}

// authAdvice is what to do about a push refused for its credentials.
func authAdvice(signed bool) string {
	if signed {
		return "the push was signed with your git+ key, which git+ serve takes without a token, but only when it comes in one request: " +
			"a push larger than http.postBuffer (1 MiB by default) is sent in parts, asking for credentials first, so raise it " +
			"above the push's size (git config http.postBuffer 100000000 for 100 MB) and run the verb again; a server run with --private wants a token for every push: " +
			"give git a member token as the password (git+ member token issue NAME, through a credential helper), or push over SSH with a member's key"
	}
	return "identify the push: sign it with a member's key (git push --signed, gpg.format=ssh), give git a member token as the password " +
		"(git+ member token issue NAME), or push over SSH with a member's key"
}
