// Package serve is `git+ serve`: the bare git+ repositories under a
// directory over git's smart HTTP (through github.com/sosedoff/gitkit) and
// SSH, with git+'s hooks, member tokens for HTTP, and the read-only web view
// (docs/serving.md, docs/cli.md "The page").
//
// Decisions (docs/serving.md has the why and the operator's side):
//   - A repository is a directory under the root holding HEAD, objects/ and
//     refs/ (found up to four levels deep; a repository's own subdirectories
//     and directories whose name starts with "." are not searched). Its URL
//     is its path under the root: http://ADDR/team/app.git and
//     ssh://git@ADDR/team/app.git for ROOT/team/app.git; as git's own
//     servers do, the ".git" may be left out (team/app), unless a served
//     team/app exists, which that path then names.
//   - Serve touches only git+ repositories, those holding refs/hub/trust:
//     it installs git+'s hooks into them (existing hooks are kept and
//     chained) and serves them; every other repository is listed as skipped
//     at start and answered 404, by smart HTTP and the page alike (the page
//     lists only ServedRepos), unless Config.Adopt names a key that makes
//     it a git+ repository (git+ init with that key as admin). gitkit's own
//     hook helpers are not used (AutoHooks would delete existing hooks;
//     AutoCreate false: pushing never creates a repository). A path with a
//     ".." segment is refused (gitkit joins it unchecked).
//   - HTTP (http.go): reads are anonymous unless Private. A write needs an
//     identified pusher: HTTP basic authentication with the member's name
//     and a token (token.go), or a signed push (the request body starts
//     with a push certificate, which the hook verifies). Anything else is
//     answered 401 with a message saying how to authenticate. Credentials
//     that are sent are always checked, reads included. Private tells a
//     client not authenticated for a repository nothing, not whether it
//     exists: a path that is no served repository gets the 401 an existing
//     one would (and over SSH the same message, ssh.go).
//   - SSH: ssh.go.
//   - Every git process serve starts for a push carries GITPLUS_SERVED=1
//     and runs in its own process group. receive-pack runs post-receive
//     before it exits, so the chain completes; wake rules run in their own
//     session (setsid) and survive. The server's own group is never
//     signalled.
//   - The refusals of pre-receive reach the client on git's sideband, as
//     "remote: git+: refused <ref>: [<code>] <reason>".
//   - Run prints "listening on http://ADDR/" first (the real port when the
//     address asks for port 0), then, with SSH, "listening on ssh://ADDR/".
//     When its context ends it shuts down cleanly: no new requests, running
//     ones get 30 s.
package serve

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/sosedoff/gitkit"

	"github.com/gitplus/gitplus/hooks/delivery"
	"github.com/gitplus/gitplus/hooks/install"
	"github.com/gitplus/gitplus/hooks/wake"
	"github.com/gitplus/gitplus/hooks/webview"
	"github.com/gitplus/gitplus/hubrefs"
	"github.com/gitplus/gitplus/hubrefs/trust"
	"github.com/gitplus/gitplus/receive"
	"github.com/gitplus/gitplus/receive/gitio"
	"github.com/gitplus/gitplus/receive/repo"
)

// Sentinel errors: a path that names no git+ repository under the root,
// and one that tries to leave it.
var (
	ErrNoRepo = errors.New("no git+ repository there")
	ErrEscape = errors.New("the path leaves the served root")
)

// IsBareRepo reports whether dir looks like a bare git directory.
func IsBareRepo(dir string) bool {
	for _, p := range []string{"HEAD", "objects", "refs"} {
		if _, err := os.Stat(filepath.Join(dir, p)); err != nil {
			return false
		}
	}
	return true
}

