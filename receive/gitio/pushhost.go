package gitio

// The host's own words on a refused push (docs/operating.md "The host's
// words reach the user"): a push can be refused by something other than
// git+'s judgement — gitolite's update hook ("FATAL: W refs/heads/main
// repo user DENIED by fallthru"), a Perl error in a host's hook, any hook
// git+ chains. Those lines reach git push's standard error as "remote: "
// lines without git+'s "git+:" prefix; they are kept (HostLines) so that a
// git+ verb's error says why, not only that a hook declined.
//
// Decisions:
//   - Every "remote: " line that is not a "git+:" line, in order, with
//     git's padding removed; empty lines and receive-pack's own summary
//     ("error: hook declined to update <ref>", already in the ref's status)
//     are left out.
//   - Bounded: at most maxHostLines lines of at most maxHostLineLen bytes
//     each, then one line saying how many more there were, so a hook that
//     prints a whole log does not flood an error.
//   - A push by path into a repository managed by gitolite, refused because
//     gitolite's update hook takes pushes only through gitolite, gets one
//     more line naming the command that works (gitoliteHint).

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

const (
	maxHostLines   = 20
	maxHostLineLen = 400
)

// HostLines returns the receiving side's other "remote: " lines from git
// push's standard error: everything its hooks printed that is not a
// "git+:" line (HookLines), "remote: " removed, bounded.
func HostLines(stderr []byte) []string {
	var lines []string
	more := 0
	for _, line := range strings.Split(string(stderr), "\n") {
		line = strings.TrimRight(line, " \t\r")
		line = strings.TrimRight(strings.TrimSuffix(line, "\x1b[K"), " \t")
		rest, ok := strings.CutPrefix(line, "remote:")
		if !ok {
			continue
		}
		rest = strings.TrimSpace(rest)
		if rest == "" || strings.HasPrefix(rest, "git+:") || strings.HasPrefix(rest, "error: hook declined to update ") {
			continue
		}
		if len(lines) == maxHostLines {
			more++
			continue
		}
		if len(rest) > maxHostLineLen {
			rest = rest[:maxHostLineLen] + "…"
		}
		lines = append(lines, rest)
	}
	if more > 0 {
		lines = append(lines, fmt.Sprintf("(%d more lines)", more))
	}
	return lines
}

// GitoliteUpdateHook reports whether gitDir's update hook is gitolite's
// (the one gitolite links into every repository it manages: a script that
// loads Gitolite::Hooks::Update).
func GitoliteUpdateHook(gitDir string) bool {
	data, err := os.ReadFile(filepath.Join(gitDir, "hooks", "update"))
	return err == nil && strings.Contains(string(data), "Gitolite::Hooks::Update")
}

// gitoliteHint is the line added to a refusal of a push by path into a
// gitolite repository that gitolite's update hook refused for want of
// gitolite's environment; "" otherwise.
func gitoliteHint(gitDir, remote string, env []string) string {
	target := gitDir
	if remote != "." {
		if !filepath.IsAbs(remote) {
			return ""
		}
		target = remote
	}
	if !GitoliteUpdateHook(target) {
		return ""
	}
	for _, kv := range append(os.Environ(), env...) {
		if strings.HasPrefix(kv, "GL_BYPASS_ACCESS_CHECKS=") || strings.HasPrefix(kv, "GL_USER=") {
			return ""
		}
	}
	return fmt.Sprintf("%s is managed by gitolite, whose update hook takes a push by path only as gitolite's own server-side push: "+
		"run this as the gitolite user with GL_BYPASS_ACCESS_CHECKS=1 GL_LIBDIR=\"$(gitolite query-rc GL_LIBDIR)\" in the environment "+
		"(what `gitolite push` sets; docs/operating.md \"Installing on gitolite\")", target)
}
