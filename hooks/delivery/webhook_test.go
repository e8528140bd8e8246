package delivery

import (
	"context"
	"strings"
	"testing"
	"time"
)

func TestSignature(t *testing.T) {
	sig := Sign("k", []byte("body"))
	if !strings.HasPrefix(sig, "sha256=") || !VerifySignature("k", []byte("body"), sig) || VerifySignature("k2", []byte("body"), sig) {
		t.Fatalf("signature %s", sig)
	}
}

// An attempt goes to the hook's URL within its timeout, with git+'s
// headers, signed; a delivery spooled in GitHub's format carries GitHub's
// headers and no git+ header.
func TestVia(t *testing.T) {
	var gotURL string
	var gotTimeout time.Duration
	var got map[string]string
	post := func(_ context.Context, url string, timeout time.Duration, headers map[string]string, _ []byte) (string, error) {
		gotURL, gotTimeout, got = url, timeout, headers
		return "200 OK", nil
	}
	body := []byte(`{"x":1}`)
	if _, err := Via(post)(context.Background(), Webhook{URL: "http://h/x", Secret: "k", TimeoutSeconds: 3}, "abc", body); err != nil {
		t.Fatal(err)
	}
	if gotURL != "http://h/x" || gotTimeout != 3*time.Second || got["X-GitPlus-Event"] != "push" || got["X-GitPlus-Delivery"] != "abc" ||
		!VerifySignature("k", body, got[SignatureHeader]) {
		t.Fatalf("git+ format: %s %v %v", gotURL, gotTimeout, got)
	}
	body = []byte(`{"ref":"refs/heads/queue/main/1"}`)
	if _, err := Via(post)(context.Background(), Webhook{URL: "http://h/", Secret: "k", Format: FormatGitHub}, "d1", body); err != nil {
		t.Fatal(err)
	}
	if got["X-GitHub-Event"] != "push" || got["X-GitHub-Delivery"] != "d1" ||
		got["X-Hub-Signature-256"] != Sign("k", body) || got["X-Hub-Signature"] != SignSHA1("k", body) ||
		got["X-GitPlus-Event"] != "" || got[SignatureHeader] != "" || gotTimeout != DefaultWebhookTimeout {
		t.Fatalf("GitHub format: %v %v", got, gotTimeout)
	}
}

// A delivery is verified by git+'s signature header, else GitHub's.
func TestVerifier(t *testing.T) {
	body := []byte(`{"x":1}`)
	v := Verifier("k")
	for _, tc := range []struct {
		headers map[string]string
		ok      bool
	}{
		{map[string]string{SignatureHeader: Sign("k", body)}, true},
		{map[string]string{GitHubSignatureHeader: Sign("k", body)}, true},
		{map[string]string{SignatureHeader: Sign("other", body)}, false},
		{map[string]string{SignatureHeader: Sign("other", body), GitHubSignatureHeader: Sign("k", body)}, false},
		{nil, false},
	} {
		if got := v(body, func(k string) string { return tc.headers[k] }); got != tc.ok {
			t.Errorf("%v: %v", tc.headers, got)
		}
	}
}