// HasTrust reports whether the git directory dir holds refs/hub/trust,
// loose or packed. A trust ref that exists but cannot be read counts as
// held: the repository stays served and the read that follows (the page,
// the hook, TrustOf) reports why, instead of the repository vanishing
// from the server as if it were not git+'s.
func HasTrust(dir string) bool {
	id, err := gitio.ReadRef(dir, hubrefs.TrustRef)
	if errors.Is(err, plumbing.ErrReferenceNotFound) {
		return false
	}
	return err != nil || !id.IsZero()
}

// FindRepos lists the bare repositories under root, up to four levels deep.
func FindRepos(root string) ([]string, error) {
	var repos []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p == root {
				return err
			}
			return nil
		}
		if !d.IsDir() {
			return nil
		}
		if p != root && strings.HasPrefix(d.Name(), ".") {
			return filepath.SkipDir // a work tree's .git, editor state, the host key
		}
		if IsBareRepo(p) {
			repos = append(repos, p)
			return filepath.SkipDir
		}
		if rel, _ := filepath.Rel(root, p); rel != "." && strings.Count(rel, string(filepath.Separator)) >= 3 {
			return filepath.SkipDir
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("listing the repositories under %s: %w", root, err)
	}
	return repos, nil
}

// TrustOf folds the trust log of the git+ repository gitDir, as every
// git+ verb reads it (receive/repo), through its fold cache
// (docs/foldcache.md).
func TrustOf(gitDir string) (*trust.State, error) {
	r, err := repo.OpenLocal(gitDir)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	return r.Trust()
}

// Server is what the HTTP and SSH front ends share: the root, the git+
// binary the hooks run, and the repositories whose hooks it installed.
type Server struct {
	Root    string    // absolute directory holding the repositories
	Binary  string    // the git+ binary the installed hooks run
	Private bool      // HTTP reads need a member token too
	Log     io.Writer // "git+ serve: ..." lines about failed requests (nil: standard error)
	// CheckRate bounds each client's requests to the check endpoints
	// (ratelimit.go; zero: DefaultCheckRate). Set it before serving.
	CheckRate Rate

	web       http.Handler // webview.Root(the server): browser pages (docs/cli.md)
	gitkit    http.Handler // git's smart HTTP reads
	mu        sync.Mutex
	installed map[string]bool
	keys      map[string]memberKeys // per repository: KeyEvents at a trust tip (keyevent.go)
	metrics   metricsState          // /metrics (metrics.go)

	checkLimit *limiter // the check endpoints' rate (ratelimit.go)
}

// New returns a server for the repositories under root (absolute) that
// installs hooks running binary. It touches no repository until asked.
func New(root, binary string, private bool) *Server {
	s := &Server{Root: root, Binary: binary, Private: private, installed: map[string]bool{},
		gitkit: gitkit.New(gitkit.Config{Dir: root, AutoCreate: false, AutoHooks: false})}
	s.web = webview.Root(s)
	return s
}

func (s *Server) logf(format string, a ...any) {
	w := s.Log
	if w == nil {
		w = os.Stderr
	}
	fmt.Fprintf(w, "git+ serve: "+format+"\n", a...)
}

// Repo resolves a repository path as a client names it ("team/app.git",
// "/team/app.git", or "team/app" for team/app.git when no team/app is
// served) to its git directory, with git+'s hooks installed. A
// path that leaves the root is ErrEscape, one that is no git+ repository
// ErrNoRepo.
func (s *Server) Repo(rel string) (string, error) {
	rel = strings.Trim(rel, "/")
	for _, seg := range strings.Split(rel, "/") {
		if seg == ".." {
			return "", fmt.Errorf("%q: %w", rel, ErrEscape)
		}
	}
	dir := filepath.Join(s.Root, filepath.FromSlash(rel))
	served := func(d string) bool { return IsBareRepo(d) && HasTrust(d) }
	if rel != "" && !strings.HasSuffix(rel, ".git") && !served(dir) && served(dir+".git") {
		dir += ".git" // "team/app" names team/app.git, as git's own servers take it
	}
	if rel == "" || strings.Contains("/"+rel, "/.") || !served(dir) {
		return "", fmt.Errorf("%q: %w", rel, ErrNoRepo)
	}
	if err := s.Install(dir); err != nil {
		return "", err
	}
	return dir, nil
}

