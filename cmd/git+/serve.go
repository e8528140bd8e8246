package main

// git+ serve: the bare repositories under a directory over git's smart HTTP
// (docs/serving.md), through github.com/sosedoff/gitkit, with git+'s hooks.
//
// Decisions (docs/serving.md has the why and the operator's side):
//   - A repository is a directory under --root holding HEAD, objects/ and
//     refs/ (found up to four levels deep; a repository's own subdirectories
//     and directories whose name starts with "." are not searched). Its URL is its path under the root:
//     http://ADDR/team/app.git and ssh://git@ADDR/team/app.git for
//     ROOT/team/app.git.
//   - Serve touches only git+ repositories, those holding refs/hub/trust:
//     it installs git+'s hooks into them (existing hooks are kept and
//     chained) and serves them; every other repository is listed as skipped
//     at start and answered 404, unless --adopt KEY makes it a git+
//     repository (git+ init with that key as admin). gitkit's own hook
//     helpers are not used (AutoHooks would delete existing hooks;
//     AutoCreate false: pushing never creates a repository). A path with a
//     ".." segment is refused (gitkit joins it unchecked).
//   - HTTP: reads are anonymous unless --private. A write needs an
//     identified pusher: HTTP basic authentication with the member's name
//     and a token (git+ member token issue), or a signed push (the request
//     body starts with a push certificate, which the hook verifies). Anything
//     else is answered 401 with a message saying how to authenticate.
//     Credentials that are sent are always checked, reads included.
//   - receive-pack over HTTP runs here, not in gitkit: gitkit merges the
//     process's standard error into the response (corrupting the protocol
//     stream) and cannot give one request's process its own environment,
//     which is how the token's member reaches the hook (GITPLUS_TOKEN_KEY).
//     Every git process serve starts for a push carries GITPLUS_SERVED=1.
//   - SSH (--ssh): see serve_ssh.go.
//   - receive-pack runs in its own process group. It runs post-receive
//     before it exits, so the chain completes; wake rules run in their own
//     session (setsid) and survive. The server's own group is never
//     signalled.
//   - The refusals of pre-receive reach the client on git's sideband, as
//     "remote: git+: refused <ref>: [<code>] <reason>".
//   - The first line on standard output is "listening on http://ADDR/"
//     (the real port when --listen asks for port 0), then, with --ssh,
//     "listening on ssh://ADDR/". SIGINT or SIGTERM shut the server down
//     cleanly: no new requests, running ones get 30 s.

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/sosedoff/gitkit"
	"github.com/urfave/cli/v2"

	"github.com/gitplus/gitplus/hooks"
	"github.com/gitplus/gitplus/hooks/webview"
	"github.com/gitplus/gitplus/hubrefs"
	"github.com/gitplus/gitplus/hubrefs/trust"
	"github.com/gitplus/gitplus/receive"
)

func init() {
	register(&cli.Command{
		Name:  "serve",
		Usage: "serve the git+ repositories under --root over git's smart HTTP (and SSH with --ssh), with git+'s hooks",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "root", Usage: "directory holding the bare repositories", Required: true},
			&cli.StringFlag{Name: "listen", Value: "127.0.0.1:8080", Usage: "HTTP address to listen on (port 0: any free port)"},
			&cli.StringFlag{Name: "ssh", Usage: "also serve over SSH on this address (port 0: any free port)"},
			&cli.StringFlag{Name: "host-key", Usage: "the SSH host key file, created if missing and reused (default ROOT/.gitplus/ssh_host_ed25519_key)"},
			&cli.BoolFlag{Name: "private", Usage: "HTTP reads need a member token too (default: anonymous reads)"},
			&cli.StringFlag{Name: "adopt", Usage: "SSH private key FILE: git+ init every repository without refs/hub/trust, with this key as admin"},
		},
		Action: serveAction,
	})
}

// isBareRepo reports whether dir looks like a bare git directory.
func isBareRepo(dir string) bool {
	for _, p := range []string{"HEAD", "objects", "refs"} {
		if _, err := os.Stat(filepath.Join(dir, p)); err != nil {
			return false
		}
	}
	return true
}

