package main

// End-to-end tests of git+ on the hosts teams already run (docs/operating.md
// "Installing on gitolite", "Ownership and the hook user"): the host's own
// refusal reaching a verb's error, install refusing what would break the
// host, `git+ hook check`, and server-side verbs under gitolite.

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestE2EHostRefusalReachesVerb: a hook git+ chains refuses the push in
// the host's own words (as gitolite's update hook or a site's pre-receive
// does); the git+ verb's error carries those words, not only "hook
// declined".
func TestE2EHostRefusalReachesVerb(t *testing.T) {
	w := newE2E(t, nil, "bob")
	chained := filepath.Join(w.origin, "hooks", "pre-receive.chained")
	script := "#!/bin/sh\ncat >/dev/null\necho 'FATAL: W refs/hub/trust origin admin DENIED by fallthru' >&2\necho '(or you mis-spelled the reponame)' >&2\nexit 1\n"
	if err := os.WriteFile(chained, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	_, errs, code := w.gp("admin", t.TempDir(), "", "--repo", w.origin, "member", "add", "bob", "--key", w.keys["bob"].Path+".pub", "--cap", "hub.pr")
	if code == 0 {
		t.Fatalf("member add was accepted through a refusing host hook:\n%s", errs)
	}
	for _, want := range []string{"FATAL: W refs/hub/trust origin admin DENIED by fallthru", "(or you mis-spelled the reponame)"} {
		if !strings.Contains(errs, want) {
			t.Errorf("the verb's error does not relay the host's line %q:\n%s", want, errs)
		}
	}
}
