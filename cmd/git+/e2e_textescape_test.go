package main

// Record text never reaches a terminal as control sequences (docs/cli.md,
// "Text on a terminal"): driven as the attacker would, over git+ serve from
// clones of their own.

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/gitplus/gitplus/hubrefs"
)

// terminalActs lists what in s a terminal would act on instead of showing:
// a C0 control but newline and tab, DEL, a C1 control, a bidirectional
// embedding, override or isolate, or a byte that is not UTF-8. Written here
// from the terminal's side, not from the package that escapes.
func terminalActs(s string) []string {
	var bad []string
	for i, r := range s {
		switch {
		case r == utf8.RuneError:
			if _, n := utf8.DecodeRuneInString(s[i:]); n == 1 {
				bad = append(bad, fmt.Sprintf("byte %#x at %d", s[i], i))
			}
		case r < 0x20 && r != '\n' && r != '\t', r == 0x7f, r >= 0x80 && r <= 0x9f,
			r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069:
			bad = append(bad, fmt.Sprintf("%U at %d", r, i))
		}
	}
	return bad
}

// TestServeRecordTextEscaped: an author and an accomplice write ESC, CR,
// BEL, DEL, a C1 CSI and a right-to-left override into a pull request's
// body, a review, a thread, a check's URL and (through the pull request's
// own test) the check's recorded output; a reviewer's pr show and pr list
// show every one of them escaped, their --json keeps the exact text, and a
// title carrying one is refused, by the verb and by the hook.
func TestServeRecordTextEscaped(t *testing.T) {
	t.Parallel()
	w := newE2E(t, map[string][]string{"mal": {"hub.pr", "source.push"}, "pal": {"hub.review"}, "ci": {"hub.check:ci"}, "rev": {"hub.review"}})
	base := w.commit(nil, map[string]string{"base.txt": "base\n"}, "base")
	if out, err := w.push("origin", base+":refs/heads/main"); err != nil {
		t.Fatalf("push main: %v\n%s", err, out)
	}
	s := startServe(t, w.bin, w.env, filepath.Dir(w.origin))
	clone := func(who string) string {
		dir := filepath.Join(t.TempDir(), who)
		w.git(t.TempDir(), "clone", "-q", s.URL+"/origin.git", dir)
		return dir
	}

	// What the author wants the reviewer to see: "approvals: 2" drawn over
	// the real line, a failed check redrawn as success, text reversed.
	const (
		body    = "Small fix.\x1b[1A\x1b[2K\rapprovals: 2 alice, bob\x07\x7f"
		review  = "lgtm\x1b[2J\x1b[H\u009b32mchecks: all green"
		thread  = "see \u202etxt.exe\u202c and C:\\dir \\x1b stays text"
		url     = "https://ci.example/run/1\x1b]8;;https://evil.example\x07"
		testOut = "\x1b[2K\rci: success\n\x1b]0;pwned\x07"
	)
	mal := clone("mal")
	w.git(mal, "checkout", "-q", "-b", "feat")
	script := "printf '\\033[2K\\rci: success\\n\\033]0;pwned\\007'\nexit 1\n"
	if err := os.WriteFile(filepath.Join(mal, "test.sh"), []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
	w.git(mal, "add", "test.sh")
	w.git(mal, "-c", "user.name=mal", "-c", "user.email=mal@example", "commit", "-q", "-m", "feat")
	head := w.git(mal, "rev-parse", "HEAD")

	id := e2eLastLine(w.mustGP("mal", mal, "", "pr", "open", "--base", "main", "--title", "Small fix", "--body", body, "--push"))

	// A title with a control character: the verb refuses it and writes
	// nothing.
	before := w.refs()
	if out, errs, code := w.gp("mal", mal, "", "pr", "open", "--base", "main", "--title", "ok\x1b[1A"); code != 1 || !strings.Contains(errs, "title") {
		t.Fatalf("pr open with ESC in the title: exit %d\n%s%s", code, out, errs)
	}
	if after := w.refs(); after != before {
		t.Fatalf("a refused pr open moved refs:\n%s\n---\n%s", before, after)
	}
	ref := hubrefs.PRRefPrefix + id
	w.mustGP("pal", clone("pal"), "", "pr", "review", id, "--comment", "--body", review)
	w.mustGP("mal", mal, "", "pr", "thread", id, "--open", "--body", thread)
	ci := clone("ci")
	if out, errs, code := w.gp("ci", ci, "", "check", "run", "--pr", id, "--rev", head, "--name", "ci", "--url", url, "--", "sh", "test.sh"); code != 1 {
		t.Fatalf("check run of the failing test: exit %d\n%s%s", code, out, errs)
	}

	// The same title written by hand and pushed over HTTP (a signed push
	// by mal): the hook refuses it with the code of an invalid event.
	signClone(t, mal, w.keys["mal"].Path, w.bin)
	evil := uuid.Must(uuid.NewV7()).String()
	raw, err := hubrefs.EncodeEvent(hubrefs.PROpened{Base: w.base(hubrefs.TypePROpened), ID: evil, BaseRef: "refs/heads/main", Head: head,
		Title: "fine\x1b[2K\rapproved"}, nil, "mal", time.Now(), w.signer("mal"))
	if err != nil {
		t.Fatal(err)
	}
	ev := w.gitIn(mal, string(raw), "hash-object", "-w", "-t", "commit", "--stdin")
	before = w.refs()
	out, errs, err := w.gitRun(mal, "", nil, "push", "origin", ev+":"+hubrefs.PRRefPrefix+evil)
	if err == nil || !strings.Contains(errs, "git+: refused "+hubrefs.PRRefPrefix+evil+": [hub-malformed]") {
		t.Fatalf("a pushed pr.opened with ESC in its title: %v\n%s%s", err, out, errs)
	}
	if after := w.refs(); after != before {
		t.Fatalf("the refused title moved refs:\n%s\n---\n%s", before, after)
	}

	// The reviewer reads it all in a clone of their own.
	rv := clone("rev")
	show, showErr := w.mustGPBoth("rev", rv, "pr", "show", id)
	list, listErr := w.mustGPBoth("rev", rv, "pr", "list")
	for name, text := range map[string]string{"pr show": show, "pr show's stderr": showErr, "pr list": list, "pr list's stderr": listErr} {
		if bad := terminalActs(text); len(bad) > 0 {
			t.Errorf("%s writes what a terminal acts on: %v\n%q", name, bad, text)
		}
	}
	for _, want := range []string{
		`Small fix.\x1b[1A\x1b[2K\rapprovals: 2 alice, bob\a\x7f`,
		`lgtm\x1b[2J\x1b[H\u009b32mchecks: all green`,
		`see \u202etxt.exe\u202c and C:\dir \\x1b stays text`,
		`https://ci.example/run/1\x1b]8;;https://evil.example\a`,
		`\x1b[2K\rci: success`,
		`\x1b]0;pwned\a`,
	} {
		if !strings.Contains(show, want) {
			t.Errorf("pr show does not show %s:\n%s", want, show)
		}
	}
	if !strings.Contains(list, id) || !strings.Contains(list, "Small fix") {
		t.Errorf("pr list does not list the pull request:\n%s", list)
	}

	// --json keeps the exact text (JSON escapes only).
	js, _ := w.mustGPBoth("rev", rv, "pr", "show", id, "--json")
	if bad := terminalActs(js); len(bad) > 0 {
		t.Errorf("pr show --json writes what a terminal acts on: %v", bad)
	}
	var v struct {
		Body    string
		Reviews []struct{ Body string }
		Threads []struct{ Body string }
		Runs    []struct{ URL, Output string }
	}
	if err := json.Unmarshal([]byte(js), &v); err != nil {
		t.Fatalf("pr show --json is not JSON: %v\n%s", err, js)
	}
	if v.Body != body || len(v.Reviews) != 1 || v.Reviews[0].Body != review || len(v.Threads) != 1 || v.Threads[0].Body != thread {
		t.Errorf("pr show --json changed the text: %+v", v)
	}
	var run struct{ URL, Output string }
	for _, r := range v.Runs {
		if r.Output != "" {
			run = r
		}
	}
	if run.URL != url || !strings.Contains(run.Output, testOut) {
		t.Errorf("pr show --json's check run: url %q output %q", run.URL, run.Output)
	}
	lj, _ := w.mustGPBoth("rev", rv, "pr", "list", "--json")
	var prs []struct{ ID, Title string }
	if err := json.Unmarshal([]byte(lj), &prs); err != nil || len(prs) != 1 || prs[0].ID != id {
		t.Fatalf("pr list --json: %v\n%s", err, lj)
	}
	if got := w.ref(ref); got == "" {
		t.Fatalf("%s is not in the repository", ref)
	}
}

// mustGPBoth runs git+ signing with key in dir and returns its standard
// output and error; it must exit 0.
func (w *e2e) mustGPBoth(key, dir string, args ...string) (string, string) {
	w.t.Helper()
	out, errs, code := w.gp(key, dir, "", args...)
	if code != 0 {
		w.t.Fatalf("git+ %s: exit %d\nstdout: %s\nstderr: %s", strings.Join(args, " "), code, out, errs)
	}
	return out, errs
}
