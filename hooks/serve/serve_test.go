package serve

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/gitplus/gitplus/fixtures"
	"github.com/gitplus/gitplus/hubrefs"
	"github.com/gitplus/gitplus/hubrefs/trust"
)

// pkt frames payload as one pkt-line.
func pkt(payload string) string { return fmt.Sprintf("%04x%s", len(payload)+4, payload) }

// TestReadPushCert: the certificate is read as receive-pack assembles it,
// only as far as the flush after push-cert-end; anything git does not send
// there is refused.
func TestReadPushCert(t *testing.T) {
	head := pkt("push-cert\x00report-status side-band-64k") + pkt("certificate version 0.1\n") + pkt("pusher x\n") + pkt("\n")
	good := head + pkt("push-cert-end\n") + "0000"
	rest := "PACK the pack"
	br := bufio.NewReader(strings.NewReader(good + rest))
	read, cert, err := readPushCert(br)
	if err != nil || string(read) != good || string(cert) != "certificate version 0.1\npusher x\n\n" {
		t.Fatalf("read %q, cert %q, %v", read, cert, err)
	}
	if after, _ := io.ReadAll(br); string(after) != rest {
		t.Fatalf("the reader was left at %q", after)
	}
	for name, c := range map[string]struct {
		body string
		want error
	}{
		"probe":               {"0000", errNotSigned},
		"empty":               {"", errNotSigned},
		"short":               {"00", errNotSigned},
		"a command first":     {pkt(strings.Repeat("0", 40)+" "+strings.Repeat("1", 40)+" refs/heads/x\x00report-status\n") + "0000", errNotSigned},
		"push-certX":          {pkt("push-certX\x00caps") + pkt("push-cert-end\n") + "0000", errNotSigned},
		"push-cert newline":   {pkt("push-cert\n") + pkt("push-cert-end\n") + "0000", errNotSigned},
		"flush inside":        {head + "0000" + pkt("push-cert-end\n") + "0000", errBadCertFraming},
		"delimiter inside":    {head + "0001" + pkt("push-cert-end\n") + "0000", errBadCertFraming},
		"NUL inside":          {head + pkt("x\x00y\n") + pkt("push-cert-end\n") + "0000", errBadCertFraming},
		"no end":              {head, errBadCertFraming},
		"bad length":          {head + "zzzz", errBadCertFraming},
		"commands after end":  {head + pkt("push-cert-end\n") + pkt("0 1 refs/heads/x\n") + "0000", errBadCertFraming},
		"second certificate":  {head + pkt("push-cert-end\n") + head + pkt("push-cert-end\n") + "0000", errBadCertFraming},
		"nothing after end":   {head + pkt("push-cert-end\n"), errBadCertFraming},
		"over the size bound": {head + strings.Repeat(pkt(strings.Repeat("a", 60000)+"\n"), maxCertBody/60000+1) + pkt("push-cert-end\n") + "0000", errBadCertFraming},
	} {
		if _, _, err := readPushCert(bufio.NewReader(strings.NewReader(c.body))); !errors.Is(err, c.want) {
			t.Errorf("%s: %v, want %v", name, err, c.want)
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
	tok := TokenPrefix + "secret"
	since := map[string]string{"dev": "e1"}
	rec := TokenRecord{Name: "dev", Key: hubrefs.AuthorizedKey(dev.Public), KeyEvent: "e1", Hash: TokenHash(tok)}
	ts := Tokens{Tokens: []TokenRecord{rec}}
	if m, ok := CheckToken(ts, st, since, "dev", tok); !ok || m.Name != "dev" {
		t.Fatal("a valid token was refused")
	}
	unbound := rec
	unbound.KeyEvent = ""
	for name, c := range map[string]struct {
		ts          Tokens
		st          *trust.State
		since       map[string]string
		name, token string
	}{
		"wrong token":    {ts, st, since, "dev", TokenPrefix + "other"},
		"other name":     {ts, st, since, "rev", tok},
		"no prefix":      {ts, st, since, "dev", "secret"},
		"member removed": {ts, &trust.State{Members: map[string]*trust.Member{}}, map[string]string{}, "dev", tok},
		"member re-keyed": {ts, &trust.State{Members: map[string]*trust.Member{
			"dev": trust.NewMember("dev", other.Public, hubrefs.AuthorizedKey(other.Public), []string{"source.push"})}}, map[string]string{"dev": "e3"}, "dev", tok},
		"same key, later key event": {ts, st, map[string]string{"dev": "e2"}, "dev", tok},
		"record without key event":  {Tokens{Tokens: []TokenRecord{unbound}}, st, since, "dev", tok},
	} {
		if _, ok := CheckToken(c.ts, c.st, c.since, c.name, c.token); ok {
			t.Errorf("%s: accepted", name)
		}
	}
}

// TestUpdateTokensConcurrent: issues from separate processes under the
// lock file lose none of each other's records, and a revocation by id
// removes only that one.
func TestUpdateTokensConcurrent(t *testing.T) {
	dir := t.TempDir()
	const n = 12
	cmds := make([]*exec.Cmd, n)
	for i := range cmds {
		cmds[i] = exec.Command(os.Args[0], "-test.run=^TestTokenWriterProcess$")
		cmds[i].Env = append(os.Environ(), "GITPLUS_TEST_TOKEN_DIR="+dir, fmt.Sprintf("GITPLUS_TEST_TOKEN_I=%d", i))
		if err := cmds[i].Start(); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range cmds {
		if err := c.Wait(); err != nil {
			t.Fatalf("a writer process failed: %v", err)
		}
	}
	recs, err := ListTokens(dir)
	if err != nil || len(recs) != n {
		t.Fatalf("%d records (%v), want %d", len(recs), err, n)
	}
	for i := 1; i < len(recs); i++ {
		if recs[i-1].Name > recs[i].Name {
			t.Fatalf("ListTokens not ordered by name: %v", recs)
		}
	}
	if k, err := RevokeTokens(dir, "m01", "id05"); err != nil || k != 1 {
		t.Fatalf("revoke by id: %d, %v", k, err)
	}
	if k, err := RevokeTokens(dir, "m01", ""); err != nil || k != 2 {
		t.Fatalf("revoke all of m01: %d, %v", k, err)
	}
	_, err = RevokeTokens(dir, "m01", "")
	if !errors.Is(err, ErrNoToken) || err.Error() != "no token of m01 in "+dir+"; see git+ member token list" {
		t.Fatalf("revoking nothing: %v", err)
	}
	if recs, _ := ListTokens(dir); len(recs) != n-3 {
		t.Fatalf("%d records left, want %d", len(recs), n-4)
	}
}

// TestTokenWriterProcess is one writer of TestUpdateTokensConcurrent, run
// as its own process.
func TestTokenWriterProcess(t *testing.T) {
	dir := os.Getenv("GITPLUS_TEST_TOKEN_DIR")
	if dir == "" {
		t.Skip("run by TestUpdateTokensConcurrent")
	}
	i, _ := strconv.Atoi(os.Getenv("GITPLUS_TEST_TOKEN_I"))
	err := UpdateTokens(dir, func(ts *Tokens) error {
		ts.Tokens = append(ts.Tokens, TokenRecord{ID: fmt.Sprintf("id%02d", i), Name: fmt.Sprintf("m%02d", i%4)})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestLoadTokensBadFile(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, filepath.FromSlash(TokensFile))
	os.MkdirAll(filepath.Dir(p), 0o755)
	os.WriteFile(p, []byte("{"), 0o600)
	if _, err := LoadTokens(dir); err == nil || !strings.Contains(err.Error(), "is not a token file") {
		t.Fatalf("a broken token file: %v", err)
	}
	if err := UpdateTokens(dir, func(*Tokens) error { return nil }); err == nil {
		t.Fatal("UpdateTokens rewrote a broken token file")
	}
}

// TestRepoResolution: the paths a client may name, and those it may not.
func TestRepoResolution(t *testing.T) {
	root := t.TempDir()
	mk := func(rel string, trust bool) {
		d := filepath.Join(root, filepath.FromSlash(rel))
		for _, sub := range []string{"objects", "refs/hub"} {
			if err := os.MkdirAll(filepath.Join(d, sub), 0o755); err != nil {
				t.Fatal(err)
			}
		}
		os.WriteFile(filepath.Join(d, "HEAD"), []byte("ref: refs/heads/main\n"), 0o644)
		if trust {
			os.WriteFile(filepath.Join(d, "refs/hub/trust"), []byte(strings.Repeat("1", 40)+"\n"), 0o644)
		}
	}
	mk("team/app.git", true)
	mk("plain.git", false)
	mk(".hidden/x.git", true)
	mk("a/b/c/d/deep.git", true)
	repos, err := FindRepos(root)
	if err != nil {
		t.Fatal(err)
	}
	var rels []string
	for _, r := range repos {
		rel, _ := filepath.Rel(root, r)
		rels = append(rels, filepath.ToSlash(rel))
	}
	if strings.Join(rels, " ") != "plain.git team/app.git" {
		t.Fatalf("FindRepos: %v, want plain.git team/app.git", rels)
	}
	if !HasTrust(filepath.Join(root, "team/app.git")) || HasTrust(filepath.Join(root, "plain.git")) {
		t.Fatal("HasTrust")
	}
	s := New(root, "/nonexistent/git+", false)
	s.installed[filepath.Join(root, "team", "app.git")] = true // no hooks written by this test
	if dir, err := s.Repo("/team/app.git/"); err != nil || dir != filepath.Join(root, "team", "app.git") {
		t.Fatalf("Repo(team/app.git): %q, %v", dir, err)
	}
	for rel, want := range map[string]error{
		"team/../team/app.git": ErrEscape, "..": ErrEscape,
		"plain.git": ErrNoRepo, ".hidden/x.git": ErrNoRepo, "": ErrNoRepo, "team": ErrNoRepo, "nothing.git": ErrNoRepo,
	} {
		if _, err := s.Repo(rel); !errors.Is(err, want) {
			t.Errorf("Repo(%q): %v, want %v", rel, err, want)
		}
	}
}

// TestHandlerPaths: what the handler answers before any repository is
// opened — a path leaving the root, one naming no git+ repository (on a
// private server the 401 an existing one gives), and the web view of a
// private server.
func TestHandlerPaths(t *testing.T) {
	root := t.TempDir()
	for _, c := range []struct {
		private    bool
		path, body string
		code       int
	}{
		{false, "/../x.git/info/refs", "bad path", 400},
		{false, "/a/../../x.git/git-upload-pack", "bad path", 400},
		{false, "/nothing.git/info/refs", "404 page not found", 404},
		{true, "/nothing.git/info/refs", "git+: nothing.git is private: authenticate", 401},
		{true, "/", "this server is private (--private): the web view is off", 404},
	} {
		rec := httptest.NewRecorder()
		req := httptest.NewRequest("GET", "http://x/", nil)
		req.URL.Path = c.path // unclean on purpose: a client may send it so
		New(root, "/nonexistent/git+", c.private).ServeHTTP(rec, req)
		if rec.Code != c.code || !strings.Contains(rec.Body.String(), c.body) {
			t.Errorf("private %v, %s: %d %q, want %d %q", c.private, c.path, rec.Code, rec.Body.String(), c.code, c.body)
		}
	}
}
