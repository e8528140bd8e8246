package main

import (
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gitplus/gitplus/hooks/serve"
)

// TestServePrivate: with --private every request needs a token, reads
// included; a wrong token is a 401 even where anonymous reads are allowed.
func TestServePrivate(t *testing.T) {
	t.Parallel()
	w := newE2E(t, map[string][]string{"dev": {"hub.pr"}})
	root := filepath.Dir(w.origin)
	token := strings.TrimSpace(w.mustGP("", root, "", "--repo", w.origin, "member", "token", "issue", "dev"))
	for _, private := range []bool{true, false} {
		srv := httptest.NewServer(serve.New(root, w.bin, private))
		get := func(user, pass string) int {
			req, _ := http.NewRequest("GET", srv.URL+"/origin.git/info/refs?service=git-upload-pack", nil)
			if user != "" {
				req.SetBasicAuth(user, pass)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			return resp.StatusCode
		}
		// gitkit answers a read it is let through to with 200.
		anon, withToken, wrong := get("", ""), get("dev", token), get("dev", token+"x")
		if private && (anon != 401 || withToken != 200 || wrong != 401) {
			t.Errorf("private: anonymous %d, token %d, wrong token %d; want 401, through, 401", anon, withToken, wrong)
		}
		if !private && (anon != 200 || withToken != 200 || wrong != 401) {
			t.Errorf("public: anonymous %d, token %d, wrong token %d; want through, through, 401", anon, withToken, wrong)
		}
		srv.Close()
	}
}
