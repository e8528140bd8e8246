package serve

// What serve says at start (docs/serving.md "Starting"): each repository it
// serves with the URLs to clone it by, and a warning for each repository
// whose wake rules cannot run as configured.
//
// Decisions:
//   - One line per served repository on the log: its path under the root,
//     then its HTTP URL and, with SSH, its ssh:// URL (user git). An
//     address listening on every interface is named by the host's name.
//   - A repository with hub/wake.json is checked the way its rules will
//     run: a rule with "key": "server" signs with gitplus.serverKey (a
//     readable file) or else with the key serve's own environment hands
//     down (GITPLUS_KEY, or ssh-agent); with none, every such rule would
//     fail into gitplus/log/wake-*.log while the page waits. A rule that
//     runs git+ without "key" gets no key at all (hooks/wake/wakeenv.go): a
//     rule written before rules had to name it is named. A rule whose first
//     word is "git+" runs the binary the hooks run; one that runs git+
//     from a shell (sh -c "git+ ...") needs it on serve's PATH. And
//     wake.json must load. Each gap is one warning line naming the fix;
//     serve starts anyway.

import (
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/gitplus/gitplus/hooks/config"
	"github.com/gitplus/gitplus/hooks/install"
	"github.com/gitplus/gitplus/hooks/wake"
)

// CloneURLs returns the URLs rel ("team/app.git") is cloned by from a
// server listening for HTTP on httpAddr and, when sshAddr is not nil, SSH.
func CloneURLs(rel string, httpAddr, sshAddr net.Addr) []string {
	urls := []string{"http://" + hostPort(httpAddr) + "/" + rel}
	if sshAddr != nil {
		urls = append(urls, "ssh://git@"+hostPort(sshAddr)+"/"+rel)
	}
	return urls
}

// hostPort names addr as a client would dial it: an unspecified IP
// (listening everywhere) by the host's name.
func hostPort(addr net.Addr) string {
	host, port, err := net.SplitHostPort(addr.String())
	if err != nil {
		return addr.String()
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsUnspecified() {
		if h, err := os.Hostname(); err == nil && h != "" {
			host = h
		}
	}
	return net.JoinHostPort(host, port)
}

// announce writes the served repositories with their clone URLs, and the
// wake warnings (wakeWarnings), to log.
func (s *Server) announce(log io.Writer, httpAddr, sshAddr net.Addr) {
	rels := s.ServedRepos()
	noun := "repositories"
	if len(rels) == 1 {
		noun = "repository"
	}
	fmt.Fprintf(log, "git+ serve: %d git+ %s under %s\n", len(rels), noun, s.Root)
	for _, rel := range rels {
		fmt.Fprintf(log, "git+ serve:   %s  %s\n", rel, strings.Join(CloneURLs(rel, httpAddr, sshAddr), "  "))
	}
	for _, rel := range rels {
		for _, w := range wakeWarnings(filepath.Join(s.Root, filepath.FromSlash(rel)), os.Getenv) {
			fmt.Fprintf(log, "git+ serve: warning: %s: %s\n", rel, w)
		}
	}
}

// wakeWarnings lists why the wake rules of the repository at gitDir would
// not run as configured (none when it has no hub/wake.json). getenv is
// serve's environment, which the rules' commands inherit.
func wakeWarnings(gitDir string, getenv func(string) string) []string {
	file := filepath.Join(gitDir, config.WakeFile)
	if _, err := os.Stat(file); err != nil {
		return nil
	}
	var out []string
	rules, err := wake.LoadWake(gitDir)
	if err != nil {
		return append(out, fmt.Sprintf("%v: no wake rule runs until it is fixed", err))
	}
	if len(rules) == 0 {
		return nil
	}
	keyed := false
	for _, r := range rules {
		if r.Key == wake.WakeKeyServer {
			keyed = true
			continue
		}
		if key, runs := install.WakeRuleKey(r.Run); runs && key != "" {
			continue // it names its own key (--key)
		}
		for _, a := range r.Run {
			if filepath.Base(a) == "git+" || strings.Contains(a, "git+ ") {
				out = append(out, fmt.Sprintf("wake rule %s runs git+ without \"key\": \"server\" in %s, so it has no signing key (a rule gets the server's key only by naming it; docs/ci.md): add \"key\": \"server\" if its command signs (queue run, check run)", r.ID(), config.WakeFile))
				break
			}
		}
	}
	switch key := wake.ServerKey(gitDir); {
	case !keyed:
	case key != "":
		if f, err := os.Open(key); err != nil {
			out = append(out, fmt.Sprintf("%s names %s, which cannot be read (%v): its wake rules cannot sign; make it readable by the user serve runs as", wake.ServerKeyConfig, key, err))
		} else {
			f.Close()
		}
	case getenv(wake.EnvKey) == "" && getenv("SSH_AUTH_SOCK") == "":
		out = append(out, fmt.Sprintf("%s exists but no signing key is available to its wake rules: set one with `git -C %s config %s KEYFILE` (a member holding what the rules' commands need, hub.queue or hub.check), or start serve with %s set; until then every rule fails into gitplus/log/wake-*.log",
			config.WakeFile, gitDir, wake.ServerKeyConfig, wake.EnvKey))
	}
	// A rule's first word "git+" is the binary the hooks run; git+ named
	// anywhere else (sh -c "git+ ...") is found on PATH.
	viaPath := false
	for _, r := range rules {
		for _, a := range r.Run[min(1, len(r.Run)):] {
			viaPath = viaPath || strings.Contains(a, "git+ ")
		}
	}
	if _, err := exec.LookPath("git+"); err != nil && viaPath {
		out = append(out, fmt.Sprintf("a rule in %s runs git+ from a shell, but git+ is not on serve's PATH: install it (go install ./cmd/...) or add its directory to PATH", config.WakeFile))
	}
	return out
}
