package webview

import (
	"net/http/httptest"
	"os"
	"path/filepath"
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

// TestRootPaths: only repositories under the root are served; dot
// segments, a missing repository and a repository without refs/hub/trust
// are 404; writes are 405.
func TestRootPaths(t *testing.T) {
	root := t.TempDir()
	repo := filepath.Join(root, "team", "plain.git")
	for _, d := range []string{"objects", "refs"} {
		if err := os.MkdirAll(filepath.Join(repo, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(repo, "HEAD"), []byte("ref: refs/heads/main\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	h := Root(root)
	cases := []struct {
		method, path string
		code         int
		body         string
	}{
		{"GET", "/", 200, "team/plain.git"},
		{"GET", "/team/plain.git/", 404, "/team/plain.git: no refs/hub/trust: not a git&#43; repository"},
		{"GET", "/team/plain.git", 302, ""},
		{"GET", "/team/../team/plain.git/", 404, ""},
		{"GET", "/team/.hidden/", 404, ""},
		{"GET", "/nope.git/", 404, ""},
		{"POST", "/team/plain.git/", 405, ""},
		{"GET", "/team/plain.git/pr/x/y", 404, ""},
	}
	for _, tc := range cases {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(tc.method, tc.path, nil))
		if rec.Code != tc.code || !strings.Contains(rec.Body.String(), tc.body) {
			t.Errorf("%s %s: %d %q, want %d with %q", tc.method, tc.path, rec.Code, rec.Body.String(), tc.code, tc.body)
		}
		if strings.Contains(rec.Body.String(), root) {
			t.Errorf("%s %s: the page shows the server's path %s", tc.method, tc.path, root)
		}
		if rec.Code == 200 && rec.Header().Get("Content-Security-Policy") != csp {
			t.Errorf("%s %s: no Content-Security-Policy", tc.method, tc.path)
		}
	}
}
