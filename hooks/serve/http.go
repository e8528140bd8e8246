package serve

// The HTTP side (docs/serving.md): 404 for anything but a git+ repository
// under the root, authentication, reads handed to gitkit, and receive-pack
// run here. receive-pack over HTTP does not go through gitkit: gitkit merges
// the process's standard error into the response (corrupting the protocol
// stream) and cannot give one request's process its own environment, which
// is how the token's member reaches the hook (GITPLUS_TOKEN_KEY).

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"

	"github.com/gitplus/gitplus/hubrefs/trust"
	"github.com/gitplus/gitplus/receive"
)

var gitSuffixRE = regexp.MustCompile(`/(info/refs|git-upload-pack|git-receive-pack)$`)

// howToAuth is the body of a 401.
const howToAuth = "git+: %s needs an identified pusher. Use HTTP basic authentication with your member name and a token " +
	"(issued on the server: git+ member token issue NAME), for example a credential helper or https://NAME:TOKEN@HOST/...; " +
	"or sign the push: git -c gpg.format=ssh -c user.signingkey=KEY.pub push --signed; or push over SSH with your member key.\n"

// ServeHTTP answers git's smart HTTP for the git+ repositories under the
// root, and the web view for every other path.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == metricsPath {
		s.serveMetrics(w, r) // metrics.go
		return
	}
	if s.checkAPI(w, r) { // checkapi.go
		return
	}
	m := gitSuffixRE.FindStringSubmatchIndex(r.URL.Path)
	if m == nil {
		// Not git's smart HTTP: the read-only web view (docs/cli.md).
		// A private server shows no page: the view has no login of its
		// own, and its pages are reads (docs/serving.md).
		if s.Private {
			http.Error(w, "git+: this server is private (--private): the web view is off; read the records with git+ pr list / queue show in a clone", http.StatusNotFound)
			return
		}
		s.web.ServeHTTP(w, r)
		return
	}
	rel := strings.TrimPrefix(r.URL.Path[:m[0]], "/")
	dir, err := s.Repo(r.URL.Path[:m[0]])
	switch {
	case errors.Is(err, ErrEscape):
		http.Error(w, "bad path: "+err.Error(), http.StatusBadRequest)
		return
	case errors.Is(err, ErrNoRepo) && s.Private:
		hiddenRepo(w, r, rel)
		return
	case errors.Is(err, ErrNoRepo):
		http.NotFound(w, r)
		return
	case err != nil:
		s.logf("%v", err)
		http.Error(w, "repository not ready", http.StatusInternalServerError)
		return
	}
	svc := r.URL.Path[m[2]:m[3]]
	if svc == "info/refs" {
		svc = r.URL.Query().Get("service")
	}
	write := svc == "git-receive-pack"

	var who *trust.Member
	if name, token, ok := r.BasicAuth(); ok {
		st, since, err := s.memberKeys(dir)
		if err != nil {
			s.logf("%v", err)
			http.Error(w, "repository not ready", http.StatusInternalServerError)
			return
		}
		ts, err := LoadTokens(dir)
		if err != nil {
			s.logf("%v", err)
		}
		if who, ok = CheckToken(ts, st, since, name, token); !ok {
			badToken(w, rel, name)
			return
		}
	}
	if who == nil && s.Private {
		privateRepo(w, rel)
		return
	}
	if !write || r.Method != http.MethodPost {
		s.gitkit.ServeHTTP(w, canonical(r, s.Root, dir, m[0]))
		return
	}
	s.receivePack(w, r, dir, rel, who)
}

// hiddenRepo answers a request for rel, which is no served repository, on a
// private server. A private server tells a client that is not
// authenticated for a repository nothing, not even whether it exists: a
// missing one is answered as an existing one refusing the same request,
// with or without credentials (docs/serving.md "HTTP"). Smart HTTP and the
// check endpoints both answer through here.
func hiddenRepo(w http.ResponseWriter, r *http.Request, rel string) {
	if name, _, ok := r.BasicAuth(); ok {
		badToken(w, rel, name)
	} else {
		privateRepo(w, rel)
	}
}

// badToken answers credentials that authenticate no one for rel.
func badToken(w http.ResponseWriter, rel, name string) {
	unauthorized(w, rel, "git+: the token for "+name+" is not valid for "+rel+" (revoked, never issued here, issued before the member was removed or re-keyed, or before tokens were bound to a member's key event); ask for a new one\n")
}

// privateRepo answers a request without credentials on a private server.
func privateRepo(w http.ResponseWriter, rel string) {
	unauthorized(w, rel, fmt.Sprintf("git+: %s is private: authenticate with your member name and a token (git+ member token issue NAME)\n", rel))
}

func unauthorized(w http.ResponseWriter, rel, msg string) {
	w.Header().Set("WWW-Authenticate", fmt.Sprintf("Basic realm=%q", "git+ "+rel))
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(http.StatusUnauthorized)
	io.WriteString(w, msg)
}

// receivePack runs one stateless receive-pack request. Without a token
// member the body must be a signed push by a member (pushcert.go); git's
// probe of a large push (a lone flush packet) is answered 401 like any
// other, so that git asks its credential helper before it streams a body
// it cannot send twice (docs/serving.md).
func (s *Server) receivePack(w http.ResponseWriter, r *http.Request, dir, rel string, who *trust.Member) {
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
	var in io.Reader = br
	var extra []string
	if who != nil {
		extra = append(extra, receive.EnvTokenKey+"="+who.KeyLine)
	} else {
		// Without a token, only a verified certificate of a member opens
		// the door (pushcert.go); the bytes read go to receive-pack first.
		read, refusal, err := s.checkSignedPush(br, dir, rel)
		if err != nil {
			s.logf("%v", err)
			http.Error(w, "repository not ready", http.StatusInternalServerError)
			return
		}
		if refusal != "" {
			unauthorized(w, rel, refusal)
			return
		}
		in = io.MultiReader(bytes.NewReader(read), br)
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
		s.logf("starting receive-pack for %s: %v", dir, err)
		http.Error(w, "cannot start receive-pack", http.StatusInternalServerError)
		return
	}
	go func() {
		io.Copy(stdin, in)
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
		s.logf("receive-pack in %s: %v: %s", dir, err, strings.TrimSpace(stderr.String()))
	}
}

// canonical returns r with its repository part (the path before index end)
// naming dir under root as it is on disk, for gitkit, which finds the
// repository from the path itself: "team/app" becomes "team/app.git".
func canonical(r *http.Request, root, dir string, end int) *http.Request {
	rel, err := filepath.Rel(root, dir)
	if err != nil {
		return r
	}
	want := "/" + filepath.ToSlash(rel)
	if r.URL.Path[:end] == want {
		return r
	}
	r2 := r.Clone(r.Context())
	r2.URL.Path = want + r.URL.Path[end:]
	r2.URL.RawPath = ""
	return r2
}
