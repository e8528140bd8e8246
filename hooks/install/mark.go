package install

import "fmt"

// InitializedKey is the git config key that marks a repository git+
// guards: `git+ init` and `git+ hook install` set it to true. A host-wide
// pre-receive hook passes a repository without it and without
// refs/hub/trust untouched, and refuses one with it whose trust log is
// missing (docs/operating.md "A hook for every repository").
const InitializedKey = "gitplus.initialized"

// markInitialized sets InitializedKey in the repository at dir.
func markInitialized(dir string) error {
	if out, err := setConfig(dir, InitializedKey, "true"); err != nil {
		return fmt.Errorf("setting %s in %s: %v: %s: %w", InitializedKey, dir, err, out, ErrInstall)
	}
	return nil
}

// MarkServed sets ServedKey in the repository at dir: git+ serve serves it
// and identifies every pusher itself (hook check then does not ask for
// gitplus.pusher, hookcheck_ops.go).
func MarkServed(dir string) error {
	if out, err := setConfig(dir, ServedKey, "true"); err != nil {
		return fmt.Errorf("setting %s in %s: %v: %s: %w", ServedKey, dir, err, out, ErrInstall)
	}
	return nil
}
