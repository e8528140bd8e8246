package main

// End-to-end tests of signed pushes over HTTP against replay
// (docs/serving.md "Replayed certificates"): stock git pushes through a
// recording proxy to a real git+ serve; the recorded request is then sent
// again, as it was and re-encoded.

import (
	"bytes"
	"compress/gzip"
	"crypto/sha1"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// recordingProxy forwards to target and keeps the (decompressed) bodies of
// the git-receive-pack requests it forwards.
type recordingProxy struct {
	URL    string
	mu     sync.Mutex
	bodies [][]byte
}

func newRecordingProxy(t *testing.T, target string) *recordingProxy {
	t.Helper()
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	p := &recordingProxy{}
	rp := httputil.NewSingleHostReverseProxy(u)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/git-receive-pack") {
			var in io.Reader = r.Body
			if r.Header.Get("Content-Encoding") == "gzip" {
				gz, err := gzip.NewReader(r.Body)
				if err != nil {
					http.Error(w, err.Error(), http.StatusBadRequest)
					return
				}
				in = gz
			}
			body, err := io.ReadAll(in)
			if err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			p.mu.Lock()
			p.bodies = append(p.bodies, body)
			p.mu.Unlock()
			r.Header.Del("Content-Encoding")
			r.Body, r.ContentLength = io.NopCloser(bytes.NewReader(body)), int64(len(body))
		}
		rp.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	p.URL = srv.URL
	return p
}

// last returns the last receive-pack body recorded.
func (p *recordingProxy) last(t *testing.T) []byte {
	t.Helper()
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.bodies) == 0 {
		t.Fatal("the proxy recorded no receive-pack request")
	}
	return p.bodies[len(p.bodies)-1]
}

// pktLines splits a receive-pack body into its leading pkt-lines, up to and
// including the first flush after push-cert-end, and the rest.
func pktLines(t *testing.T, body []byte) (lines []string, rest []byte) {
	t.Helper()
	ended := false
	for {
		if len(body) < 4 {
			t.Fatalf("the body ends inside its pkt-lines")
		}
		n, err := strconv.ParseUint(string(body[:4]), 16, 16)
		if err != nil {
			t.Fatalf("pkt-line length %q", body[:4])
		}
		if n < 4 {
			lines = append(lines, string(body[:4]))
			body = body[4:]
			if ended {
				return lines, body
			}
			continue
		}
		lines = append(lines, string(body[:n]))
		if string(body[4:n]) == "push-cert-end\n" {
			ended = true
		}
		body = body[n:]
	}
}

// reencode rebuilds a recorded signed push body with its certificate's
// lines changed by edit (payloads, push-cert-end excluded).
func reencode(t *testing.T, body []byte, edit func([]string) []string) []byte {
	t.Helper()
	lines, rest := pktLines(t, body)
	end := -1
	for i, l := range lines {
		if l[4:] == "push-cert-end\n" {
			end = i
		}
	}
	if end < 1 || !strings.HasPrefix(lines[0][4:], "push-cert\x00") {
		t.Fatalf("the recorded body is not a signed push: %q", lines)
	}
	var payloads []string
	for _, l := range lines[1:end] {
		payloads = append(payloads, l[4:])
	}
	var out bytes.Buffer
	out.WriteString(lines[0])
	for _, p := range edit(payloads) {
		fmt.Fprintf(&out, "%04x%s", len(p)+4, p)
	}
	for _, l := range lines[end:] {
		out.WriteString(l)
	}
	out.Write(rest)
	return out.Bytes()
}

// rewrapArmor lays the base64 of the armor out in lines of n characters.
func rewrapArmor(n int) func([]string) []string {
	return func(lines []string) []string {
		var out []string
		var b64 strings.Builder
		in := false
		for _, l := range lines {
			switch {
			case l == "-----BEGIN SSH SIGNATURE-----\n":
				in = true
				out = append(out, l)
			case l == "-----END SSH SIGNATURE-----\n":
				s := b64.String()
				for len(s) > 0 {
					k := min(n, len(s))
					out = append(out, s[:k]+"\n")
					s = s[k:]
				}
				in = false
				out = append(out, l)
			case in:
				b64.WriteString(strings.TrimSuffix(l, "\n"))
			default:
				out = append(out, l)
			}
		}
		return out
	}
}

