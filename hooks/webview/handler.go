package webview

import (
	"bytes"
	"embed"
	"errors"
	"fmt"
	"html/template"
	"net/http"
	"path"
	"sort"
	"strings"
	"time"

	"github.com/gitplus/gitplus/hubrefs/trust"
)

//go:embed templates/*.html
var templateFS embed.FS

// RefreshSeconds is how often a page reloads itself (a meta refresh: the
// page has no script).
const RefreshSeconds = 10

var pages = template.Must(template.New("").Funcs(template.FuncMap{
	"short":  short,
	"branch": func(ref string) string { return strings.TrimPrefix(ref, "refs/heads/") },
	"when": func(t time.Time) string {
		if t.IsZero() {
			return ""
		}
		return t.UTC().Format("2006-01-02 15:04 UTC")
	},
	"refresh": func() int { return RefreshSeconds },
	"inc":     func(i int) int { return i + 1 },
}).ParseFS(templateFS, "templates/*.html"))

// csp forbids every script, frame, form and remote resource: the pages are
// static HTML with inline styles (defence in depth beside the escaping).
const csp = "default-src 'none'; style-src 'unsafe-inline'; img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

// Repo is the view of one repository at gitDir, mounted at base (the
// repository's URL path, e.g. "/team/app.git"; "" for the site root). It
// serves base/ (the queue, landings and pull requests) and base/pr/ID (one
// pull request; ID may be an unambiguous prefix).
func Repo(gitDir, base string) http.Handler {
	return &repoView{gitDir: gitDir, base: strings.TrimSuffix(base, "/")}
}

type repoView struct {
	gitDir, base string
}

func (v *repoView) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "the web view is read-only", http.StatusMethodNotAllowed)
		return
	}
	rest, ok := strings.CutPrefix(r.URL.Path, v.base)
	if !ok {
		http.NotFound(w, r)
		return
	}
	switch {
	case rest == "":
		http.Redirect(w, r, v.base+"/", http.StatusFound)
	case rest == "/":
		v.index(w)
	case strings.HasPrefix(rest, "/pr/") && !strings.Contains(rest[len("/pr/"):], "/"):
		v.pullRequest(w, rest[len("/pr/"):])
	default:
		http.NotFound(w, r)
	}
}

type pageData struct {
	Base   string
	Title  string
	S      *Snapshot
	PR     *PR
	Charts []TargetCharts // the index's pictures (charts.go)
}

func (v *repoView) load(w http.ResponseWriter) (*Snapshot, bool) {
	s, err := Load(v.gitDir)
	if err != nil {
		status := http.StatusInternalServerError
		if errors.Is(err, ErrNoTrust) {
			status = http.StatusNotFound
		}
		// The page names the repository by its URL, never by its path on
		// the server.
		msg := strings.ReplaceAll(err.Error(), v.gitDir, v.base)
		render(w, status, "error", map[string]any{"Base": v.base, "Title": "error", "Message": msg})
		return nil, false
	}
	return s, true
}

func (v *repoView) index(w http.ResponseWriter) {
	s, ok := v.load(w)
	if !ok {
		return
	}
	charts, err := chartsOf(v.gitDir, s.Trust)
	if err != nil {
		s.Warnings = append(s.Warnings, "the queue's figures: "+strings.ReplaceAll(err.Error(), v.gitDir, v.base))
	}
	render(w, http.StatusOK, "index", pageData{Base: v.base, Title: repoTitle(s, v.base), S: s, Charts: charts})
}

func (v *repoView) pullRequest(w http.ResponseWriter, id string) {
	s, ok := v.load(w)
	if !ok {
		return
	}
	p, err := s.Find(id)
	var amb *ambiguousID
	if errors.As(err, &amb) {
		// Several match: say so and link each (300, Multiple Choices).
		render(w, http.StatusMultipleChoices, "error", map[string]any{"Base": v.base, "Title": "ambiguous pull request id",
			"Message": err.Error() + "; pick one:", "PRs": amb.matches})
		return
	}
	if err != nil {
		render(w, http.StatusNotFound, "error", map[string]any{"Base": v.base, "Title": "no such pull request", "Message": err.Error()})
		return
	}
	render(w, http.StatusOK, "pr", pageData{Base: v.base, Title: p.Title, S: s, PR: p})
}

