package main

// End-to-end test of the web view git+ serve shows beside smart HTTP
// (docs/cli.md, "The page"): a queue with a landing, an eviction, a red
// candidate and entries waiting for different reasons, read over HTTP and
// in headless Chromium (Debian's chromium package). With CI set, a missing
// or broken Chromium fails the test; elsewhere a missing one skips it.
// GITPLUS_UPDATE_SCREENSHOT=1 writes the screenshot to docs/page.png.

import (
	"bytes"
	"context"
	"errors"
	"image/png"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gitplus/gitplus/fixtures"
	"github.com/gitplus/gitplus/hooks/webview"
	"github.com/gitplus/gitplus/hubrefs/queue"
	"github.com/gitplus/gitplus/receive"
)

const (
	evilTitle = `<script>alert("title")</script> & "quotes"`
	evilBody  = `<img src=x onerror=alert('body')><script>document.title="owned"</script>`
)

// pageScenario builds the queue the page shows; it returns the bare
// repository and the pull requests a (landed), b (evicted), c (red at the
// head of the queue), d (waiting for review, hostile title), e (waiting
// behind c for a candidate).
func pageScenario(t *testing.T, e *hubEnv) (bare string, ids map[string]string) {
	t.Helper()
	bare, clone := cliSetup(t, e)
	// dev pushes its branches (pr open --push): with requireKnownPusher on
	// (git+ init's default) that needs source.push.
	e.ok(bare, "admin", "member", "change", "dev", "--cap", "hub.pr", "--cap", "source.push")
	e.ok(bare, "q", "queue", "open", "--target", "main")
	ids = map[string]string{}
	titles := map[string]string{"a": "Add the parser", "b": "Speed up the cache", "c": "Document the API", "d": evilTitle, "e": "Tidy the build"}
	for _, n := range []string{"a", "b", "c", "d", "e"} {
		fixtures.Git(t, clone, "checkout", "-q", "-b", "feat-"+n, "main")
		writeCommit(t, clone, n+".txt", n+"\n", "feat "+n)
		body := "Pull request " + n
		if n == "d" {
			body = evilBody
		}
		ids[n] = lastLine(e.ok(clone, "dev", "pr", "open", "--base", "main", "--title", titles[n], "--body", body, "--push"))
		if n != "d" {
			e.ok(bare, "rev", "pr", "review", ids[n], "--approve", "--body", "Looks right.")
		}
		if n != "e" {
			e.ok(bare, "q", "queue", "enter", ids[n])
		}
	}
	e.ok(bare, "rev", "pr", "thread", ids["d"], "--open", "--body", `</td><script>alert("thread")</script>`)
	e.ok(bare, "admin", "queue", "run", "--target", "main") // candidates for a, b, c
	cand := func(n string) string {
		return fixtures.Git(t, bare, "rev-parse", queue.Branch("refs/heads/main", ids[n]))
	}
	e.ok(bare, "ci", "pr", "check", ids["a"], "--name", "ci", "--rev", cand("a"), "--conclusion", "success")
	e.ok(bare, "ci", "pr", "check", ids["b"], "--name", "ci", "--rev", cand("b"), "--conclusion", "failure", "--url", "http://ci.invalid/b")
	e.ok(bare, "admin", "queue", "run", "--target", "main") // lands a, evicts b, rebuilds c
	e.ok(bare, "ci", "pr", "check", ids["c"], "--name", "ci", "--rev", cand("c"), "--conclusion", "failure")
	e.ok(bare, "q", "queue", "enter", ids["e"])
	return bare, ids
}

func httpGet(t *testing.T, method, url string) (int, http.Header, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Accept", "text/html")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, resp.Header, string(b)
}

// inOrder reports whether every string of want occurs in s, in order.
func inOrder(s string, want ...string) bool {
	for _, w := range want {
		i := strings.Index(s, w)
		if i < 0 {
			return false
		}
		s = s[i+len(w):]
	}
	return true
}

