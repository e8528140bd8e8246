package receive

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gitplus/gitplus/fixtures"
	"github.com/gitplus/gitplus/hubrefs"
	"github.com/gitplus/gitplus/hubrefs/sshsign"
	"github.com/gitplus/gitplus/receive/gitio"
)

// TestReadHostIdentity: gitplus.pusher's sources, in order, the first the
// environment carries; gitplus.pusherMap; the ExposeAuthInfo file; values
// that cannot be meant refuse [pusher-config].
func TestReadHostIdentity(t *testing.T) {
	key := sshsign.NewSigner(fixtures.NewKey(t, t.TempDir(), "alice").Signer).PublicKey()
	auth := filepath.Join(t.TempDir(), "auth")
	os.WriteFile(auth, []byte("password\npublickey "+hubrefs.AuthorizedKey(key)+"\n"), 0o600)
	noKey := filepath.Join(t.TempDir(), "auth")
	os.WriteFile(noKey, []byte("password\n"), 0o600)
	cfg := func(s string) gitio.Config {
		c, err := gitio.ParseConfig([]byte(s))
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	for _, c := range []struct {
		name, config string
		env          map[string]string
		user, member string
		keys         int
		note         string
		code         string
	}{
		{name: "none configured", config: "[core]\n\tbare = true\n", env: map[string]string{"GL_USER": "alice"}},
		{name: "GL_USER", config: "[gitplus]\n\tpusher = env:GL_USER\n", env: map[string]string{"GL_USER": "alice"}, user: "alice", member: "alice"},
		{name: "Gitea and Forgejo", config: "[gitplus]\n\tpusher = env:GITEA_PUSHER_NAME\n", env: map[string]string{"GITEA_PUSHER_NAME": "alice", "GL_USER": "mallory"}, user: "alice", member: "alice"},
		{name: "GitLab", config: "[gitplus]\n\tpusher = env:GL_USERNAME\n", env: map[string]string{"GL_USERNAME": "alice", "GL_ID": "user-7"}, user: "alice", member: "alice"},
		{name: "a variable not named is ignored", config: "[gitplus]\n\tpusher = env:GL_USER\n", env: map[string]string{"REMOTE_USER": "alice"}, note: "GL_USER is not set"},
		{name: "mapped", config: "[gitplus]\n\tpusher = env:REMOTE_USER\n\tpusherMap = alice@example.com alice\n\tpusherMap = bob@example.com bob\n",
			env: map[string]string{"REMOTE_USER": "alice@example.com"}, user: "alice@example.com", member: "alice"},
		{name: "first source present", config: "[gitplus]\n\tpusher = ssh-auth-info\n\tpusher = env:REMOTE_USER\n",
			env: map[string]string{"REMOTE_USER": "carol"}, user: "carol", member: "carol"},
		{name: "ssh-auth-info", config: "[gitplus]\n\tpusher = ssh-auth-info\n", env: map[string]string{"SSH_USER_AUTH": auth, "GL_USER": "mallory"}, keys: 1},
		{name: "ssh-auth-info without a key", config: "[gitplus]\n\tpusher = ssh-auth-info\n", env: map[string]string{"SSH_USER_AUTH": noKey}, note: "names no public key"},
		{name: "ssh-auth-info unset", config: "[gitplus]\n\tpusher = ssh-auth-info\n", note: "ExposeAuthInfo"},
		{name: "unknown source", config: "[gitplus]\n\tpusher = env:USER\n", env: map[string]string{"USER": "root"}, code: CodePusherConfig},
		{name: "bad map", config: "[gitplus]\n\tpusher = env:GL_USER\n\tpusherMap = alice\n", env: map[string]string{"GL_USER": "alice"}, code: CodePusherConfig},
	} {
		t.Run(c.name, func(t *testing.T) {
			h, err := readHostIdentity(cfg(c.config), c.env)
			if c.code != "" {
				var r *pushRefusal
				if !errors.As(err, &r) || r.code != c.code {
					t.Fatalf("err %v, want [%s]", err, c.code)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if h.configured != strings.Contains(c.config, "pusher") {
				t.Errorf("configured = %v", h.configured)
			}
			switch {
			case c.user == "" && c.keys == 0:
				if h.pusher != nil {
					t.Fatalf("pusher %+v, want none", h.pusher)
				}
				if !strings.Contains(h.note, c.note) {
					t.Errorf("note %q, want %q in it", h.note, c.note)
				}
			case h.pusher == nil:
				t.Fatalf("no pusher (note %q)", h.note)
			case h.pusher.User != c.user || h.pusher.Member != c.member || len(h.pusher.Keys) != c.keys:
				t.Fatalf("pusher %+v", h.pusher)
			}
			if c.keys > 0 && hubrefs.Fingerprint(h.pusher.Keys[0]) != hubrefs.Fingerprint(key) {
				t.Errorf("key %s", hubrefs.Fingerprint(h.pusher.Keys[0]))
			}
		})
	}
}