// Find returns the pull request whose id is id or starts with it (at least
// four characters), or an error saying none or which several match.
func (s *Snapshot) Find(id string) (*PR, error) {
	id = strings.ToLower(id)
	if p, ok := s.PRs[id]; ok {
		return p, nil
	}
	if len(id) < 4 {
		return nil, fmt.Errorf("no pull request %q (give at least 4 characters of its id)", id)
	}
	var matches []string
	for pid := range s.PRs {
		if strings.HasPrefix(pid, id) {
			matches = append(matches, pid)
		}
	}
	sort.Strings(matches)
	switch len(matches) {
	case 0:
		return nil, fmt.Errorf("no pull request id starts with %q", id)
	case 1:
		return s.PRs[matches[0]], nil
	}
	return nil, &ambiguousID{id, matches}
}

// ambiguousID is a Find of a prefix that several pull request ids start
// with (matches, sorted).
type ambiguousID struct {
	id      string
	matches []string
}

func (e *ambiguousID) Error() string {
	return fmt.Sprintf("%q is the start of several pull request ids: %s", e.id, strings.Join(e.matches, ", "))
}

func repoTitle(s *Snapshot, base string) string {
	if s.RepoName != "" {
		return s.RepoName
	}
	if base != "" {
		return path.Base(base)
	}
	return s.RepoID
}

func render(w http.ResponseWriter, status int, name string, data any) {
	var buf bytes.Buffer
	if err := pages.ExecuteTemplate(&buf, name, data); err != nil {
		http.Error(w, "rendering the page failed: "+err.Error(), http.StatusInternalServerError)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Content-Security-Policy", csp)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	w.Write(buf.Bytes())
}

// Served is what Root shows: the repositories a server serves, as the
// server decides (git+ serve: hooks/serve), so that the page lists and
// describes exactly those and nothing else.
type Served interface {
	// ServedRepos lists the URL paths of the served repositories
	// ("team/app.git"), in order.
	ServedRepos() []string
	// ServedRepo returns the git directory of the served repository at
	// URL path rel ("team/app.git"), or false for any path that is not one.
	ServedRepo(rel string) (gitDir string, ok bool)
}

// Root is the view of the repositories served, each at its path under the
// root (ROOT/team/app.git at /team/app.git/), as git+ serve lays them out;
// "/" lists them. Any other path, a repository the server does not serve
// included, is a plain 404, as smart HTTP answers it.
func Root(served Served) http.Handler { return &rootView{served: served} }

type rootView struct{ served Served }

// maxDepth is how many path segments a repository's URL path has at most
// (git+ serve finds repositories up to four levels under its root).
const maxDepth = 4

func (v *rootView) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == "/" {
		v.list(w)
		return
	}
	segs := strings.Split(strings.Trim(r.URL.Path, "/"), "/")
	for i := range segs {
		if segs[i] == "" || segs[i] == ".." || strings.HasPrefix(segs[i], ".") {
			http.NotFound(w, r)
			return
		}
		if i >= maxDepth {
			break
		}
		rel := strings.Join(segs[:i+1], "/")
		if dir, ok := v.served.ServedRepo(rel); ok {
			Repo(dir, "/"+rel).ServeHTTP(w, r)
			return
		}
	}
	http.NotFound(w, r)
}

func (v *rootView) list(w http.ResponseWriter) {
	render(w, http.StatusOK, "root", map[string]any{"Base": "", "Title": "repositories", "Repos": v.served.ServedRepos()})
}

// Required is the protection of p's base branch (the templates show its
// required approvals).
func (s *Snapshot) Required(p *PR) trust.Branch {
	b, _ := s.Trust.Rules.For(p.Base)
	return b
}