func TestPage(t *testing.T) {
	t.Parallel()
	e := newHubEnv(t, "admin", "dev", "rev", "ci", "q")
	bare, ids := pageScenario(t, e)
	s := startServe(t, e.bin, fixtures.GitEnv(e.home), filepath.Dir(bare))
	repoURL := s.URL + "/" + filepath.Base(bare)
	sh := func(id string) string { return id[:12] }

	code, hdr, index := httpGet(t, "GET", repoURL+"/")
	if code != 200 || !strings.HasPrefix(hdr.Get("Content-Type"), "text/html") || !strings.Contains(hdr.Get("Content-Security-Policy"), "default-src 'none'") {
		t.Fatalf("GET %s/: %d %v\n%s", repoURL, code, hdr, index)
	}
	for _, want := range []string{
		`<meta http-equiv="refresh"`,
		"Queue for main", "main is red",
		"Recent landings", "Add the parser",
		"&lt;script&gt;alert(&#34;title&#34;)&lt;/script&gt; &amp; &#34;quotes&#34;",
	} {
		if !strings.Contains(index, want) {
			t.Fatalf("the index lacks %q:\n%s", want, index)
		}
	}
	// The queue in order, each with why it waits.
	if !inOrder(index, sh(ids["c"]), "red: ci failure on candidate", sh(ids["d"]), "waiting for review: has 0 of 1 required approvals", sh(ids["e"]), "no candidate yet", "behind #1") {
		t.Fatalf("the queue is not c (red), d (review), e (behind):\n%s", index)
	}
	if !inOrder(index, "recently left", sh(ids["b"]), "failed", sh(ids["a"]), "landed") {
		t.Fatalf("the queue's departures are not b (failed) then a (landed):\n%s", index)
	}
	if strings.Contains(strings.ToLower(index), "<script") || strings.Contains(index, "<img") {
		t.Fatalf("markup from a title or body reached the page:\n%s", index)
	}

	code, _, page := httpGet(t, "GET", repoURL+"/pr/"+ids["d"][:13])
	if code != 200 {
		t.Fatalf("GET pr/%s: %d\n%s", ids["d"][:13], code, page)
	}
	for _, want := range []string{"&lt;img src=x onerror=alert(&#39;body&#39;)&gt;", "&lt;/td&gt;&lt;script&gt;alert(&#34;thread&#34;)&lt;/script&gt;", "Timeline", "#2 in the queue for main"} {
		if !strings.Contains(page, want) {
			t.Fatalf("the pull request page lacks %q:\n%s", want, page)
		}
	}
	if strings.Contains(strings.ToLower(page), "<script") || strings.Contains(page, "<img") {
		t.Fatalf("markup from a title or body reached the pull request page:\n%s", page)
	}
	_, _, pageB := httpGet(t, "GET", repoURL+"/pr/"+ids["b"])
	if !strings.Contains(pageB, "left the queue for main") || !strings.Contains(pageB, "failed") || !strings.Contains(pageB, "http://ci.invalid/b") {
		t.Fatalf("the evicted pull request's page does not say why:\n%s", pageB)
	}
	if code, _, _ := httpGet(t, "GET", repoURL+"/pr/ffffffff"); code != 404 {
		t.Fatalf("an unknown pull request: %d, want 404", code)
	}
	if code, _, _ := httpGet(t, "POST", repoURL+"/"); code != 405 {
		t.Fatalf("POST: %d, want 405", code)
	}
	if code, _, _ := httpGet(t, "GET", s.URL+"/nope.git/"); code != 404 {
		t.Fatalf("a path that is no repository: %d, want 404", code)
	}
	// Smart HTTP still answers at the same URL.
	if out := fixtures.Git(t, t.TempDir(), "ls-remote", repoURL, "refs/heads/main"); !strings.Contains(out, fixtures.Git(t, bare, "rev-parse", "main")) {
		t.Fatalf("git ls-remote through git+ serve: %q", out)
	}

	chromiumChecks(t, repoURL, ids)
}

