package main

// The check endpoints keep --private's promise (docs/serving.md, "HTTP"
// and "Recording a check without git+"): a client not authenticated for a
// repository learns nothing of it from /hub/checks/prepare|append either.

import (
	"bytes"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"sort"
	"strings"
	"testing"

	"github.com/google/uuid"
)

// checkProbe sends one request to a check endpoint and returns the answer
// as a client sees it, the date left out.
func checkProbe(t *testing.T, method, url, user, pass, ctype string, body []byte) answer {
	t.Helper()
	req, err := http.NewRequest(method, url, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if user != "" {
		req.SetBasicAuth(user, pass)
	}
	if ctype != "" {
		req.Header.Set("Content-Type", ctype)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var hs []string
	for k, v := range resp.Header {
		if k != "Date" {
			hs = append(hs, k+": "+strings.Join(v, ", "))
		}
	}
	sort.Strings(hs)
	return answer{resp.StatusCode, strings.Join(hs, "\n"), string(b)}
}

// appendForm is a multipart append request (pr, event, signature) with a
// fixed boundary, so two copies are byte for byte alike.
func appendForm(t *testing.T, pr string, event, sig []byte) (string, []byte) {
	t.Helper()
	var b bytes.Buffer
	mw := multipart.NewWriter(&b)
	if err := mw.SetBoundary("gitplus-test-boundary"); err != nil {
		t.Fatal(err)
	}
	mw.WriteField("pr", pr)
	for name, data := range map[string][]byte{"event": event, "signature": sig} {
		fw, err := mw.CreateFormFile(name, name)
		if err != nil {
			t.Fatal(err)
		}
		fw.Write(data)
	}
	mw.Close()
	return mw.FormDataContentType(), b.Bytes()
}

// TestServePrivateCheckAPIHidesRepos: on a --private server, every probe
// of the check endpoints — without credentials, with another repository's
// valid token, with a wrong token, as a made-up user; prepare and append;
// POST and GET — is answered alike (status, headers, body) for a served
// repository, one serve skips and a missing one, and nothing moves.
func TestServePrivateCheckAPIHidesRepos(t *testing.T) {
	t.Parallel()
	a, side := newPrivateWorld(t)
	base := a.commit(nil, map[string]string{"a.txt": "a\n"}, "one")
	devTok := strings.TrimSpace(a.mustGP("", a.root, "", "--repo", a.origin, "member", "token", "issue", "dev"))
	outTok := strings.TrimSpace(a.mustGP("", a.root, "", "--repo", side, "member", "token", "issue", "out"))
	before := a.refs()

	pr := uuid.Must(uuid.NewV7()).String()
	prepare := []byte(fmt.Sprintf(`{"pr":%q,"name":"ci","head":%q,"conclusion":"success","member":"out"}`, pr, base))
	formType, form := appendForm(t, pr, []byte("tree 4b825dc642cb6eb9a060e54bf8d69288fbee4904\n\ncheck.completed\n"),
		[]byte("-----BEGIN SSH SIGNATURE-----\nAAAA\n-----END SSH SIGNATURE-----\n"))
	endpoints := []struct {
		path, ctype string
		body        []byte
	}{
		{"/hub/checks/prepare", "application/json", prepare},
		{"/hub/checks/append", formType, form},
	}
	creds := []struct{ what, user, pass string }{
		{"no credentials", "", ""},
		{"another repository's valid token", "out", outTok},
		{"a wrong token", "dev", "gpt_bogus"},
		{"a made-up user", "mallory", "gpt_made_up"},
	}
	probes, differ := 0, 0
	for _, ep := range endpoints {
		for _, method := range []string{"POST", "GET"} {
			for _, cr := range creds {
				var want answer
				for i, repo := range []string{"origin.git", "simple.git", "absent.git"} {
					body := ep.body
					if method == "GET" {
						body = nil
					}
					got := checkProbe(t, method, a.s.URL+"/"+repo+ep.path, cr.user, cr.pass, ep.ctype, body)
					probes++
					got.Headers = strings.ReplaceAll(got.Headers, repo, "REPO")
					got.Body = strings.ReplaceAll(got.Body, repo, "REPO")
					if got.Status != http.StatusUnauthorized {
						t.Errorf("%s %s%s with %s: %d %q, want 401", method, repo, ep.path, cr.what, got.Status, got.Body)
					}
					if i == 0 {
						want = got
					} else if got != want {
						differ++
						t.Errorf("%s %s%s with %s tells it apart from origin.git:\n%+v\nwant\n%+v", method, repo, ep.path, cr.what, got, want)
					}
				}
			}
		}
	}
	t.Logf("%d probes, %d told a repository apart", probes, differ)

	// Authenticated for the repository, the client gets further: a prepare
	// for a pull request that does not exist is a 404 naming it.
	if got := checkProbe(t, "POST", a.s.URL+"/origin.git/hub/checks/prepare", "dev", devTok, "application/json", prepare); got.Status != http.StatusNotFound || !strings.Contains(got.Body, pr) {
		t.Fatalf("dev's token on origin.git's prepare: %d %q", got.Status, got.Body)
	}
	if after := a.refs(); after != before {
		t.Fatalf("refs changed:\n%s\n---\n%s", before, after)
	}
}
