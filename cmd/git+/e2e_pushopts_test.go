package main

// End-to-end: git+'s own push options (gitplus.no-notify, gitplus-wake=<id>)
// sent by a client over HTTP are a client's word and silence nothing
// (docs/serving.md "Push options: which are honoured from whom").

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gitplus/gitplus/hooks"
	"github.com/gitplus/gitplus/hooks/config"
	"github.com/gitplus/gitplus/hooks/delivery"
	"github.com/gitplus/gitplus/hooks/wake"
	"github.com/gitplus/gitplus/hubrefs"
)

func TestServeClientPushOptionsSilenceNothing(t *testing.T) {
	t.Parallel()
	w := newE2E(t, nil, "newadmin")
	t.Cleanup(func() { stopWorker(t, w.origin) })
	const secret = "audit-secret"
	var mu sync.Mutex
	var got []delivery.Delivery
	srv := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if !delivery.VerifySignature(secret, body, r.Header.Get(delivery.SignatureHeader)) {
			http.Error(rw, "bad signature", 400)
			return
		}
		var d delivery.Delivery
		if err := json.Unmarshal(body, &d); err != nil {
			http.Error(rw, err.Error(), 400)
			return
		}
		mu.Lock()
		got = append(got, d)
		mu.Unlock()
	}))
	t.Cleanup(srv.Close)
	writeJSONFile(t, filepath.Join(w.origin, config.WebhooksFile), delivery.WebhooksConfig{Hooks: []delivery.Webhook{
		{Name: "audit", URL: srv.URL, Secret: secret, Events: []string{"*"}},
	}})
	writeJSONFile(t, filepath.Join(w.origin, config.WakeFile), wake.WakeConfig{Rules: []wake.WakeRule{
		{Name: "trustwatch", Ref: hubrefs.TrustRef, On: []string{hubrefs.TypeMemberAdded}, Run: []string{"sh", "-c", "echo woke"}},
	}})
	s := startServe(t, w.bin, w.env, filepath.Dir(w.origin))
	url := s.URL + "/origin.git"

	// A new repo.admin, pushed over HTTP (signed by the admin) with both of
	// git+'s options.
	key := hubrefs.AuthorizedKey(w.signer("newadmin").PublicKey())
	ev := w.writeEvent("admin", hubrefs.MemberAdded{Base: w.base(hubrefs.TypeMemberAdded), Name: "newadmin", Key: key,
		Caps: []string{"repo.admin"}}, w.ref(hubrefs.TrustRef))
	_, errs, err := w.gitRun(w.work, "", []string{"GIT_TERMINAL_PROMPT=0"}, "push",
		"-o", wake.NoNotifyOption, "-o", wake.WakeOptionPrefix+"trustwatch", url, ev+":"+hubrefs.TrustRef)
	if err != nil {
		t.Fatalf("push of member.added over HTTP: %v\n%s", err, errs)
	}
	if w.ref(hubrefs.TrustRef) != ev {
		t.Fatalf("refs/hub/trust is %s, want %s", w.ref(hubrefs.TrustRef), ev)
	}
	// The chain logs what it did before the push returns.
	logText := readFile(filepath.Join(w.origin, hooks.LogFile))
	if !strings.Contains(logText, "woke [trustwatch]") {
		t.Errorf("-o %strustwatch from a client skipped the rule; post-receive log:\n%s", wake.WakeOptionPrefix, logText)
	}
	if !strings.Contains(logText, "deliveries spooled [") || strings.Contains(logText, "deliveries spooled []") {
		t.Fatalf("-o %s from a client spooled nothing for member.added; post-receive log:\n%s", wake.NoNotifyOption, logText)
	}
	delivered := func(pred func(delivery.Delivery) bool) bool {
		mu.Lock()
		defer mu.Unlock()
		for _, d := range got {
			if pred(d) {
				return true
			}
		}
		return false
	}
	if !waitFor(30*time.Second, func() bool {
		return delivered(func(d delivery.Delivery) bool {
			for _, e := range d.Events {
				// The client's options are reported, not obeyed.
				if e.Type == hubrefs.TypeMemberAdded && e.ID == ev && strings.Contains(strings.Join(d.PushOptions, " "), wake.NoNotifyOption) {
					return true
				}
			}
			return false
		})
	}) {
		t.Fatalf("member.added %s never reached the webhook; worker log:\n%s", ev, readFile(filepath.Join(w.origin, delivery.WorkerLog)))
	}

	// A branch pushed over HTTP with the option is announced too.
	c1 := w.commit(nil, map[string]string{"a": "1"}, "c1")
	if _, errs, err := w.gitRun(w.work, "", []string{"GIT_TERMINAL_PROMPT=0"}, "push", "-o", wake.NoNotifyOption, url, c1+":refs/heads/main"); err != nil {
		t.Fatalf("push of main over HTTP: %v\n%s", err, errs)
	}
	if !waitFor(30*time.Second, func() bool {
		return delivered(func(d delivery.Delivery) bool {
			return len(d.Updates) == 1 && d.Updates[0].Ref == "refs/heads/main" && d.Updates[0].New == c1
		})
	}) {
		t.Fatalf("the push of main with -o %s never reached the webhook; worker log:\n%s", wake.NoNotifyOption, readFile(filepath.Join(w.origin, delivery.WorkerLog)))
	}
}
