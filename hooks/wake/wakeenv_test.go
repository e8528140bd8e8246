package wake

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gitplus/gitplus/hooks/config"
)

// TestWakeEnv (wakeenv.go): a wake rule's command gets the allowlist, the
// variables its rule names, and a key only when the rule names it.
func TestWakeEnv(t *testing.T) {
	gitDir := t.TempDir()
	environ := []string{"PATH=/usr/bin", "HOME=/srv/git", "LANG=C.UTF-8", "TMPDIR=/tmp", "GIT_CONFIG_GLOBAL=/dev/null",
		"GITPLUS_KEY=/srv/keys/op", "SSH_AUTH_SOCK=/tmp/agent.1", "AWS_SECRET_ACCESS_KEY=s3cret", "GITHUB_TOKEN=ghp_x",
		"HTTPS_PROXY=http://proxy:3128", "GL_USER=alice", "GIT_DIR=.", "GIT_PUSH_OPTION_COUNT=0"}
	rule := WakeRule{Name: "q", Ref: "refs/hub/pr/*", On: []string{"*"}, Run: []string{"git+", "queue", "run"}}
	get := func(env []string, name string) (string, bool) {
		for _, kv := range env {
			if v, ok := strings.CutPrefix(kv, name+"="); ok {
				return v, true
			}
		}
		return "", false
	}
	env := wakeEnv(gitDir, rule, environ)
	for _, gone := range []string{"GITPLUS_KEY", "SSH_AUTH_SOCK", "AWS_SECRET_ACCESS_KEY", "GITHUB_TOKEN", "HTTPS_PROXY", "GL_USER", "GIT_DIR", "GIT_PUSH_OPTION_COUNT"} {
		if v, ok := get(env, gone); ok {
			t.Errorf("a rule without key or env got %s=%s", gone, v)
		}
	}
	for _, kept := range []string{"PATH=/usr/bin", "HOME=/srv/git", "LANG=C.UTF-8", "TMPDIR=/tmp", "GIT_CONFIG_GLOBAL=/dev/null", "GITPLUS_WAKE_RULE=q",
		"GIT_CONFIG_COUNT=1", "GIT_CONFIG_KEY_0=push.pushOption", "GIT_CONFIG_VALUE_0=gitplus-wake=q"} {
		if !slices.Contains(env, kept) {
			t.Errorf("the rule's command lacks %s: %q", kept, env)
		}
	}

	// "env" hands down what it names; "key": "server" without
	// gitplus.serverKey, the hook's own key and agent.
	rule.Env, rule.Key = []string{"HTTPS_PROXY", "MISSING"}, WakeKeyServer
	env = wakeEnv(gitDir, rule, environ)
	for name, want := range map[string]string{"HTTPS_PROXY": "http://proxy:3128", "GITPLUS_KEY": "/srv/keys/op", "SSH_AUTH_SOCK": "/tmp/agent.1"} {
		if v, _ := get(env, name); v != want {
			t.Errorf("%s = %q, want %q", name, v, want)
		}
	}
	if _, ok := get(env, "GITHUB_TOKEN"); ok {
		t.Error("a rule naming HTTPS_PROXY got GITHUB_TOKEN too")
	}
	// With gitplus.serverKey: that key alone.
	if err := os.WriteFile(filepath.Join(gitDir, "config"), []byte("[gitplus]\n\tserverKey = /srv/keys/server\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	env = wakeEnv(gitDir, rule, environ)
	if v, _ := get(env, "GITPLUS_KEY"); v != "/srv/keys/server" {
		t.Errorf("GITPLUS_KEY = %q, want gitplus.serverKey", v)
	}
	if _, ok := get(env, "SSH_AUTH_SOCK"); ok {
		t.Error("with gitplus.serverKey the rule still got the hook's agent")
	}
}

// TestWakeRuleKeyAndEnvChecked: wake.json refuses a "key" other than
// "server" and an "env" naming the key, the pusher or the push.
func TestWakeRuleKeyAndEnvChecked(t *testing.T) {
	for _, tc := range []struct{ field, want string }{
		{`"key":"admin"`, `the one value is "server"`},
		{`"env":["GITPLUS_KEY"]`, `"key": "server"`},
		{`"env":["SSH_AUTH_SOCK"]`, `"key": "server"`},
		{`"env":["GL_USER"]`, "says who pushed"},
		{`"env":["GIT_PUSH_CERT_SIGNER"]`, "says who pushed"},
		{`"env":["GIT_DIR"]`, "describes the push"},
		{`"env":["not a name"]`, "not an environment variable name"},
	} {
		dir := t.TempDir()
		os.MkdirAll(filepath.Join(dir, "hub"), 0o755)
		doc := `{"rules":[{"name":"q","ref":"refs/hub/pr/*","on":["*"],"run":["git+","queue","run"],` + tc.field + `}]}`
		if err := os.WriteFile(filepath.Join(dir, config.WakeFile), []byte(doc), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := LoadWake(dir); !errors.Is(err, config.ErrConfig) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want a configuration error saying %q", tc.field, err, tc.want)
		}
	}
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "hub"), 0o755)
	os.WriteFile(filepath.Join(dir, config.WakeFile), []byte(`{"rules":[{"name":"q","ref":"refs/hub/pr/*","on":["*"],"run":["git+","queue","run"],"key":"server","env":["HTTPS_PROXY"]}]}`), 0o644)
	if rules, err := LoadWake(dir); err != nil || rules[0].Key != WakeKeyServer || rules[0].Env[0] != "HTTPS_PROXY" {
		t.Errorf("a rule with key and env: %+v %v", rules, err)
	}
}
