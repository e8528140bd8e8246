package webview

import (
	"net/http/httptest"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/gitplus/gitplus/hubrefs/pr"
)

func TestFind(t *testing.T) {
	s := &Snapshot{PRs: map[string]*PR{}}
	for _, id := range []string{"01a23af3-1111-7000-8000-000000000001", "01a23af3-1112-7000-8000-000000000002"} {
		s.PRs[id] = &PR{State: &pr.State{ID: id}}
	}
	cases := map[string]string{
		"01a23af3-1111": "01a23af3-1111-7000-8000-000000000001",
		"01A23AF3-1112": "01a23af3-1112-7000-8000-000000000002",
		"01a23af3":      "several",
		"01a":           "at least 4",
		"ffff":          "no pull request id",
	}
	for in, want := range cases {
		p, err := s.Find(in)
		got := ""
		if err != nil {
			got = err.Error()
		} else {
			got = p.ID
		}
		if !strings.Contains(got, want) {
			t.Errorf("Find(%q) = %q, want %q", in, got, want)
		}
	}
}

// servedSet is a Served of fixed repositories.
type servedSet map[string]string

func (s servedSet) ServedRepos() []string {
	var rels []string
	for rel := range s {
		rels = append(rels, rel)
	}
	sort.Strings(rels)
	return rels
}

func (s servedSet) ServedRepo(rel string) (string, bool) {
	dir, ok := s[rel]
	return dir, ok
}

// TestRootPaths: only the repositories the server serves are listed and
// shown; dot segments, a missing repository and a bare repository the
// server does not serve are a plain 404; writes are 405.
func TestRootPaths(t *testing.T) {
	root := t.TempDir()
	for _, rel := range []string{"team/plain.git", "team/app.git"} {
		repo := filepath.Join(root, filepath.FromSlash(rel))
		for _, d := range []string{"objects", "refs"} {
			if err := os.MkdirAll(filepath.Join(repo, d), 0o755); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.WriteFile(filepath.Join(repo, "HEAD"), []byte("ref: refs/heads/main\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	h := Root(servedSet{"team/app.git": filepath.Join(root, "team", "app.git")})
	cases := []struct {
		method, path string
		code         int
		body         string
	}{
		{"GET", "/", 200, "team/app.git"},
		{"GET", "/team/plain.git/", 404, "404 page not found"},
		{"GET", "/team/plain.git", 404, "404 page not found"},
		{"GET", "/team/plain.git/pr/x", 404, "404 page not found"},
		{"GET", "/team/app.git", 302, ""},
		{"GET", "/team/../team/app.git/", 404, ""},
		{"GET", "/team/.hidden/", 404, ""},
		{"GET", "/nope.git/", 404, "404 page not found"},
		{"POST", "/team/app.git/", 405, ""},
		{"GET", "/team/app.git/pr/x/y", 404, ""},
	}
	for _, tc := range cases {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(tc.method, tc.path, nil))
		if rec.Code != tc.code || !strings.Contains(rec.Body.String(), tc.body) {
			t.Errorf("%s %s: %d %q, want %d with %q", tc.method, tc.path, rec.Code, rec.Body.String(), tc.code, tc.body)
		}
		if strings.Contains(rec.Body.String(), "plain.git") {
			t.Errorf("%s %s: the page names plain.git, which is not served", tc.method, tc.path)
		}
		if strings.Contains(rec.Body.String(), root) {
			t.Errorf("%s %s: the page shows the server's path %s", tc.method, tc.path, root)
		}
		if rec.Code == 200 && rec.Header().Get("Content-Security-Policy") != csp {
			t.Errorf("%s %s: no Content-Security-Policy", tc.method, tc.path)
		}
	}
}