// ServedRepos lists the URL paths ("team/app.git") of the repositories the
// server serves: those FindRepos finds that hold refs/hub/trust. The web
// view lists these and no other (webview.Served).
func (s *Server) ServedRepos() []string {
	repos, err := FindRepos(s.Root)
	if err != nil {
		s.logf("%v", err)
	}
	var rels []string
	for _, d := range repos {
		if !HasTrust(d) {
			continue
		}
		rel, err := filepath.Rel(s.Root, d)
		if err != nil {
			continue
		}
		rels = append(rels, filepath.ToSlash(rel))
	}
	return rels
}

// ServedRepo is Repo for the web view (webview.Served): the git directory
// of the served repository at rel, or false for anything else.
func (s *Server) ServedRepo(rel string) (string, bool) {
	dir, err := s.Repo(rel)
	if err != nil && !errors.Is(err, ErrNoRepo) && !errors.Is(err, ErrEscape) {
		s.logf("%v", err)
	}
	return dir, err == nil
}

// Install installs git+'s hooks into the git directory dir, once per server.
func (s *Server) Install(dir string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.installed[dir] {
		return nil
	}
	if err := install.Install(dir, s.Binary); err != nil {
		return fmt.Errorf("installing the git+ hooks in %s: %w", dir, err)
	}
	if err := install.MarkServed(dir); err != nil { // hook check: serve identifies pushers
		return err
	}
	s.installed[dir] = true
	return nil
}

// Prepare finds the repositories under the root, adopts those without a
// trust log when adopt names a key file (running `git+ --key ADOPT init`),
// installs the hooks into every git+ repository, and returns how many it
// serves. It reports what it adopted and skipped on log.
func (s *Server) Prepare(adopt string, log io.Writer) (int, error) {
	repos, err := FindRepos(s.Root)
	if err != nil {
		return 0, err
	}
	served := 0
	for _, d := range repos {
		if !HasTrust(d) && adopt != "" {
			cmd := exec.Command(s.Binary, "--key", adopt, "init", d)
			if out, err := cmd.CombinedOutput(); err != nil {
				return 0, fmt.Errorf("adopting %s (git+ init with %s): %v: %s", d, adopt, err, strings.TrimSpace(string(out)))
			}
			fmt.Fprintf(log, "git+ serve: adopted %s (git+ init, admin key %s)\n", d, adopt)
		}
		if !HasTrust(d) {
			fmt.Fprintf(log, "git+ serve: skipped %s: it has no %s (run git+ init there, or start with --adopt KEYFILE)\n", d, hubrefs.TrustRef)
			continue
		}
		if err := s.Install(d); err != nil {
			return 0, err
		}
		// What a push left undelivered when a server before this one was
		// killed mid-push goes out now (docs/delivery.md).
		if err := delivery.ResumeDeliveries(d, s.Binary, os.Environ()); err != nil {
			fmt.Fprintf(log, "git+ serve: %s: %v\n", d, err)
		}
		served++
	}
	return served, nil
}

// gitEnv is the environment of a git process serve starts for a client.
func gitEnv(extra ...string) []string {
	env := make([]string, 0, len(os.Environ())+len(extra)+1)
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		switch name {
		case receive.EnvServed, receive.EnvSSHKey, receive.EnvTokenKey:
			continue // only serve says who pushes
		case gitio.EnvPushOptions, wake.WakeEnv:
			continue // git+'s own push options never come from a client (docs/serving.md)
		}
		env = append(env, kv)
	}
	env = append(env, receive.EnvServed+"=1")
	if os.Getenv("GIT_CONFIG_COUNT") == "" {
		// receive-pack checks a push certificate's signature itself and,
		// for an SSH signature without gpg.ssh.allowedSignersFile, prints
		// an error to the client; the hook is what verifies it, against
		// the members (docs/serving.md "Signed pushes").
		env = append(env, "GIT_CONFIG_COUNT=1", "GIT_CONFIG_KEY_0=gpg.ssh.allowedSignersFile", "GIT_CONFIG_VALUE_0=/dev/null")
	}
	return append(env, extra...)
}