// postReceivePack sends body as a receive-pack request to url (basic
// credentials when user is set) and returns the status and response.
func postReceivePack(t *testing.T, url, user, pass string, body []byte) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-git-receive-pack-request")
	if user != "" {
		req.SetBasicAuth(user, pass)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(out)
}

// TestServeSignedPushReplay: alice's signed push over HTTP, recorded on the
// way; after the branch is deleted the same request, sent again as it was,
// with a whitespace pkt-line after the armor, or with the armor wrapped
// otherwise, recreates nothing — anonymously (serve refuses it before
// receive-pack) or with another member's token (the hook refuses it).
// Signed once by stock ssh-keygen and once by git+ as gpg.ssh.program.
func TestServeSignedPushReplay(t *testing.T) {
	t.Parallel()
	w := newE2E(t, map[string][]string{"alice": {"source.push"}, "bob": {"source.push"}})
	root := filepath.Dir(w.origin)
	s := startServe(t, w.bin, w.env, root)
	bobToken := strings.TrimSpace(w.mustGP("", root, "", "--repo", w.origin, "member", "token", "issue", "bob"))
	proxy := newRecordingProxy(t, s.URL)
	endpoint := s.URL + "/origin.git/git-receive-pack"

	clone := filepath.Join(t.TempDir(), "c")
	w.git(root, "clone", "-q", proxy.URL+"/origin.git", clone)
	signClone(t, clone, w.keys["alice"].Path, w.bin)
	programs := []string{w.bin}
	if kg, err := exec.LookPath("ssh-keygen"); err == nil {
		programs = append([]string{kg}, programs...)
	} else {
		t.Log("no ssh-keygen: signing with git+ only")
	}
	for i, program := range programs {
		branch := fmt.Sprintf("refs/heads/feat%d", i)
		w.git(clone, "config", "gpg.ssh.program", program)
		w.git(clone, "commit", "-q", "--allow-empty", "-m", branch)
		head := w.git(clone, "rev-parse", "HEAD")
		if _, errs, err := w.gitRun(clone, "", nil, "push", "--signed", "origin", "HEAD:"+branch); err != nil {
			t.Fatalf("%s: alice's signed push: %v\n%s", program, err, errs)
		}
		if got := w.ref(branch); got != head {
			t.Fatalf("%s: %s = %q after alice's push, want %s", program, branch, got, head)
		}
		body := proxy.last(t)
		// What git sent is the canonical armor (the hook took it).
		if !bytes.Contains(body, []byte("-----END SSH SIGNATURE-----\n")) {
			t.Fatalf("%s: the recorded body holds no SSH signature", program)
		}
		w.git(w.origin, "update-ref", "-d", branch)

		variants := map[string][]byte{
			"as recorded": body,
			"whitespace pkt-line before push-cert-end": reencode(t, body, func(l []string) []string { return append(l, " \n") }),
			"armor wrapped at 64":                      reencode(t, body, rewrapArmor(64)),
			"armor wrapped at 76":                      reencode(t, body, rewrapArmor(76)),
		}
		if bytes.Equal(variants["armor wrapped at 64"], body) || bytes.Equal(variants["whitespace pkt-line before push-cert-end"], body) {
			t.Fatalf("%s: a re-encoded body is the recorded one", program)
		}
		for name, replay := range variants {
			for _, who := range []string{"", "bob"} {
				before := w.refs()
				var status int
				var resp string
				if who == "" {
					status, resp = postReceivePack(t, endpoint, "", "", replay)
				} else {
					status, resp = postReceivePack(t, endpoint, "bob", bobToken, replay)
				}
				refused := status >= 400 && status < 500 ||
					strings.Contains(resp, "[push-cert-nonce]") || strings.Contains(resp, "[bad-push-cert]")
				if !refused {
					t.Errorf("%s: replay %s (token %q): HTTP %d, not refused:\n%s", program, name, who, status, resp)
				}
				if who == "bob" && status != http.StatusOK {
					t.Errorf("%s: replay %s with bob's token: HTTP %d; want the hook's refusal", program, name, status)
				}
				if after := w.refs(); after != before {
					t.Errorf("%s: replay %s (token %q) changed refs:\nbefore:\n%s\nafter:\n%s", program, name, who, before, after)
				}
			}
		}
		if got := w.ref(branch); got != "" {
			t.Fatalf("%s: %s was recreated at %s by a replay", program, branch, got)
		}
	}
}

