package main

import (
	"os/exec"
	"strings"
	"testing"
)

// TestLeanDependencies keeps the hook binary lean: each of these packages
// once cost the pre-receive hook a millisecond or more of start-up on every
// push (x/crypto/ssh's ciphers and agent; net and cgo, which made the
// binary start through the dynamic loader; the CLI; go-git's storage).
func TestLeanDependencies(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Skipf("go list: %v", err)
	}
	deps := map[string]bool{}
	for _, p := range strings.Fields(string(out)) {
		deps[p] = true
	}
	if !deps["github.com/gitplus/gitplus/receive"] {
		t.Fatalf("go list -deps . did not list the receive package:\n%s", out)
	}
	for _, p := range []string{
		"golang.org/x/crypto/ssh", "golang.org/x/crypto/ssh/agent", "github.com/hiddeco/sshsig",
		"net", "runtime/cgo", "net/http",
		"github.com/urfave/cli/v2", "github.com/sosedoff/gitkit", "github.com/google/uuid",
		"github.com/go-git/go-git/v5/storage/filesystem", "github.com/go-git/go-git/v5/config",
	} {
		if deps[p] {
			t.Errorf("git+hook links %s; keep it out of the packages pre-receive imports (receive, policy, hubrefs, mergetree)", p)
		}
	}
}
