package wake

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestNoHostIdentityDownstream: the environments of what a push starts —
// the post-receive chain's (WithoutPusher), the delivery worker's and a
// mirror push's (ChildEnv) and a wake rule's (WakeCommand) — hold no
// variable that says who pushed, and a wake rule that names the server's
// key ("key": "server") gets gitplus.serverKey as GITPLUS_KEY in place of
// an inherited one; a rule that does not gets no key at all.
func TestNoHostIdentityDownstream(t *testing.T) {
	identity := []string{"GL_USER=alice", "GL_TID=1", "GL_REPO=team", "GL_ID=key-1", "GL_USERNAME=alice", "GL_REPOSITORY=project-1",
		"GL_PROJECT_PATH=g/p", "GL_PROTOCOL=ssh", "REMOTE_USER=alice", "AUTH_TYPE=Basic", "REMOTE_IDENT=alice", "SSH_USER_AUTH=/tmp/x",
		"GITEA_PUSHER_NAME=alice", "GITEA_PUSHER_EMAIL=a@x", "GITEA_PUSHER_ID=3", "GIT_COMMITTER_NAME=alice", "GIT_COMMITTER_EMAIL=alice@127.0.0.1",
		"GITKIT_KEY=k", "GITPLUS_TOKEN_KEY=k", "GITPLUS_SERVED=1", "GIT_PUSH_CERT=0123"}
	kept := []string{"PATH=/usr/bin", "HOME=/srv/git", "GL_LIBDIR=/usr/share/gitolite3/lib", "GL_BYPASS_ACCESS_CHECKS=1", "GITEA_CUSTOM=/etc/gitea"}
	environ := append(append([]string{}, kept...), identity...)
	check := func(what string, env []string) {
		t.Helper()
		for _, kv := range identity {
			k, _, _ := strings.Cut(kv, "=")
			for _, e := range env {
				if strings.HasPrefix(e, k+"=") {
					t.Errorf("%s keeps %s", what, e)
				}
			}
		}
		for _, kv := range kept {
			if !slices.Contains(env, kv) {
				t.Errorf("%s drops %s", what, kv)
			}
		}
	}
	check("WithoutPusher", WithoutPusher(environ))
	check("childEnv", ChildEnv(environ, nil))

	gitDir := t.TempDir()
	os.WriteFile(filepath.Join(gitDir, "config"), []byte("[gitplus]\n\tserverKey = keys/server\n"), 0o644)
	cmd := WakeCommand(gitDir, "/bin/git+", WakeRule{Name: "q", Ref: "refs/heads/*", On: []string{"*"}, Run: []string{"git+", "queue", "run"}, Key: WakeKeyServer},
		append(environ, "GITPLUS_KEY=/home/op/.ssh/id"))
	check("WakeCommand", cmd.Env)
	var key string
	for _, e := range cmd.Env {
		if v, ok := strings.CutPrefix(e, "GITPLUS_KEY="); ok {
			if key != "" {
				t.Errorf("the wake command's environment names GITPLUS_KEY twice")
			}
			key = v
		}
	}
	if want := filepath.Join(gitDir, "keys", "server"); key != want {
		t.Errorf("the wake command's GITPLUS_KEY = %q, want %q", key, want)
	}
	cmd = WakeCommand(gitDir, "/bin/git+", WakeRule{Name: "q", Ref: "refs/heads/*", On: []string{"*"}, Run: []string{"git+", "queue", "run"}},
		append(environ, "GITPLUS_KEY=/home/op/.ssh/id", "SSH_AUTH_SOCK=/tmp/agent"))
	check("WakeCommand without a key", cmd.Env)
	for _, e := range cmd.Env {
		if strings.HasPrefix(e, "GITPLUS_KEY=") || strings.HasPrefix(e, "SSH_AUTH_SOCK=") {
			t.Errorf("a wake rule without \"key\" got %s", e)
		}
	}
}