// emptyPack is a pack with no objects.
func emptyPack() []byte {
	p := []byte("PACK\x00\x00\x00\x02\x00\x00\x00\x00")
	sum := sha1.Sum(p)
	return append(p, sum[:]...)
}

// TestServeEmptyCertificate: a body that opens with push-cert but whose
// certificate is empty or unsigned, with plain commands after it, is a 401
// and never reaches receive-pack, even where the rules do not require a
// known pusher (the hook would take the unsigned commands).
func TestServeEmptyCertificate(t *testing.T) {
	t.Parallel()
	w := newE2E(t, map[string][]string{"alice": {"source.push"}})
	w.mustGP("admin", w.origin, `{"requireKnownPusher":false}`, "rules", "set", "-")
	root := filepath.Dir(w.origin)
	s := startServe(t, w.bin, w.env, root)
	endpoint := s.URL + "/origin.git/git-receive-pack"
	hub := w.ref("refs/hub/trust")
	pkt := func(p string) string { return fmt.Sprintf("%04x%s", len(p)+4, p) }
	zero := strings.Repeat("0", 40)
	cmd := zero + " " + hub + " refs/heads/anon"
	caps := "report-status side-band-64k object-format=sha1"
	unsigned := "certificate version 0.1\npusher x 1700000000 +0000\nnonce 1-x\n\n" + cmd + "\n"
	for name, head := range map[string]string{
		"empty certificate, commands after": pkt("push-cert\x00"+caps) + pkt("push-cert-end\n") + pkt(cmd+"\n") + "0000",
		"unsigned certificate":              pkt("push-cert\x00"+caps) + pkt(unsigned) + pkt("push-cert-end\n") + "0000",
		"certificate cut by a flush":        pkt("push-cert\x00"+caps) + "0000" + pkt(cmd+"\n") + "0000",
	} {
		before := w.refs()
		status, resp := postReceivePack(t, endpoint, "", "", append([]byte(head), emptyPack()...))
		if status != http.StatusUnauthorized {
			t.Errorf("%s: HTTP %d, want 401:\n%s", name, status, resp)
		}
		if after := w.refs(); after != before {
			t.Errorf("%s: refs changed:\nbefore:\n%s\nafter:\n%s", name, before, after)
		}
	}
	// The same command unsigned, without a certificate: a 401, as before.
	status, _ := postReceivePack(t, endpoint, "", "", append([]byte(pkt(cmd+"\x00"+caps)+"0000"), emptyPack()...))
	if status != http.StatusUnauthorized {
		t.Errorf("an unsigned anonymous push: HTTP %d, want 401", status)
	}
}

// TestSignedPushRefusedThenRetried: a signed push the hook refuses for its
// content took no effect, so its certificate was not used: the same push
// again at once (within the same second receive-pack's nonce, and so the
// certificate's signed text, is the same) is judged again and refused for
// its content, never as a replay (receive/certrecord.go). Six pushes in a
// row put at least two in one second on any but a very slow machine; the
// record was kept before, and the second was refused [push-cert-nonce].
func TestSignedPushRefusedThenRetried(t *testing.T) {
	t.Parallel()
	w := newE2E(t, nil)
	w.mustGP("admin", w.work, `{"protected":{"refs/heads/main":{"requirePullRequest":true}}}`, "rules", "set", "-")
	c := w.commit(nil, map[string]string{"a": "1"}, "straight to main")
	for i := 0; i < 6; i++ {
		w.expectRefused(t, "refs/heads/main", "not-a-pr-head", "origin", c+":refs/heads/main")
	}
	// A push that took effect stays used: deleting the branch and sending
	// the same certificate again is a replay (TestServeSignedPushReplay
	// does it byte for byte over HTTP).
}
