package main

// git+ behind git http-backend (docs/operating.md "Behind git
// http-backend"): a real lighttpd on a loopback port running git's
// http-backend as a CGI program, basic authentication against a plain
// user file (mod_auth, mod_authn_file), git+'s hooks in the repository.

import (
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// httpBackendHost is a running lighttpd serving the repositories under
// root at base (http://127.0.0.1:PORT/git/).
type httpBackendHost struct {
	root, base string
}

// startHTTPBackend starts lighttpd with basic authentication for users
// (name → password) in front of git http-backend over root.
func startHTTPBackend(t *testing.T, root string, users map[string]string) *httpBackendHost {
	t.Helper()
	bins := needHost(t, "lighttpd", "lighttpd")
	execPath, err := exec.Command("git", "--exec-path").Output()
	if err != nil {
		t.Fatalf("git --exec-path: %v", err)
	}
	backend := filepath.Join(strings.TrimSpace(string(execPath)), "git-http-backend")
	if _, err := os.Stat(backend); err != nil {
		t.Skipf("git http-backend (%s): not installed", backend)
	}
	dir := t.TempDir()
	port := freePort(t)
	userfile := filepath.Join(dir, "users")
	var lines string
	for u, p := range users {
		lines += u + ":" + p + "\n"
	}
	os.WriteFile(userfile, []byte(lines), 0o600)
	os.MkdirAll(filepath.Join(dir, "www"), 0o755)
	conf := filepath.Join(dir, "lighttpd.conf")
	os.WriteFile(conf, []byte(fmt.Sprintf(`server.modules = ("mod_alias", "mod_setenv", "mod_auth", "mod_authn_file", "mod_cgi")
server.bind = "127.0.0.1"
server.port = %d
server.document-root = %q
server.errorlog = %q
auth.backend = "plain"
auth.backend.plain.userfile = %q
alias.url = ("/git" => %q)
$HTTP["url"] =~ "^/git" {
  cgi.assign = ("" => "")
  setenv.add-environment = ("GIT_PROJECT_ROOT" => %q, "GIT_HTTP_EXPORT_ALL" => "")
  auth.require = ("" => ("method" => "basic", "realm" => "git", "require" => "valid-user"))
}
`, port, filepath.Join(dir, "www"), filepath.Join(dir, "error.log"), userfile, backend, root)), 0o644)
	startDaemon(t, "lighttpd", exec.Command(bins["lighttpd"], "-D", "-f", conf), listening(port))
	return &httpBackendHost{root: root, base: fmt.Sprintf("http://127.0.0.1:%d/git", port)}
}

// TestHostHTTPBackend: a member's plain git push through http-backend is
// judged as the user the web server authenticated (gitplus.pusher =
// env:REMOTE_USER), mapped to a member by gitplus.pusherMap; then a pull
// request lands unattended (checkHostFlow).
func TestHostHTTPBackend(t *testing.T) {
	t.Parallel()
	needHost(t, "lighttpd", "lighttpd")
	root := t.TempDir()
	h := startHTTPBackend(t, root, map[string]string{"alice@example.com": "alicepw", "carol": "carolpw"})
	origin := filepath.Join(root, "team.git")
	w := newHostE2E(t, origin, nil, map[string][]string{"alice": {"source.push", "hub.pr", "hub.queue"}})
	w.git(origin, "config", "--add", "gitplus.pusherMap", "alice@example.com alice")
	c0 := seedProtected(t, w)
	pw := map[string]string{"alice@example.com": "alicepw", "carol": "carolpw"}
	push := func(who string, args ...string) (string, error) {
		u, err := url.Parse(h.base + "/team.git")
		if err != nil {
			t.Fatal(err)
		}
		u.User = url.UserPassword(who, pw[who])
		_, errs, err := w.gitRun(w.work, "", []string{"GIT_TERMINAL_PROMPT=0"}, append([]string{"push", "--porcelain", u.String()}, args...)...)
		return errs, err
	}
	checkHostPushes(t, w, hostCase{push: push, pusher: "env:REMOTE_USER", member: "alice@example.com", carol: "carol"}, c0)

	u, _ := url.Parse(h.base + "/team.git")
	u.User = url.UserPassword("alice@example.com", pw["alice@example.com"])
	checkHostFlow(t, w, hostFlow{url: u.String(), env: []string{"GIT_TERMINAL_PROMPT=0"}}, c0)
}
