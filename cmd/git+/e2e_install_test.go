package main

// Installing the hooks from several processes at once (two `git+ serve`
// starting on one root, an operator's `git+ hook install` meanwhile): every
// one succeeds and the repository ends as one install leaves it
// (docs/operating.md "Installing the hooks").

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"

	"github.com/gitplus/gitplus/fixtures"
	"github.com/gitplus/gitplus/hooks/install"
)

func TestHookInstallConcurrent(t *testing.T) {
	t.Parallel()
	bin := fixtures.Binary(t)
	env := fixtures.GitEnv(t.TempDir())
	const rounds, procs = 3, 8
	for r := 0; r < rounds; r++ {
		gitDir := filepath.Join(t.TempDir(), "r.git")
		fixtures.Git(t, filepath.Dir(gitDir), "init", "-q", "--bare", gitDir)
		// A hook of the operator's, which exactly one install must keep.
		foreign := "#!/bin/sh\n# the operator's own pre-receive\nexit 0\n"
		if err := os.WriteFile(filepath.Join(gitDir, "hooks", "pre-receive"), []byte(foreign), 0o755); err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		errs := make([]string, procs)
		for i := 0; i < procs; i++ {
			wg.Add(1)
			go func(i int) {
				defer wg.Done()
				cmd := exec.Command(bin, "hook", "install", "--repo", gitDir)
				cmd.Env = env
				if out, err := cmd.CombinedOutput(); err != nil {
					errs[i] = fmt.Sprintf("%v: %s", err, out)
				}
			}(i)
		}
		wg.Wait()
		for i, e := range errs {
			if e != "" {
				t.Errorf("round %d: install %d of %d at once failed: %s", r, i, procs, e)
			}
		}
		for key, want := range map[string]string{
			"receive.advertisePushOptions": "true", "receive.fsckObjects": "true",
			"receive.certNonceSlop": install.CertNonceSlop, "gpg.ssh.allowedSignersFile": os.DevNull,
		} {
			if got := fixtures.Git(t, gitDir, "config", "--get-all", key); got != want {
				t.Errorf("round %d: %s = %q, want %q", r, key, got, want)
			}
		}
		if seeds := fixtures.Git(t, gitDir, "config", "--get-all", "receive.certNonceSeed"); len(seeds) != 64 {
			t.Errorf("round %d: receive.certNonceSeed = %q, want one seed of 64 hex digits", r, seeds)
		}
		if ok, got, err := install.Installed(gitDir); !ok || got == "" || err != nil {
			t.Errorf("round %d: hooks installed %v (binary %q, %v)", r, ok, got, err)
		}
		if b, err := os.ReadFile(filepath.Join(gitDir, "hooks", "pre-receive"+install.ChainedSuffix)); string(b) != foreign {
			t.Errorf("round %d: the operator's hook was not kept as pre-receive%s (%v):\n%s", r, install.ChainedSuffix, err, b)
		}
		if _, err := os.Lstat(filepath.Join(gitDir, "hooks", "post-receive"+install.ChainedSuffix)); err == nil {
			t.Errorf("round %d: post-receive%s exists: an install chained git+'s own script", r, install.ChainedSuffix)
		}
		if left, _ := filepath.Glob(filepath.Join(gitDir, "hooks", ".*tmp-*")); len(left) > 0 {
			t.Errorf("round %d: temporary files left: %v", r, left)
		}
	}
}
