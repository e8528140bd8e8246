package webhookpost

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/gitplus/gitplus/hooks/delivery"
)

func TestAttempt(t *testing.T) {
	var gotID, gotSig, gotBody string
	srv := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		gotID, gotSig, gotBody = r.Header.Get("X-GitPlus-Delivery"), r.Header.Get(delivery.SignatureHeader), string(b)
		switch r.URL.Path {
		case "/ok":
		case "/redirect":
			http.Redirect(rw, r, "/ok", http.StatusFound)
		default:
			http.Error(rw, "no", http.StatusTeapot)
		}
	}))
	defer srv.Close()
	for _, tc := range []struct {
		path, status string
		ok           bool
	}{
		{"/ok", "200 OK", true},
		{"/redirect", "302 Found", false}, // redirects are not followed
		{"/nope", "418 I'm a teapot", false},
	} {
		h := delivery.Webhook{URL: srv.URL + tc.path, Secret: "k"}
		status, err := Attempt(context.Background(), h, "abc", []byte(`{"x":1}`))
		if status != tc.status || (err == nil) != tc.ok {
			t.Errorf("%s: status %q, err %v; want %q, ok %v", tc.path, status, err, tc.status, tc.ok)
		}
		if err != nil && !strings.Contains(err.Error(), tc.status) {
			t.Errorf("%s: error %v does not say the status", tc.path, err)
		}
		if gotID != "abc" || gotBody != `{"x":1}` || !delivery.VerifySignature("k", []byte(gotBody), gotSig) {
			t.Errorf("%s: id %q body %q signature %q", tc.path, gotID, gotBody, gotSig)
		}
	}
	// Nothing listening: an error, no status.
	l := httptest.NewServer(http.NotFoundHandler())
	url := l.URL
	l.Close()
	if status, err := Attempt(context.Background(), delivery.Webhook{URL: url, Secret: "k", TimeoutSeconds: 2}, "id", nil); err == nil || status != "" {
		t.Errorf("closed port: status %q, err %v", status, err)
	}
}

// A GitHub-format delivery carries GitHub's headers and no git+ header.
func TestAttemptGitHubHeaders(t *testing.T) {
	var got http.Header
	srv := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) { got = r.Header.Clone() }))
	defer srv.Close()
	body := []byte(`{"ref":"refs/heads/queue/main/1"}`)
	h := delivery.Webhook{URL: srv.URL, Secret: "k", Format: delivery.FormatGitHub}
	if _, err := Attempt(context.Background(), h, "d1", body); err != nil {
		t.Fatal(err)
	}
	if got.Get("X-GitHub-Event") != "push" || got.Get("X-GitHub-Delivery") != "d1" ||
		got.Get("X-Hub-Signature-256") != delivery.Sign("k", body) || got.Get("X-Hub-Signature") != delivery.SignSHA1("k", body) ||
		got.Get("X-GitPlus-Event") != "" || got.Get(delivery.SignatureHeader) != "" {
		t.Fatalf("headers: %v", got)
	}
}
