package gitio

import (
	"slices"
	"strings"
	"testing"
)

func envValue(env []string, key string) (string, bool) {
	v, ok := "", false
	for _, kv := range env {
		if k, val, found := strings.Cut(kv, "="); found && k == key {
			v, ok = val, true
		}
	}
	return v, ok
}

func TestPushArgs(t *testing.T) {
	t.Setenv("GIT_CONFIG_COUNT", "3")
	t.Setenv("GIT_CONFIG_KEY_0", "user.name")
	t.Setenv("GIT_CONFIG_VALUE_0", "u")
	t.Setenv("GIT_CONFIG_KEY_1", "push.pushOption")
	t.Setenv("GIT_CONFIG_VALUE_1", "gitplus-wake=r1")
	t.Setenv("GIT_CONFIG_KEY_2", "core.quotePath")
	t.Setenv("GIT_CONFIG_VALUE_2", "false")

	// Another remote: options as arguments, environment untouched.
	args, env := PushArgs("origin", []string{"a", "b"}, nil)
	if !slices.Equal(args, []string{"--push-option=a", "--push-option=b"}) || env != nil {
		t.Fatalf("origin: args %v env %v", args, env)
	}

	// ".": no arguments; the configured option moves to GITPLUS_PUSH_OPTIONS
	// and out of the git configuration, the rest of which is renumbered.
	args, env = PushArgs(".", nil, []string{"X=1"})
	if len(args) != 0 {
		t.Fatalf(".: args %v", args)
	}
	if v, _ := envValue(env, EnvPushOptions); v != "gitplus-wake=r1" {
		t.Errorf(".: %s=%q", EnvPushOptions, v)
	}
	want := map[string]string{"GIT_CONFIG_COUNT": "2", "GIT_CONFIG_KEY_0": "user.name", "GIT_CONFIG_VALUE_0": "u",
		"GIT_CONFIG_KEY_1": "core.quotePath", "GIT_CONFIG_VALUE_1": "false", "X": "1"}
	for k, w := range want {
		if v, _ := envValue(env, k); v != w {
			t.Errorf(".: %s=%q, want %q", k, v, w)
		}
	}
	if _, ok := envValue(env, "GIT_CONFIG_KEY_2"); ok {
		t.Error(".: GIT_CONFIG_KEY_2 kept after renumbering")
	}

	// Explicit options replace configured ones, as in git.
	_, env = PushArgs(".", []string{"gitplus.no-notify", "gitplus-wake=r1"}, nil)
	if v, _ := envValue(env, EnvPushOptions); v != "gitplus.no-notify\ngitplus-wake=r1" {
		t.Errorf("explicit: %s=%q", EnvPushOptions, v)
	}

	// No options at all: the variable is set empty, so a value inherited
	// from a hook's environment never reaches this push's hooks.
	t.Setenv("GIT_CONFIG_COUNT", "0")
	t.Setenv(EnvPushOptions, "stale")
	_, env = PushArgs(".", nil, nil)
	if v, ok := envValue(env, EnvPushOptions); !ok || v != "" {
		t.Errorf("none: %s=%q (set %v)", EnvPushOptions, v, ok)
	}
}
