package main

import (
	"bufio"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gitplus/gitplus/fixtures"
	"github.com/gitplus/gitplus/hubrefs"
	"github.com/gitplus/gitplus/hubrefs/trust"
)

func TestAnonymousOK(t *testing.T) {
	for _, c := range []struct {
		body string
		want bool
	}{
		{"0073push-cert\x00report-status side-band-64k\n", true},
		{"000epush-cert\x00", true},
		{"0000", false}, // the probe of a large push
		{"009a" + strings.Repeat("0", 40) + " " + strings.Repeat("1", 40) + " refs/heads/x\x00report-status\n", false},
		{"00", false},
		{"", false},
		{"000epush-certX", false},
	} {
		if got := anonymousOK(bufio.NewReader(strings.NewReader(c.body))); got != c.want {
			t.Errorf("%q: %v, want %v", c.body, got, c.want)
		}
	}
}

func TestUnquoteSQ(t *testing.T) {
	for in, want := range map[string]string{
		"team/app.git":       "team/app.git",
		`it'\''s.git`:        "it's.git",
		`bang'\!'.git`:       "bang!.git",
		`a'\''b'\''c`:        "a'b'c",
		"/leading/slash.git": "/leading/slash.git",
	} {
		if got, ok := unquoteSQ(in); !ok || got != want {
			t.Errorf("%q: %q %v, want %q", in, got, ok, want)
		}
	}
	for _, bad := range []string{"a'b", `a'\'b`, "'"} {
		if got, ok := unquoteSQ(bad); ok {
			t.Errorf("%q unquoted to %q", bad, got)
		}
	}
}

func TestCheckToken(t *testing.T) {
	dir := t.TempDir()
	dev := fixtures.NewKey(t, dir, "dev")
	other := fixtures.NewKey(t, dir, "other")
	st := &trust.State{Members: map[string]*trust.Member{
		"dev": trust.NewMember("dev", dev.Public, hubrefs.AuthorizedKey(dev.Public), []string{"source.push"}),
	}}
	tok := tokenPrefix + "secret"
	ts := tokenSet{Tokens: []tokenRecord{{Name: "dev", Key: hubrefs.AuthorizedKey(dev.Public), Hash: tokenHash(tok)}}}
	if m, ok := checkToken(ts, st, "dev", tok); !ok || m.Name != "dev" {
		t.Fatal("a valid token was refused")
	}
	for name, c := range map[string]struct {
		st          *trust.State
		name, token string
	}{
		"wrong token":    {st, "dev", tokenPrefix + "other"},
		"other name":     {st, "rev", tok},
		"no prefix":      {st, "dev", "secret"},
		"member removed": {&trust.State{Members: map[string]*trust.Member{}}, "dev", tok},
		"member re-keyed": {&trust.State{Members: map[string]*trust.Member{
			"dev": trust.NewMember("dev", other.Public, hubrefs.AuthorizedKey(other.Public), []string{"source.push"})}}, "dev", tok},
	} {
		if _, ok := checkToken(ts, c.st, c.name, c.token); ok {
			t.Errorf("%s: accepted", name)
		}
	}
}

// TestServePrivate: with --private every request needs a token, reads
// included; a wrong token is a 401 even where anonymous reads are allowed.
func TestServePrivate(t *testing.T) {
	t.Parallel()
	w := newE2E(t, map[string][]string{"dev": {"hub.pr"}})
	root := filepath.Dir(w.origin)
	token := strings.TrimSpace(w.mustGP("", root, "", "--repo", w.origin, "member", "token", "issue", "dev"))
	for _, private := range []bool{true, false} {
		s := &server{root: root, bin: w.bin, private: private, installed: map[string]bool{}}
		srv := httptest.NewServer(&httpFront{server: s, gitkit: http.NotFoundHandler()})
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
		// gitkit is replaced by a 404 handler: reaching it means "let through".
		anon, withToken, wrong := get("", ""), get("dev", token), get("dev", token+"x")
		if private && (anon != 401 || withToken != 404 || wrong != 401) {
			t.Errorf("private: anonymous %d, token %d, wrong token %d; want 401, through, 401", anon, withToken, wrong)
		}
		if !private && (anon != 404 || withToken != 404 || wrong != 401) {
			t.Errorf("public: anonymous %d, token %d, wrong token %d; want through, through, 401", anon, withToken, wrong)
		}
		srv.Close()
	}
}
