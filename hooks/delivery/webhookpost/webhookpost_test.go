package webhookpost

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

func TestPost(t *testing.T) {
	var gotID, gotType, gotBody string
	srv := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		gotID, gotType, gotBody = r.Header.Get("X-GitPlus-Delivery"), r.Header.Get("Content-Type"), string(b)
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
		status, err := Post(context.Background(), srv.URL+tc.path, 5*time.Second, map[string]string{"X-GitPlus-Delivery": "abc"}, []byte(`{"x":1}`))
		if status != tc.status || (err == nil) != tc.ok {
			t.Errorf("%s: status %q, err %v; want %q, ok %v", tc.path, status, err, tc.status, tc.ok)
		}
		if err != nil && !strings.Contains(err.Error(), tc.status) {
			t.Errorf("%s: error %v does not say the status", tc.path, err)
		}
		if gotID != "abc" || gotBody != `{"x":1}` || gotType != "application/json" {
			t.Errorf("%s: id %q body %q content type %q", tc.path, gotID, gotBody, gotType)
		}
	}
	// Nothing listening: an error, no status.
	l := httptest.NewServer(http.NotFoundHandler())
	url := l.URL
	l.Close()
	if status, err := Post(context.Background(), url, 2*time.Second, nil, nil); err == nil || status != "" {
		t.Errorf("closed port: status %q, err %v", status, err)
	}
}
