package main

// git+ serve: the bare repositories under a directory over git's smart HTTP
// (DESIGN.md §11), through github.com/sosedoff/gitkit, with git+'s hooks.
//
// Decisions:
//   - A repository is a directory under --root holding HEAD, objects/ and
//     refs/ (found up to four levels deep; a repository's own subdirectories
//     and directories whose name starts with "." are not searched). Its URL is its path under the root:
//     http://ADDR/team/app.git for ROOT/team/app.git.
//   - On start, and on the first request to a repository created since,
//     hooks.Install writes git+'s pre-receive and post-receive (existing
//     hooks are kept and chained). gitkit's own hook helpers are not used
//     (AutoHooks false: it would delete existing hooks; AutoCreate false:
//     pushing never creates a repository). A request for a path that is not
//     a repository under the root is answered 404 before gitkit sees it, and a
//     path with a ".." segment is refused (gitkit joins it unchecked).
//   - gitkit runs each git process in its own process group and sends that
//     group SIGTERM when the request ends. receive-pack runs post-receive
//     before it exits, so the chain completes; wake rules run in their own
//     session (setsid) and survive. The server's own group is never
//     signalled.
//   - The refusals of pre-receive reach the client on git's sideband, as
//     "remote: git+: refused <ref>: [<code>] <reason>".
//   - The first line on standard output is "listening on http://ADDR/"
//     (the real port when --listen asks for port 0). SIGINT or SIGTERM shut
//     the server down cleanly: no new requests, running ones get 30 s.
//   - No authentication: bind it to localhost or put an authenticating proxy
//     in front. Every push is judged by the hooks whoever sends it.

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/http"
	"os"
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
)

func init() {
	register(&cli.Command{
		Name:  "serve",
		Usage: "serve the bare repositories under --root over git's smart HTTP, with git+'s hooks",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "root", Usage: "directory holding the bare repositories", Required: true},
			&cli.StringFlag{Name: "listen", Value: "127.0.0.1:8080", Usage: "address to listen on (port 0: any free port)"},
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
			return filepath.SkipDir // a work tree's .git, editor state
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

var gitSuffixRE = regexp.MustCompile(`/(info/refs|git-upload-pack|git-receive-pack)$`)

// repoGate answers 404 for anything but a repository under root and makes
// sure the repository has git+'s hooks before gitkit serves it.
type repoGate struct {
	root, bin string
	next      http.Handler
	web       http.Handler // webview.Root(root): browser pages
	mu        sync.Mutex
	installed map[string]bool
}

func (g *repoGate) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p := r.URL.Path
	for _, seg := range strings.Split(p, "/") {
		if seg == ".." {
			http.Error(w, "bad path", http.StatusBadRequest)
			return
		}
	}
	m := gitSuffixRE.FindStringIndex(p)
	if m == nil {
		// Not git's smart HTTP: the read-only web view (docs/cli.md).
		g.web.ServeHTTP(w, r)
		return
	}
	rel := strings.Trim(p[:m[0]], "/")
	dir := filepath.Join(g.root, filepath.FromSlash(rel))
	if rel == "" || strings.Contains("/"+rel, "/.") || !isBareRepo(dir) {
		http.NotFound(w, r)
		return
	}
	if err := g.install(dir); err != nil {
		fmt.Fprintf(os.Stderr, "git+ serve: %v\n", err)
		http.Error(w, "repository not ready", http.StatusInternalServerError)
		return
	}
	g.next.ServeHTTP(w, r)
}

func (g *repoGate) install(dir string) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.installed[dir] {
		return nil
	}
	if err := hooks.Install(dir, g.bin); err != nil {
		return fmt.Errorf("installing the git+ hooks in %s: %w", dir, err)
	}
	g.installed[dir] = true
	return nil
}

func serveAction(c *cli.Context) error {
	if c.NArg() != 0 {
		return usageErr("usage: git+ serve --root DIR [--listen ADDR]")
	}
	root, err := filepath.Abs(c.String("root"))
	if err != nil {
		return fail(1, fmt.Errorf("--root %s: %w", c.String("root"), err))
	}
	if fi, err := os.Stat(root); err != nil || !fi.IsDir() {
		return fail(1, fmt.Errorf("--root %s is not a directory: create it and put bare repositories in it (git init --bare %s/NAME.git)", root, root))
	}
	bin, err := hooks.Executable()
	if err != nil {
		return fail(1, err)
	}
	repos, err := findRepos(root)
	if err != nil {
		return fail(1, err)
	}
	gate := &repoGate{root: root, bin: bin, installed: map[string]bool{}, web: webview.Root(root),
		next: gitkit.New(gitkit.Config{Dir: root, AutoCreate: false, AutoHooks: false})}
	for _, d := range repos {
		if err := gate.install(d); err != nil {
			return fail(1, err)
		}
	}
	ln, err := net.Listen("tcp", c.String("listen"))
	if err != nil {
		return fail(1, fmt.Errorf("listening on %s: %w (pick a free address with --listen)", c.String("listen"), err))
	}
	fmt.Fprintf(c.App.Writer, "listening on http://%s/\n", ln.Addr())
	fmt.Fprintf(c.App.ErrWriter, "git+ serve: %d repositories under %s\n", len(repos), root)

	srv := &http.Server{Handler: gate, ReadHeaderTimeout: 30 * time.Second}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return fail(1, fmt.Errorf("serving on %s: %w", ln.Addr(), err))
	case <-ctx.Done():
	}
	fmt.Fprintf(c.App.ErrWriter, "git+ serve: shutting down\n")
	sctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fail(1, fmt.Errorf("shutting down the server on %s: %w", ln.Addr(), err))
	}
	return nil
}
