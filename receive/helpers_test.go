package receive

import (
	"bytes"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/gitplus/gitplus/policy"
	"github.com/gitplus/gitplus/receive/gitio"
)

// gitEnv is an isolated environment for running git in tests.
func gitEnv(home string) []string {
	env := []string{}
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "GIT_") || strings.HasPrefix(kv, "HOME=") {
			continue
		}
		env = append(env, kv)
	}
	return append(env,
		"GIT_CONFIG_NOSYSTEM=1", "HOME="+home, "GIT_CONFIG_GLOBAL=/dev/null",
		"GIT_AUTHOR_NAME=T", "GIT_AUTHOR_EMAIL=t@example.invalid",
		"GIT_COMMITTER_NAME=T", "GIT_COMMITTER_EMAIL=t@example.invalid",
		"GIT_AUTHOR_DATE=1700000000 +0000", "GIT_COMMITTER_DATE=1700000000 +0000",
	)
}

// git runs git in dir and returns its stdout; a failure fails the test.
func git(t testing.TB, dir string, args ...string) string {
	t.Helper()
	return gitIn(t, dir, nil, args...)
}

func gitIn(t testing.TB, dir string, stdin []byte, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = gitEnv(dir)
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, errb.String())
	}
	return out.String()
}

// TestPushClientCodes: the push client (gitio, below policy) recognises
// the hook's lost-race refusals by the codes policy and this package print.
func TestPushClientCodes(t *testing.T) {
	if gitio.CodeRefMoved != policy.CodeRefMoved {
		t.Errorf("gitio.CodeRefMoved %q, policy.CodeRefMoved %q", gitio.CodeRefMoved, policy.CodeRefMoved)
	}
	if gitio.CodePushCertNonce != CodePushCertNonce {
		t.Errorf("gitio.CodePushCertNonce %q, CodePushCertNonce %q", gitio.CodePushCertNonce, CodePushCertNonce)
	}
}
