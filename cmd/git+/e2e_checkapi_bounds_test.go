package main

// A refused check append leaves nothing behind, and the check endpoints
// are bounded in size and rate per client (docs/serving.md, "Recording a
// check without git+", "Bounds"), driven as the attacker would: plain HTTP
// requests to a running git+ serve, events signed with their own keys.

import (
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// objectsSnapshot lists every directory and file under dir's objects/,
// with each file's size, and counts the loose objects and packs.
func objectsSnapshot(t *testing.T, dir string) (listing string, loose, packs int) {
	t.Helper()
	root := filepath.Join(dir, "objects")
	var lines []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		if d.IsDir() {
			lines = append(lines, rel+"/")
			return nil
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		lines = append(lines, fmt.Sprintf("%s %d", rel, fi.Size()))
		switch {
		case len(filepath.Base(filepath.Dir(p))) == 2 && filepath.Dir(filepath.Dir(p)) == root:
			loose++
		case strings.HasSuffix(p, ".pack"):
			packs++
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(lines)
	return strings.Join(lines, "\n"), loose, packs
}

// checkClient is a CI job (or an attacker) talking to the check endpoints
// of one repository with its own key.
type checkClient struct {
	t   *testing.T
	w   *e2e
	url string // http://HOST/origin.git
}

// prepare asks for the event to sign; it must be answered 200.
func (c checkClient) prepare(pr, head, member, url string) []byte {
	c.t.Helper()
	body, _ := json.Marshal(map[string]string{"pr": pr, "name": "ci", "head": head, "conclusion": "success", "member": member, "url": url})
	resp, err := http.Post(c.url+"/hub/checks/prepare", "application/json", bytes.NewReader(body))
	if err != nil {
		c.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		c.t.Fatalf("prepare: %s\n%s", resp.Status, b)
	}
	return b
}

// append signs event with key's own key and sends it.
func (c checkClient) append(pr string, event []byte, key string) answer {
	c.t.Helper()
	sig, err := c.w.signer(key).Sign(event)
	if err != nil {
		c.t.Fatal(err)
	}
	ctype, form := appendForm(c.t, pr, event, sig)
	return checkProbe(c.t, "POST", c.url+"/hub/checks/append", "", "", ctype, form)
}

// TestServeRefusedCheckAppendLeavesNothing: 20 appends of 44 KiB events by
// a stranger (own key, no member, no token) and one by a member without
// hub.check:ci are answered 403 [not-member] / [missing-capability], and
// one by a member holding it whose event the hook refuses (over the rules'
// event ceiling) 403 with the hook's line; after each, the object directory
// is byte for byte what it was: no loose object, no pack, no directory. An
// accepted append then does write.
func TestServeRefusedCheckAppendLeavesNothing(t *testing.T) {
	t.Parallel()
	w := newE2E(t, map[string][]string{"dev": {"hub.pr"}, "ci": {"hub.check:ci"}}, "stranger")
	base := w.commit(nil, map[string]string{"base.txt": "base\n"}, "base")
	h := w.commit([]string{base}, map[string]string{"f.txt": "f\n"}, "f")
	p := w.localPR("dev", "refs/heads/main", h)
	if out, err := w.push("origin", base+":refs/heads/main", h+":refs/heads/f", p.tip+":"+p.Ref()); err != nil {
		t.Fatalf("push: %v\n%s", err, out)
	}
	s := startServe(t, w.bin, w.env, filepath.Dir(w.origin))
	c := checkClient{t: t, w: w, url: s.URL + "/origin.git"}
	// A 44 KiB event that does not compress, another each time.
	big := func() string {
		b := make([]byte, 33<<10)
		rand.Read(b)
		return "https://ci.example/" + base64.RawURLEncoding.EncodeToString(b)
	}

	before, loose, packs := objectsSnapshot(t, w.origin)
	refs := w.refs()
	for i := 0; i < 20; i++ {
		got := c.append(p.ID, c.prepare(p.ID, h, "stranger", big()), "stranger")
		if got.Status != http.StatusForbidden || !strings.Contains(got.Body, "git+: refused "+p.Ref()+": [not-member]") {
			t.Fatalf("stranger's append %d: %d %q", i+1, got.Status, got.Body)
		}
	}
	if got := c.append(p.ID, c.prepare(p.ID, h, "dev", big()), "dev"); got.Status != http.StatusForbidden || !strings.Contains(got.Body, "[missing-capability]") {
		t.Fatalf("dev's append (no hub.check:ci): %d %q", got.Status, got.Body)
	}
	after, looseAfter, packsAfter := objectsSnapshot(t, w.origin)
	t.Logf("objects: %d loose, %d packs before; %d loose, %d packs after 21 refused appends", loose, packs, looseAfter, packsAfter)
	if after != before {
		t.Fatalf("refused appends changed the object directory:\nbefore:\n%s\nafter:\n%s", before, after)
	}
	if got := w.refs(); got != refs {
		t.Fatalf("refused appends moved refs:\n%s\n---\n%s", refs, got)
	}

	// A signer serve lets through, refused by the hook: rules whose event
	// ceiling the event is over. receive-pack's quarantine takes the
	// object with it.
	rules := filepath.Join(t.TempDir(), "rules.json")
	if err := os.WriteFile(rules, []byte(`{"requireKnownPusher":true,"ceilings":{"eventBytes":4096}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	w.mustGP("admin", w.work, "", "--repo", w.origin, "rules", "set", rules)
	before, _, _ = objectsSnapshot(t, w.origin)
	refs = w.refs()
	if got := c.append(p.ID, c.prepare(p.ID, h, "ci", big()), "ci"); got.Status != http.StatusForbidden || !strings.Contains(got.Body, "git+: refused "+p.Ref()+": [hub-ceiling]") {
		t.Fatalf("ci's append over the event ceiling: %d %q", got.Status, got.Body)
	}
	if after, _, _ := objectsSnapshot(t, w.origin); after != before {
		t.Fatalf("an append the hook refused changed the object directory:\nbefore:\n%s\nafter:\n%s", before, after)
	}
	if got := w.refs(); got != refs {
		t.Fatalf("a refused append moved refs:\n%s\n---\n%s", refs, got)
	}

	// An accepted append writes its event (the snapshot sees a write).
	got := c.append(p.ID, c.prepare(p.ID, h, "ci", "https://ci.example/1"), "ci")
	if got.Status != http.StatusOK || !strings.Contains(got.Body, `"ref":"`+p.Ref()+`"`) {
		t.Fatalf("ci's append: %d %q", got.Status, got.Body)
	}
	if now, _, _ := objectsSnapshot(t, w.origin); now == before {
		t.Fatal("an accepted append left the object directory as it was: the snapshot cannot see a write")
	}
	if got := prChecks(t, w, p.Ref()); strings.Join(got, "|") != "check.completed success" {
		t.Fatalf("checks on the pull request: %q", got)
	}
}

// TestServeCheckAPIBounds: a request over the size bound is answered 413
// (declared or streamed), and a client over --check-rate 429 with
// Retry-After, for a served and a missing repository alike; none of it
// writes anything.
func TestServeCheckAPIBounds(t *testing.T) {
	t.Parallel()
	w := newE2E(t, map[string][]string{"dev": {"hub.pr"}, "ci": {"hub.check:ci"}})
	base := w.commit(nil, map[string]string{"base.txt": "base\n"}, "base")
	h := w.commit([]string{base}, map[string]string{"f.txt": "f\n"}, "f")
	p := w.localPR("dev", "refs/heads/main", h)
	if out, err := w.push("origin", base+":refs/heads/main", h+":refs/heads/f", p.tip+":"+p.Ref()); err != nil {
		t.Fatalf("push: %v\n%s", err, out)
	}
	// Four requests an hour: no token comes back during the test.
	s := startServe(t, w.bin, w.env, filepath.Dir(w.origin), "--check-rate", "4/1h")
	c := checkClient{t: t, w: w, url: s.URL + "/origin.git"}
	before, _, _ := objectsSnapshot(t, w.origin)
	refs := w.refs()
	huge := bytes.Repeat([]byte("x"), 200<<10)

	// 1: declared too large.
	if got := checkProbe(t, "POST", c.url+"/hub/checks/prepare", "", "", "application/json", huge); got.Status != http.StatusRequestEntityTooLarge || !strings.Contains(got.Body, "at most 98304 bytes") {
		t.Fatalf("a 200 KiB prepare: %d %q", got.Status, got.Body)
	}
	// 2: streamed (no Content-Length), too large: a well-formed form
	// whose event is 200 KiB.
	ctype, form := appendForm(t, p.ID, huge, []byte("sig"))
	req, _ := http.NewRequest("POST", c.url+"/hub/checks/append", io.MultiReader(bytes.NewReader(form)))
	req.Header.Set("Content-Type", ctype)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusRequestEntityTooLarge {
		t.Fatalf("a streamed 200 KiB append: %s %q", resp.Status, b)
	}
	// 3 and 4: within the rate.
	c.prepare(p.ID, h, "ci", "")
	if got := checkProbe(t, "POST", s.URL+"/absent.git/hub/checks/prepare", "", "", "application/json", []byte("{}")); got.Status != http.StatusNotFound {
		t.Fatalf("prepare on a missing repository: %d %q", got.Status, got.Body)
	}
	// 5 and 6: over it, for any path.
	for _, url := range []string{c.url + "/hub/checks/prepare", s.URL + "/absent.git/hub/checks/append"} {
		req, _ := http.NewRequest("POST", url, strings.NewReader("{}"))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		retry, _ := strconv.Atoi(resp.Header.Get("Retry-After"))
		if resp.StatusCode != http.StatusTooManyRequests || retry < 1 || retry > 3600 || !strings.Contains(string(b), "--check-rate") {
			t.Fatalf("POST %s over the rate: %s Retry-After %q %q", url, resp.Status, resp.Header.Get("Retry-After"), b)
		}
	}
	if after, _, _ := objectsSnapshot(t, w.origin); after != before {
		t.Fatalf("bounded requests changed the object directory:\nbefore:\n%s\nafter:\n%s", before, after)
	}
	if got := w.refs(); got != refs {
		t.Fatalf("bounded requests moved refs:\n%s\n---\n%s", refs, got)
	}
	if log := readFile(s.Log); strings.Count(log, "over the check API's rate") != 1 {
		t.Errorf("the server should log a client going over the rate once:\n%s", log)
	}
}