// hasTrust reports whether the git directory dir holds refs/hub/trust,
// loose or packed.
func hasTrust(dir string) bool {
	if fi, err := os.Stat(filepath.Join(dir, filepath.FromSlash(hubrefs.TrustRef))); err == nil && fi.Mode().IsRegular() {
		return true
	}
	data, err := os.ReadFile(filepath.Join(dir, "packed-refs"))
	return err == nil && bytes.Contains(data, []byte(" "+hubrefs.TrustRef+"\n"))
}

// findRepos lists the bare repositories under root, up to four levels deep.
func findRepos(root string) ([]string, error) {
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
		if isBareRepo(p) {
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

// errNoRepo, errEscape: a path that names no git+ repository under the
// root, and one that tries to leave it.
var (
	errNoRepo = errors.New("no git+ repository there")
	errEscape = errors.New("the path leaves the served root")
)

// server is what the HTTP and SSH front ends share.
type server struct {
	root, bin string
	private   bool
	web       http.Handler // webview.Root(root): browser pages (docs/cli.md)
	mu        sync.Mutex
	installed map[string]bool
}

// repo resolves a repository path as a client names it ("team/app.git",
// "/team/app.git") to its git directory, with git+'s hooks installed.
func (s *server) repo(rel string) (string, error) {
	rel = strings.Trim(rel, "/")
	for _, seg := range strings.Split(rel, "/") {
		if seg == ".." {
			return "", fmt.Errorf("%q: %w", rel, errEscape)
		}
	}
	dir := filepath.Join(s.root, filepath.FromSlash(rel))
	if rel == "" || strings.Contains("/"+rel, "/.") || !isBareRepo(dir) || !hasTrust(dir) {
		return "", fmt.Errorf("%q: %w", rel, errNoRepo)
	}
	if err := s.install(dir); err != nil {
		return "", err
	}
	return dir, nil
}

func (s *server) install(dir string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.installed[dir] {
		return nil
	}
	if err := hooks.Install(dir, s.bin); err != nil {
		return fmt.Errorf("installing the git+ hooks in %s: %w", dir, err)
	}
	s.installed[dir] = true
	return nil
}

// trustOf folds the trust log of the git+ repository dir.
func trustOf(dir string) (*trust.State, error) {
	h, err := openLocal(dir)
	if err != nil {
		return nil, err
	}
	defer h.Close()
	return h.Trust()
}

// gitEnv is the environment of a git process serve starts for a client.
func gitEnv(extra ...string) []string {
	env := make([]string, 0, len(os.Environ())+len(extra)+1)
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		switch name {
		case receive.EnvServed, receive.EnvSSHKey, receive.EnvTokenKey:
			continue // only serve says who pushes
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

var gitSuffixRE = regexp.MustCompile(`/(info/refs|git-upload-pack|git-receive-pack)$`)

// httpFront is the HTTP side: it answers 404 for anything but a git+
// repository under the root, authenticates, and hands reads to gitkit.
type httpFront struct {
	*server
	gitkit http.Handler
}

// howToAuth is the body of a 401.
const howToAuth = "git+: %s needs an identified pusher. Use HTTP basic authentication with your member name and a token " +
	"(issued on the server: git+ member token issue NAME), for example a credential helper or https://NAME:TOKEN@HOST/...; " +
	"or sign the push: git -c gpg.format=ssh -c user.signingkey=KEY.pub push --signed; or push over SSH with your member key.\n"

func (f *httpFront) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	m := gitSuffixRE.FindStringSubmatchIndex(r.URL.Path)
	if m == nil {
		// Not git's smart HTTP: the read-only web view (docs/cli.md).
		// A private server shows no page: the view has no login of its
		// own, and its pages are reads (docs/serving.md).
		if f.private {
			http.Error(w, "git+: this server is private (--private): the web view is off; read the records with git+ pr list / queue show in a clone", http.StatusNotFound)
			return
		}
		f.web.ServeHTTP(w, r)
		return
	}
	dir, err := f.repo(r.URL.Path[:m[0]])
	switch {
	case errors.Is(err, errEscape):
		http.Error(w, "bad path: "+err.Error(), http.StatusBadRequest)
		return
	case errors.Is(err, errNoRepo):
		http.NotFound(w, r)
		return
	case err != nil:
		fmt.Fprintf(os.Stderr, "git+ serve: %v\n", err)
		http.Error(w, "repository not ready", http.StatusInternalServerError)
		return
	}
	svc := r.URL.Path[m[2]:m[3]]
	if svc == "info/refs" {
		svc = r.URL.Query().Get("service")
	}
	write := svc == "git-receive-pack"
	rel := strings.TrimPrefix(r.URL.Path[:m[0]], "/")

	var who *trust.Member
	if name, token, ok := r.BasicAuth(); ok {
		st, err := trustOf(dir)
		if err != nil {
			fmt.Fprintf(os.Stderr, "git+ serve: %v\n", err)
			http.Error(w, "repository not ready", http.StatusInternalServerError)
			return
		}
		ts, err := loadTokens(dir)
		if err != nil {
			fmt.Fprintf(os.Stderr, "git+ serve: %v\n", err)
		}
		if who, ok = checkToken(ts, st, name, token); !ok {
			unauthorized(w, rel, "git+: the token for "+name+" is not valid for "+rel+" (revoked, never issued here, or the member was removed or re-keyed); ask for a new one\n")
			return
		}
	}
	if who == nil && f.private {
		unauthorized(w, rel, fmt.Sprintf("git+: %s is private: authenticate with your member name and a token (git+ member token issue NAME)\n", rel))
		return
	}
	if !write || r.Method != http.MethodPost {
		f.gitkit.ServeHTTP(w, r)
		return
	}
	f.receivePack(w, r, dir, rel, who)
}

func unauthorized(w http.ResponseWriter, rel, msg string) {
	w.Header().Set("WWW-Authenticate", fmt.Sprintf("Basic realm=%q", "git+ "+rel))
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(http.StatusUnauthorized)
	io.WriteString(w, msg)
}

// receivePack runs one stateless receive-pack request. Without a token
// member the body must be a signed push (or git's empty probe).
func (f *httpFront) receivePack(w http.ResponseWriter, r *http.Request, dir, rel string, who *trust.Member) {
	var body io.Reader = r.Body
	if r.Header.Get("Content-Encoding") == "gzip" {
		gz, err := gzip.NewReader(r.Body)
		if err != nil {
			http.Error(w, "bad gzip body", http.StatusBadRequest)
			return
		}
		defer gz.Close()
		body = gz
	}
	br := bufio.NewReaderSize(body, 64<<10)
	var extra []string
	if who != nil {
		extra = append(extra, receive.EnvTokenKey+"="+who.KeyLine)
	} else if !anonymousOK(br) {
		unauthorized(w, rel, fmt.Sprintf(howToAuth, "pushing to "+rel))
		return
	}
	cmd := exec.CommandContext(r.Context(), "git", "receive-pack", "--stateless-rpc", dir)
	cmd.Env = gitEnv(extra...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	if err := cmd.Start(); err != nil {
		fmt.Fprintf(os.Stderr, "git+ serve: starting receive-pack for %s: %v\n", dir, err)
		http.Error(w, "cannot start receive-pack", http.StatusInternalServerError)
		return
	}
	go func() {
		io.Copy(stdin, br)
		stdin.Close()
	}()
	w.Header().Set("Content-Type", "application/x-git-receive-pack-result")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	fl, _ := w.(http.Flusher)
	buf := make([]byte, 32<<10)
	for {
		n, err := stdout.Read(buf)
		if n > 0 {
			w.Write(buf[:n])
			if fl != nil {
				fl.Flush()
			}
		}
		if err != nil {
			break
		}
	}
	if err := cmd.Wait(); err != nil {
		fmt.Fprintf(os.Stderr, "git+ serve: receive-pack in %s: %v: %s\n", dir, err, strings.TrimSpace(stderr.String()))
	}
}

// anonymousOK reports whether a receive-pack body may go on without a
// token: a signed push, whose first pkt-line is "push-cert\0..." (the hook
// verifies the certificate). git's probe of a large push (a lone flush
// packet) is answered 401 like any other, so that git asks its credential
// helper before it streams a body it cannot send twice (docs/serving.md).
func anonymousOK(br *bufio.Reader) bool {
	line, err := br.Peek(4 + len("push-cert\x00"))
	return err == nil && string(line[4:]) == "push-cert\x00"
}

func serveAction(c *cli.Context) error {
	if c.NArg() != 0 {
		return usageErr("usage: git+ serve --root DIR [--listen ADDR] [--ssh ADDR] [--host-key FILE] [--private] [--adopt KEYFILE]")
	}
	root, err := filepath.Abs(c.String("root"))
	if err != nil {
		return fail(1, fmt.Errorf("--root %s: %w", c.String("root"), err))
	}
	if fi, err := os.Stat(root); err != nil || !fi.IsDir() {
		return fail(1, fmt.Errorf("--root %s is not a directory: create it and make git+ repositories in it (git+ init %s/NAME.git)", root, root))
	}
	bin, err := hooks.Executable()
	if err != nil {
		return fail(1, err)
	}
	repos, err := findRepos(root)
	if err != nil {
		return fail(1, err)
	}
	s := &server{root: root, bin: bin, private: c.Bool("private"), installed: map[string]bool{}, web: webview.Root(root)}
	served := 0
	for _, d := range repos {
		if !hasTrust(d) && c.String("adopt") != "" {
			cmd := exec.Command(bin, "--key", c.String("adopt"), "init", d)
			if out, err := cmd.CombinedOutput(); err != nil {
				return fail(1, fmt.Errorf("adopting %s (git+ init with %s): %v: %s", d, c.String("adopt"), err, strings.TrimSpace(string(out))))
			}
			fmt.Fprintf(c.App.ErrWriter, "git+ serve: adopted %s (git+ init, admin key %s)\n", d, c.String("adopt"))
		}
		if !hasTrust(d) {
			fmt.Fprintf(c.App.ErrWriter, "git+ serve: skipped %s: it has no %s (run git+ init there, or start with --adopt KEYFILE)\n", d, hubrefs.TrustRef)
			continue
		}
		if err := s.install(d); err != nil {
			return fail(1, err)
		}
		served++
	}
	ln, err := net.Listen("tcp", c.String("listen"))
	if err != nil {
		return fail(1, fmt.Errorf("listening on %s: %w (pick a free address with --listen)", c.String("listen"), err))
	}
	var sshd *sshFront
	if addr := c.String("ssh"); addr != "" {
		keyPath := c.String("host-key")
		if keyPath == "" {
			keyPath = filepath.Join(root, ".gitplus", "ssh_host_ed25519_key")
		}
		if sshd, err = newSSHFront(s, keyPath, addr); err != nil {
			ln.Close()
			return fail(1, err)
		}
		fmt.Fprintf(c.App.ErrWriter, "git+ serve: SSH host key %s (%s.pub)\n", sshd.fingerprint, keyPath)
	}
	fmt.Fprintf(c.App.Writer, "listening on http://%s/\n", ln.Addr())
	if sshd != nil {
		fmt.Fprintf(c.App.Writer, "listening on ssh://%s/\n", sshd.ln.Addr())
	}
	fmt.Fprintf(c.App.ErrWriter, "git+ serve: %d git+ repositories under %s\n", served, root)

	front := &httpFront{server: s, gitkit: gitkit.New(gitkit.Config{Dir: root, AutoCreate: false, AutoHooks: false})}
	srv := &http.Server{Handler: front, ReadHeaderTimeout: 30 * time.Second}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	errc := make(chan error, 2)
	go func() { errc <- srv.Serve(ln) }()
	if sshd != nil {
		go func() { errc <- sshd.serve() }()
	}
	select {
	case err := <-errc:
		return fail(1, fmt.Errorf("serving on %s: %w", ln.Addr(), err))
	case <-ctx.Done():
	}
	fmt.Fprintf(c.App.ErrWriter, "git+ serve: shutting down\n")
	sctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if sshd != nil {
		sshd.shutdown(sctx)
	}
	if err := srv.Shutdown(sctx); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fail(1, fmt.Errorf("shutting down the server on %s: %w", ln.Addr(), err))
	}
	return nil
}
