package checkrun

// What `git+ check run` and `git+ check worker` take from their flags
// (docs/ci.md): the sandbox of every run, and whether a run passed.

import (
	"fmt"
	"path/filepath"

	"github.com/gitplus/gitplus/hubrefs/pr"
	"github.com/gitplus/gitplus/receive/childenv"
	"github.com/gitplus/gitplus/receive/sandbox"
)

// SandboxOf is the Sandbox the verbs' flags ask for: the mode, variables
// passed by name (never GITPLUS_KEY: the key that signs a check's verdict
// never reaches the command it judges), caches ([NAME=]DIR), paths the
// command may also read (made absolute: the command runs elsewhere), the
// user it runs as and whether a lane candidate's reads are confined to its
// partition's inputs (not with --sandbox off, which confines nothing).
// Every error names its flag and is the caller's mistake.
func SandboxOf(mode string, passEnv, caches, reads []string, runAs string, confineReads bool) (Sandbox, error) {
	m, err := sandbox.ParseMode(mode)
	if err != nil {
		return Sandbox{}, fmt.Errorf("--sandbox: %v", err)
	}
	if confineReads && m == sandbox.Off {
		return Sandbox{}, fmt.Errorf("--confine-reads needs the sandbox, and --sandbox off runs the command unconfined: drop one of them")
	}
	sb := Sandbox{Mode: m, RunAs: runAs, ConfineReads: confineReads}
	for _, n := range passEnv {
		if err := childenv.ValidName(n); err != nil {
			return sb, fmt.Errorf("--pass-env: %v", err)
		}
		if n == "GITPLUS_KEY" {
			return sb, fmt.Errorf("--pass-env GITPLUS_KEY: the key that signs a check's verdict never reaches the command it judges")
		}
		sb.PassEnv = append(sb.PassEnv, n)
	}
	for _, s := range caches {
		ch, err := sandbox.ParseCache(s)
		if err != nil {
			return sb, err
		}
		sb.Caches = append(sb.Caches, ch)
	}
	for _, r := range reads {
		abs, err := filepath.Abs(r)
		if err != nil {
			return sb, fmt.Errorf("--read %s: %v", r, err)
		}
		sb.Reads = append(sb.Reads, abs)
	}
	return sb, nil
}

// Passed reports whether `git+ check run` exits 0 for r: the check
// succeeded, or it did not run (another worker's lease holds it, or a
// batch group's last step is checked instead).
func (r *Result) Passed() bool {
	return r.Skipped != "" || r.Conclusion == pr.Success
}