// chromium runs Debian's chromium headless on url with args.
func chromium(t *testing.T, args ...string) string {
	t.Helper()
	bin, err := exec.LookPath("chromium")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("chromium is not installed (CI must have it: .ci/run installs Debian's chromium): %v", err)
		}
		t.Skipf("chromium is not installed (apt-get install chromium): %v", err)
	}
	// A browser that dies of a signal (headless Chromium has crashed with
	// SIGSEGV on a loaded 2-CPU machine) says nothing about the page: run
	// it again, up to three times in all. Any other failure fails at once.
	for attempt := 1; ; attempt++ {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute) // a hang guard, not a measure
		base := []string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
			"--disable-component-update", "--disable-sync", "--user-data-dir=" + t.TempDir()}
		cmd := exec.CommandContext(ctx, bin, append(base, args...)...)
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		err := cmd.Run()
		cancel()
		if err == nil {
			return out.String()
		}
		var ee *exec.ExitError
		crashed := errors.As(err, &ee) && ctx.Err() == nil && ee.ProcessState.Sys().(syscall.WaitStatus).Signaled()
		if !crashed || attempt == 3 {
			t.Fatalf("chromium %s (attempt %d): %v\n%s", strings.Join(args, " "), attempt, err, errb.String())
		}
		t.Logf("chromium died of a signal (attempt %d), running it again: %v", attempt, err)
	}
}

func chromiumChecks(t *testing.T, repoURL string, ids map[string]string) {
	dom := chromium(t, "--dump-dom", repoURL+"/")
	if !strings.Contains(dom, "Queue for main") || !strings.Contains(dom, "Document the API") {
		t.Fatalf("chromium's DOM of the index lacks the queue:\n%s", dom)
	}
	// The hostile title is text in the DOM, not an element; no script ran
	// (it would have replaced the document's title).
	if strings.Contains(strings.ToLower(dom), "<script") || strings.Contains(dom, "<img") || !strings.Contains(dom, `&lt;script&gt;alert("title")&lt;/script&gt;`) {
		t.Fatalf("chromium's DOM holds markup from a title:\n%s", dom)
	}
	dom = chromium(t, "--dump-dom", repoURL+"/pr/"+ids["d"])
	if strings.Contains(strings.ToLower(dom), "<script") || strings.Contains(dom, "<img") || strings.Contains(dom, "<title>owned") || !strings.Contains(dom, "onerror=alert") {
		t.Fatalf("chromium's DOM of the pull request holds markup from its body:\n%s", dom)
	}

	shot := filepath.Join(t.TempDir(), "page.png")
	chromium(t, "--screenshot="+shot, "--window-size=1280,1760", "--hide-scrollbars", repoURL+"/")
	data, err := os.ReadFile(shot)
	if err != nil {
		t.Fatalf("chromium wrote no screenshot: %v", err)
	}
	img, err := png.Decode(bytes.NewReader(data))
	if err != nil || img.Bounds().Dx() != 1280 {
		t.Fatalf("the screenshot is not a 1280-wide PNG: %v", err)
	}
	if os.Getenv("GITPLUS_UPDATE_SCREENSHOT") != "" {
		if err := os.WriteFile(filepath.Join("..", "..", "docs", "page.png"), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestPageCacheSameAsCold: the page reads through the fold cache
// (hooks/webview Load); what it shows from cached logs and states is what
// it shows from the objects alone, the cache removed.
func TestPageCacheSameAsCold(t *testing.T) {
	t.Parallel()
	e := newHubEnv(t, "admin", "dev", "rev", "ci", "q")
	bare, ids := pageScenario(t, e)
	h := webview.Repo(bare, "/")
	get := func(path string) string {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest("GET", path, nil))
		if rec.Code != 200 {
			t.Fatalf("GET %s: %d\n%s", path, rec.Code, rec.Body.String())
		}
		// The footer says when the records were read.
		return regexp.MustCompile(`(?s)<footer>.*</footer>`).ReplaceAllString(rec.Body.String(), "")
	}
	paths := []string{"/"}
	for _, id := range ids {
		paths = append(paths, "/pr/"+id)
	}
	cacheDir := filepath.Join(bare, filepath.FromSlash(receive.FoldCacheDir))
	for _, path := range paths {
		if err := os.RemoveAll(cacheDir); err != nil {
			t.Fatal(err)
		}
		cold := get(path)
		if entries, _ := os.ReadDir(cacheDir); len(entries) == 0 {
			t.Fatalf("GET %s stored nothing in the fold cache", path)
		}
		if warm := get(path); warm != cold {
			t.Fatalf("GET %s from the fold cache differs from the cold read:\ncold:\n%s\nwarm:\n%s", path, cold, warm)
		}
	}
}
