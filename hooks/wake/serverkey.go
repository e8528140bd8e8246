package wake

// The server's own identity (docs/serving.md "The server's own pushes").
//
// Decisions:
//   - gitplus.serverKey in the repository's config names a private SSH key
//     file (absolute, or relative to the git directory). A wake rule that
//     says "key": "server" runs with GITPLUS_KEY set to it (wakeenv.go), so
//     `git+ queue run` and `git+ check run` sign their events and pushes as
//     the server; mirror pushes are signed
//     with it (git push --signed=if-asked, git+ answering `-Y sign`), so a
//     mirror that runs git+'s hooks with the replicated rules takes them.
//   - The key is the operator's: it must belong to a member holding what
//     the server's pushes need (hub.queue, hub.check, and source.push for a
//     mirror's branches).
//   - Unset: a rule with "key": "server" gets the hook's own GITPLUS_KEY
//     and SSH_AUTH_SOCK, and mirror pushes are unsigned.

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/gitplus/gitplus/receive/gitio"
)

// ServerKeyConfig is the config key naming the server's private key file.
const ServerKeyConfig = "gitplus.serverkey"

// EnvKey is the environment variable git+ verbs read their signing key
// from.
const EnvKey = "GITPLUS_KEY"

// ServerKey returns the absolute path gitplus.serverKey names in the
// repository at gitDir, or "" when it is unset (or the config unreadable).
func ServerKey(gitDir string) string {
	cfg, err := gitio.ReadConfig(filepath.Join(gitDir, "config"))
	if err != nil {
		return ""
	}
	v, ok := cfg.Get(ServerKeyConfig)
	if v = strings.TrimSpace(v); !ok || v == "" {
		return ""
	}
	if !filepath.IsAbs(v) {
		v = filepath.Join(gitDir, v)
	}
	return v
}

// ServerSigning returns git's global options that sign a push with the
// server's key, and the push flag, or nil when no key is configured.
func ServerSigning(gitDir string) (global, push []string) {
	key := ServerKey(gitDir)
	if key == "" {
		return nil, nil
	}
	global = []string{"-c", "gpg.format=ssh", "-c", "user.signingKey=" + key}
	if bin, err := Executable(); err == nil && filepath.Base(bin) == "git+" {
		global = append(global, "-c", "gpg.ssh.program="+bin) // git+ answers -Y sign
	}
	return global, []string{"--signed=if-asked"}
}

// Executable returns the absolute, symlink-resolved path of the running
// binary: what the hook scripts exec.
func Executable() (string, error) {
	p, err := os.Executable()
	if err != nil {
		return "", fmt.Errorf("finding the git+ binary: %w", err)
	}
	if r, err := filepath.EvalSymlinks(p); err == nil {
		p = r
	}
	return filepath.Abs(p)
}
