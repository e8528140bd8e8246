package checkworker

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// A signed POST wakes the worker (once while a look is due); another
// method or a signature that does not verify is answered and wakes nothing.
func TestWakeHandler(t *testing.T) {
	wake := make(chan struct{}, 1)
	h := wakeHandler(func(body []byte, header func(string) string) bool {
		return header("X-Sig") == "ok:"+string(body)
	}, wake)
	do := func(method, sig string) int {
		r := httptest.NewRequest(method, "/", strings.NewReader("b"))
		r.Header.Set("X-Sig", sig)
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		return w.Code
	}
	if code := do(http.MethodGet, "ok:b"); code != http.StatusMethodNotAllowed || len(wake) != 0 {
		t.Fatalf("GET: %d, woke %d", code, len(wake))
	}
	if code := do(http.MethodPost, "bad"); code != http.StatusUnauthorized || len(wake) != 0 {
		t.Fatalf("unsigned: %d, woke %d", code, len(wake))
	}
	if code := do(http.MethodPost, "ok:b"); code != http.StatusNoContent || len(wake) != 1 {
		t.Fatalf("signed: %d, woke %d", code, len(wake))
	}
	if code := do(http.MethodPost, "ok:b"); code != http.StatusNoContent || len(wake) != 1 {
		t.Fatalf("signed again while a look is due: %d, woke %d", code, len(wake))
	}
}