// Config is one `git+ serve` run.
type Config struct {
	Root    string    // directory holding the bare repositories
	Listen  string    // HTTP address (port 0: any free port)
	SSH     string    // also serve SSH on this address ("": no SSH)
	HostKey string    // SSH host key file ("": ROOT/.gitplus/ssh_host_ed25519_key)
	Private bool      // HTTP reads need a member token too
	Adopt   string    // SSH private key file: git+ init every repository without refs/hub/trust
	Binary  string    // the git+ binary the hooks run (wake.Executable())
	Stdout  io.Writer // the "listening on" lines
	Stderr  io.Writer // what serve reports: adopted, skipped, failed requests

	// CheckRate bounds each client's requests to the check endpoints
	// (zero: DefaultCheckRate, 120 a minute).
	CheckRate Rate
}

// Run serves cfg until ctx ends, then shuts down (running requests get
// 30 s). It returns an error when the server cannot start or fails.
func Run(ctx context.Context, cfg Config) error {
	root, err := filepath.Abs(cfg.Root)
	if err != nil {
		return fmt.Errorf("--root %s: %w", cfg.Root, err)
	}
	if fi, err := os.Stat(root); err != nil || !fi.IsDir() {
		return fmt.Errorf("--root %s is not a directory: create it and make git+ repositories in it (git+ init %s/NAME.git)", root, root)
	}
	s := New(root, cfg.Binary, cfg.Private)
	s.Log = cfg.Stderr
	s.CheckRate = cfg.CheckRate
	if _, err := s.Prepare(cfg.Adopt, cfg.Stderr); err != nil {
		return err
	}
	ln, err := net.Listen("tcp", cfg.Listen)
	if err != nil {
		return fmt.Errorf("listening on %s: %w (pick a free address with --listen)", cfg.Listen, err)
	}
	var sshd *SSH
	if cfg.SSH != "" {
		keyPath := cfg.HostKey
		if keyPath == "" {
			keyPath = filepath.Join(root, ".gitplus", "ssh_host_ed25519_key")
		}
		if sshd, err = s.ListenSSH(keyPath, cfg.SSH); err != nil {
			ln.Close()
			return err
		}
		fmt.Fprintf(cfg.Stderr, "git+ serve: SSH host key %s (%s.pub)\n", sshd.Fingerprint, keyPath)
	}
	var sshAddr net.Addr
	if sshd != nil {
		sshAddr = sshd.Addr()
	}
	s.announce(cfg.Stderr, ln.Addr(), sshAddr) // before "listening on": a reader of that line finds the log written
	fmt.Fprintf(cfg.Stdout, "listening on http://%s/\n", ln.Addr())
	if sshd != nil {
		fmt.Fprintf(cfg.Stdout, "listening on ssh://%s/\n", sshd.Addr())
	}

	srv := &http.Server{Handler: s, ReadHeaderTimeout: 30 * time.Second}
	errc := make(chan error, 2)
	go func() { errc <- srv.Serve(ln) }()
	if sshd != nil {
		go func() { errc <- sshd.Serve() }()
	}
	select {
	case err := <-errc:
		return fmt.Errorf("serving on %s: %w", ln.Addr(), err)
	case <-ctx.Done():
	}
	fmt.Fprintf(cfg.Stderr, "git+ serve: shutting down\n")
	sctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if sshd != nil {
		sshd.Shutdown(sctx)
	}
	if err := srv.Shutdown(sctx); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("shutting down the server on %s: %w", ln.Addr(), err)
	}
	return nil
}
