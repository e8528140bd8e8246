package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/gitplus/gitplus/hooks/config"
	"github.com/gitplus/gitplus/hooks/delivery"
	"github.com/gitplus/gitplus/hooks/wake"
)

// TestServerIdentity (docs/serving.md "The server's own pushes"): what a
// push starts carries none of the pusher's identity — not git+ serve's,
// not a push certificate's, not a host's (GL_USER, REMOTE_USER,
// SSH_USER_AUTH, GITEA_PUSHER_*, http-backend's committer) nor any other
// variable off the wake allowlist (a token, an agent socket: docs/ci.md) —
// a wake rule naming the server's key ("key": "server") runs with
// gitplus.serverKey as GITPLUS_KEY, one that does not gets no key, and
// mirror pushes are signed with it, so a mirror running git+'s hooks with
// the replicated rules (a known pusher required) takes them.
func TestServerIdentity(t *testing.T) {
	t.Parallel()
	w := newE2E(t, map[string][]string{"server": {"source.push", "hub.queue"}})
	w.git(w.origin, "config", "gitplus.serverKey", w.keys["server"].Path)

	mirror := filepath.Join(t.TempDir(), "mirror.git")
	w.git(filepath.Dir(mirror), "clone", "-q", "--mirror", w.origin, mirror)
	w.mustGP("", mirror, "", "--repo", mirror, "hook", "install")
	writeJSONFile(t, filepath.Join(w.origin, config.RemotesFile), delivery.RemotesConfig{Remotes: []delivery.Remote{{Name: "m", URL: mirror}}})
	rule := wake.WakeRule{Name: "env", Ref: "refs/heads/*", On: []string{"*"}, Run: []string{"sh", "-c", "env"}, Key: wake.WakeKeyServer}
	nokey := wake.WakeRule{Name: "nokey", Ref: "refs/heads/*", On: []string{"*"}, Run: []string{"sh", "-c", "env"}}
	writeJSONFile(t, filepath.Join(w.origin, config.WakeFile), wake.WakeConfig{Rules: []wake.WakeRule{rule, nokey}})

	c := w.commit(nil, map[string]string{"a.txt": "a\n"}, "one")
	leaks := []string{"GL_USER=alice", "GL_ID=user-1", "GL_USERNAME=alice", "GL_REPO=team", "REMOTE_USER=alice", "AUTH_TYPE=Basic",
		"SSH_USER_AUTH=/tmp/sshd-auth-x", "GITEA_PUSHER_NAME=alice", "GITEA_PUSHER_ID=1", "GITKIT_KEY=ssh-ed25519 AAAA", "GITPLUS_TOKEN_KEY=ssh-ed25519 AAAA",
		"AWS_SECRET_ACCESS_KEY=s3cret", "GITHUB_TOKEN=ghp_x", "SSH_AUTH_SOCK=/tmp/agent.1"}
	_, errs, err := w.gitRun(w.work, "", append(leaks, "GITPLUS_KEY=/home/op/.ssh/id"), "push", w.origin, c+":refs/heads/feature")
	if err != nil {
		t.Fatalf("push: %v\n%s", err, errs)
	}

	envOf := func(r wake.WakeRule) (map[string]string, string) {
		logPath := wake.WakeLog(w.origin, r.ID())
		var env string
		if !waitFor(20*time.Second, func() bool {
			b, _ := os.ReadFile(logPath)
			env = string(b)
			return regexp.MustCompile(`(?m)^=== \S+ exit \d+$`).MatchString(env) // the run's last line
		}) {
			t.Fatalf("the wake rule %s did not finish:\n%s", r.ID(), env)
		}
		vars := map[string]string{}
		for _, l := range strings.Split(env, "\n") {
			k, v, _ := strings.Cut(l, "=")
			vars[k] = v
		}
		for _, kv := range append(leaks, "GIT_COMMITTER_NAME=", "GIT_COMMITTER_EMAIL=", "GIT_PUSH_CERT=", "GITPLUS_SERVED=") {
			k, _, _ := strings.Cut(kv, "=")
			if v, ok := vars[k]; ok {
				t.Errorf("the wake rule %s's environment has %s=%s", r.ID(), k, v)
			}
		}
		return vars, env
	}
	vars, env := envOf(rule)
	if got := vars["GITPLUS_KEY"]; got != w.keys["server"].Path {
		cfg, _ := os.ReadFile(filepath.Join(w.origin, "config"))
		t.Errorf("the wake rule's GITPLUS_KEY = %q, want gitplus.serverKey %s\n%s\nconfig:\n%s", got, w.keys["server"].Path, env, cfg)
	}
	if vars, env := envOf(nokey); vars["GITPLUS_KEY"] != "" || vars["PATH"] == "" {
		t.Errorf("a wake rule without \"key\" has GITPLUS_KEY %q (or no PATH):\n%s", vars["GITPLUS_KEY"], env)
	}

	if !waitFor(20*time.Second, func() bool { return hubAndHeads(w, w.origin) == hubAndHeads(w, mirror) }) {
		st, _, _ := w.gp("", w.origin, "", "mirror", "status")
		t.Fatalf("the mirror (git+'s hooks, a known pusher required) did not take the signed mirror push:\n%s\norigin:\n%s\nmirror:\n%s",
			st, hubAndHeads(w, w.origin), hubAndHeads(w, mirror))
	}
}
