package gitio

import "testing"

// TestAuthFailureLine: git's words for a push the server refused for its
// credentials are recognised; a broken connection or a hook's refusal is
// not one.
func TestAuthFailureLine(t *testing.T) {
	for _, c := range []struct {
		stderr string
		auth   bool
	}{
		{"fatal: could not read Username for 'http://127.0.0.1:1': No such device or address\nsend-pack: unexpected disconnect", true},
		{"fatal: could not read Username for 'http://h': terminal prompts disabled", true},
		{"remote: Unauthorized\nfatal: Authentication failed for 'http://h/app.git/'", true},
		{"error: RPC failed; HTTP 403 curl 22 The requested URL returned error: 403", true},
		{"git@h: Permission denied (publickey).\nfatal: Could not read from remote repository.", true},
		{"send-pack: unexpected disconnect while reading sideband packet\nfatal: the remote end hung up unexpectedly", false},
		{"remote: git+: refused refs/heads/main: [not-approved] ...\n ! [remote rejected] main -> main (pre-receive hook declined)", false},
		{"", false},
	} {
		if got := authFailureLine(c.stderr) != ""; got != c.auth {
			t.Errorf("%q: auth failure %v, want %v", c.stderr, got, c.auth)
		}
	}
}
