package main

// Helpers for end-to-end tests: the built binary, real bare repositories
// with the hooks installed, a work clone pushing to them with plain git, and
// events written with hubrefs (crafted ones included).

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/google/uuid"

	"github.com/gitplus/gitplus/fixtures"
	"github.com/gitplus/gitplus/hooks/install"
	"github.com/gitplus/gitplus/hubrefs"
	"github.com/gitplus/gitplus/hubrefs/sshsign"
)

// e2e is one world: a bare repository initialised by git+ and a clone.
type e2e struct {
	t      *testing.T
	bin    string
	home   string
	env    []string
	keys   map[string]fixtures.Key
	origin string // the bare repository (hooks installed)
	work   string // a clone of origin with a work tree
	repoID string
}

func newE2E(t *testing.T, members map[string][]string, extraKeys ...string) *e2e {
	t.Helper()
	w := &e2e{t: t, bin: fixtures.Binary(t), home: t.TempDir(), keys: map[string]fixtures.Key{}}
	w.env = fixtures.GitEnv(w.home)
	keyDir := t.TempDir()
	w.keys["admin"] = fixtures.NewKey(t, keyDir, "admin")
	for name := range members {
		w.keys[name] = fixtures.NewKey(t, keyDir, name)
	}
	for _, name := range extraKeys {
		w.keys[name] = fixtures.NewKey(t, keyDir, name)
	}
	root := t.TempDir()
	w.origin = filepath.Join(root, "origin.git")
	out := w.mustGP("admin", root, "", "init", "--admin", "admin", w.origin)
	w.repoID = strings.TrimSpace(out)
	if _, err := uuid.Parse(w.repoID); err != nil {
		t.Fatalf("git+ init printed %q, not a RepoID", out)
	}
	if _, err := os.Stat(filepath.Join(w.origin, "hooks", "pre-receive")); err != nil {
		t.Fatalf("git+ init did not install the pre-receive hook: %v", err)
	}
	names := make([]string, 0, len(members))
	for n := range members {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		args := []string{"--repo", w.origin, "member", "add", n, "--key", w.keys[n].Path + ".pub"}
		for _, c := range members[n] {
			args = append(args, "--cap", c)
		}
		w.mustGP("admin", root, "", args...)
	}
	w.work = filepath.Join(root, "work")
	w.git(root, "clone", "-q", w.origin, w.work)
	// git+ init requires a known pusher; the work clone signs its pushes
	// as the admin, so tests judge content as before (the pusher's own
	// tests are e2e_pusher_test.go).
	w.signPushes(w.work, "admin")
	return w
}

// signPushes configures the clone at dir to sign every push (if the
// receiver asks) with key's SSH key, through the git+ binary as the signer
// (docs/serving.md "git+ verbs identify themselves"). key "" unsets it.
func (w *e2e) signPushes(dir, key string) {
	w.t.Helper()
	if key == "" {
		for _, k := range []string{"push.gpgSign", "gpg.ssh.program", "user.signingKey", "gpg.format"} {
			w.gitRun(dir, "", nil, "config", "--unset", k)
		}
		return
	}
	signClone(w.t, dir, w.keys[key].Path, w.bin)
}

// signClone configures the clone at dir to sign its pushes (if asked) with
// the private key file keyPath, git+ (bin) signing.
func signClone(t testing.TB, dir, keyPath, bin string) {
	t.Helper()
	for _, kv := range [][2]string{{"gpg.format", "ssh"}, {"user.signingKey", keyPath},
		{"gpg.ssh.program", bin}, {"push.gpgSign", "if-asked"}} {
		fixtures.Git(t, dir, "config", kv[0], kv[1])
	}
}

// forcePreReceive rewrites the origin's pre-receive script to exec the lean
// git+hook binary (lean) or `git+ hook pre-receive`, whichever git+ hook
// install would have picked.
func (w *e2e) forcePreReceive(t *testing.T, lean bool) {
	t.Helper()
	run := "'" + w.bin + "' hook pre-receive"
	if lean {
		run = "'" + fixtures.HookBinary(t) + "' pre-receive"
	}
	script := "#!/bin/sh\n" + install.Marker + " (rewritten by the test to run one pre-receive command)\nexec " + run + "\n"
	if err := os.WriteFile(filepath.Join(w.origin, "hooks", "pre-receive"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
}

// gp runs the binary signing with key (a name in w.keys; "" for none).
func (w *e2e) gp(key, dir, stdin string, args ...string) (string, string, int) {
	w.t.Helper()
	cmd := exec.Command(w.bin, args...)
	cmd.Dir = dir
	cmd.Env = append([]string{}, w.env...)
	if key != "" {
		cmd.Env = append(cmd.Env, "GITPLUS_KEY="+w.keys[key].Path)
	}
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if err != nil {
		ee, ok := err.(*exec.ExitError)
		if !ok {
			w.t.Fatalf("git+ %s: %v", strings.Join(args, " "), err)
		}
		code = ee.ExitCode()
	}
	return out.String(), errb.String(), code
}

func (w *e2e) mustGP(key, dir, stdin string, args ...string) string {
	w.t.Helper()
	out, errs, code := w.gp(key, dir, stdin, args...)
	if code != 0 {
		w.t.Fatalf("git+ %s: exit %d\nstdout: %s\nstderr: %s", strings.Join(args, " "), code, out, errs)
	}
	return out
}

// gitRun runs git in dir with the world's environment.
func (w *e2e) gitRun(dir, stdin string, extraEnv []string, args ...string) (string, string, error) {
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(append([]string{}, w.env...), extraEnv...)
	if stdin != "" {
		cmd.Stdin = strings.NewReader(stdin)
	}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	return strings.TrimSpace(out.String()), errb.String(), err
}

func (w *e2e) git(dir string, args ...string) string {
	w.t.Helper()
	out, errs, err := w.gitRun(dir, "", nil, args...)
	if err != nil {
		w.t.Fatalf("git %s in %s: %v\n%s", strings.Join(args, " "), dir, err, errs)
	}
	return out
}

func (w *e2e) gitIn(dir, stdin string, args ...string) string {
	w.t.Helper()
	out, errs, err := w.gitRun(dir, stdin, nil, args...)
	if err != nil {
		w.t.Fatalf("git %s in %s: %v\n%s", strings.Join(args, " "), dir, err, errs)
	}
	return out
}

// refs snapshots every ref of the bare repository.
func (w *e2e) refs() string {
	w.t.Helper()
	return w.git(w.origin, "for-each-ref", "--format=%(objectname) %(refname)")
}

func (w *e2e) ref(name string) string {
	w.t.Helper()
	return w.git(w.origin, "for-each-ref", "--format=%(objectname)", name)
}

// commit writes a commit in the work clone with the given parents whose
// tree is the first parent's (or empty) with files added or replaced. It
// touches no ref, index or work tree, so it is safe in parallel subtests.
func (w *e2e) commit(parents []string, files map[string]string, msg string) string {
	w.t.Helper()
	idx := filepath.Join(w.t.TempDir(), "index")
	env := []string{"GIT_INDEX_FILE=" + idx}
	run := func(stdin string, args ...string) string {
		out, errs, err := w.gitRun(w.work, stdin, env, args...)
		if err != nil {
			w.t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, errs)
		}
		return out
	}
	if len(parents) > 0 {
		run("", "read-tree", parents[0])
	} else {
		run("", "read-tree", "--empty")
	}
	if len(files) > 0 {
		paths := make([]string, 0, len(files))
		for p := range files {
			paths = append(paths, p)
		}
		sort.Strings(paths)
		var info strings.Builder
		for _, p := range paths {
			blob := w.blob(files[p])
			fmt.Fprintf(&info, "100644 %s\t%s\n", blob, p)
		}
		run(info.String(), "update-index", "--add", "--index-info")
	}
	tree := run("", "write-tree")
	return w.commitTree(tree, parents, msg)
}

func (w *e2e) blob(content string) string {
	w.t.Helper()
	out, errs, err := w.gitRun(w.work, content, nil, "hash-object", "-w", "--stdin")
	if err != nil {
		w.t.Fatalf("hash-object: %v\n%s", err, errs)
	}
	return out
}

func (w *e2e) commitTree(tree string, parents []string, msg string) string {
	w.t.Helper()
	args := []string{"commit-tree", tree, "-m", msg}
	for _, p := range parents {
		args = append(args, "-p", p)
	}
	return w.git(w.work, args...)
}

// mergeTree is git's merge of two commits (the oracle our mergeTree matches).
func (w *e2e) mergeTree(ours, theirs string) string {
	w.t.Helper()
	return strings.Fields(w.git(w.work, "merge-tree", "--write-tree", ours, theirs))[0]
}

// candidate builds the candidate commit for merging head onto prev, as git
// merge --no-ff would (tree = the merge, parents [prev, head]).
func (w *e2e) candidate(prev, head, msg string) string {
	w.t.Helper()
	return w.commitTree(w.mergeTree(prev, head), []string{prev, head}, msg)
}

// treeOf returns the tree id of a commit.
func (w *e2e) treeOf(c string) string {
	w.t.Helper()
	return w.git(w.work, "rev-parse", c+"^{tree}")
}

func (w *e2e) signer(name string) hubrefs.Signer {
	return sshsign.NewSigner(w.keys[name].Signer)
}

// appendEvent appends payload to ref through the work clone's origin (the
// hooks judge it) and returns the event id.
func (w *e2e) appendEvent(key, ref string, payload any) plumbing.Hash {
	w.t.Helper()
	id, err := hubrefs.Append(context.Background(), hubrefs.AppendOptions{
		GitDir: w.work, Remote: "origin", Ref: ref, Payload: payload,
		Signer: w.signer(key), Name: key, Env: w.env,
	})
	if err != nil {
		w.t.Fatalf("appending %T to %s as %s: %v", payload, ref, key, err)
	}
	return id
}

func (w *e2e) base(typ string) hubrefs.Base { return hubrefs.Base{Type: typ, Repo: w.repoID} }

// prOpen opens a pull request on base (full ref) proposing head.
func (w *e2e) prOpen(key, base, head, title string) string {
	w.t.Helper()
	id := uuid.Must(uuid.NewV7()).String()
	w.appendEvent(key, hubrefs.PRRefPrefix+id, hubrefs.PROpened{
		Base: w.base(hubrefs.TypePROpened), ID: id, BaseRef: base, Head: head, Title: title})
	return id
}

// writeRaw stores raw commit bytes in the work clone (git hash-object
// --literally, so malformed content is kept as it is) and returns the id.
func (w *e2e) writeRaw(raw []byte) string {
	w.t.Helper()
	return w.gitIn(w.work, string(raw), "hash-object", "-w", "-t", "commit", "--literally", "--stdin")
}

// writeEvent encodes and signs an event (no judgement) into the work clone.
func (w *e2e) writeEvent(key string, payload any, parents ...string) string {
	w.t.Helper()
	var ps []plumbing.Hash
	for _, p := range parents {
		ps = append(ps, plumbing.NewHash(p))
	}
	raw, err := hubrefs.EncodeEvent(payload, ps, key, time.Now(), w.signer(key))
	if err != nil {
		w.t.Fatalf("encoding %T: %v", payload, err)
	}
	return w.writeRaw(raw)
}

// rawEvent builds an event commit's bytes by hand: message is written as
// given (after the blank line); signed by key unless key is "".
func (w *e2e) rawEvent(key string, parents []string, message string) []byte {
	w.t.Helper()
	var b strings.Builder
	fmt.Fprintf(&b, "tree %s\n", hubrefs.EmptyTree)
	for _, p := range parents {
		fmt.Fprintf(&b, "parent %s\n", p)
	}
	name := key
	if name == "" {
		name = "nobody"
	}
	fmt.Fprintf(&b, "author %s <%s@hub.invalid> %d +0000\n", name, name, time.Now().Unix())
	fmt.Fprintf(&b, "committer %s <%s@hub.invalid> %d +0000\n", name, name, time.Now().Unix())
	headers := b.String()
	body := "\n" + message
	if key == "" {
		return []byte(headers + body)
	}
	sig, err := w.signer(key).Sign([]byte(headers + body))
	if err != nil {
		w.t.Fatal(err)
	}
	lines := strings.Split(strings.TrimRight(string(sig), "\n"), "\n")
	return []byte(headers + "gpgsig " + strings.Join(lines, "\n ") + "\n" + body)
}

// push runs git push from the work clone and returns its combined output.
func (w *e2e) push(args ...string) (string, error) {
	w.t.Helper()
	out, errs, err := w.gitRun(w.work, "", nil, append([]string{"push", "--porcelain"}, args...)...)
	return out + "\n" + errs, err
}

// expectRefused pushes (args after `git push`), and checks the push failed,
// the hook printed a refusal with code for ref, and no ref of the bare
// repository changed.
func (w *e2e) expectRefused(t *testing.T, ref, code string, args ...string) {
	t.Helper()
	before := w.refs()
	out, err := w.push(args...)
	after := w.refs()
	if err == nil {
		t.Fatalf("git push %s succeeded; want refusal [%s]\n%s", strings.Join(args, " "), code, out)
	}
	want := fmt.Sprintf("git+: refused %s: [%s]", ref, code)
	if !strings.Contains(out, want) {
		t.Fatalf("git push %s: want %q in the output:\n%s", strings.Join(args, " "), want, out)
	}
	if before != after {
		t.Fatalf("git push %s was refused but refs changed:\nbefore:\n%s\nafter:\n%s", strings.Join(args, " "), before, after)
	}
}

// expectLanding pushes head onto ref and checks it is refused with code,
// or accepted when code is "". A refused signed push took no effect, so the
// same landing tried again at once is judged again (receive/certrecord.go).
func (w *e2e) expectLanding(t *testing.T, ref, head, code string) {
	t.Helper()
	if code == "" {
		w.expectAccepted(t, ref, head, "origin", head+":"+ref)
	} else {
		w.expectRefused(t, ref, code, "origin", head+":"+ref)
	}
}

// expectAccepted pushes and checks it succeeded and ref now holds want.
func (w *e2e) expectAccepted(t *testing.T, ref, want string, args ...string) {
	t.Helper()
	out, err := w.push(args...)
	if err != nil {
		t.Fatalf("git push %s refused: %v\n%s", strings.Join(args, " "), err, out)
	}
	if got := w.ref(ref); got != want {
		t.Fatalf("after git push %s: %s = %s, want %s\n%s", strings.Join(args, " "), ref, got, want, out)
	}
}

// localPR builds a pull request's events in the work clone without pushing
// them, so many pull requests reach the repository in one push (one hook
// run judging them all).
type localPR struct {
	w    *e2e
	ID   string
	Base string
	Head string
	tip  string
}

func (w *e2e) localPR(opener, base, head string) *localPR {
	w.t.Helper()
	p := &localPR{w: w, ID: uuid.Must(uuid.NewV7()).String(), Base: base, Head: head}
	p.tip = w.writeEvent(opener, hubrefs.PROpened{Base: w.base(hubrefs.TypePROpened), ID: p.ID, BaseRef: base, Head: head, Title: "pr " + head[:7]})
	return p
}

func (p *localPR) Ref() string { return hubrefs.PRRefPrefix + p.ID }

func (p *localPR) add(key string, payload any) *localPR {
	p.w.t.Helper()
	p.tip = p.w.writeEvent(key, payload, p.tip)
	return p
}

func (p *localPR) approve(key string) *localPR {
	return p.add(key, hubrefs.Review{Base: p.w.base(hubrefs.TypeReviewSubmit), Head: p.Head, BaseRef: p.Base, Verdict: "approve"})
}

func (p *localPR) pass(key string, revs ...string) *localPR {
	for _, r := range revs {
		p.add(key, hubrefs.Check{Base: p.w.base(hubrefs.TypeCheckCompleted), Name: "ci", Head: r, Conclusion: "success"})
	}
	return p
}

func (p *localPR) update(key, head string) *localPR {
	p.Head = head
	return p.add(key, hubrefs.PRUpdated{Base: p.w.base(hubrefs.TypePRUpdated), Head: head})
}

// pushPRs pushes every pull request's events in one git push through
// origin; the hook must accept them all.
func (w *e2e) pushPRs(prs ...*localPR) {
	w.t.Helper()
	args := []string{"origin"}
	for _, p := range prs {
		args = append(args, p.tip+":"+p.Ref())
	}
	if out, err := w.push(args...); err != nil {
		w.t.Fatalf("pushing %d pull requests: %v\n%s", len(prs), err, out)
	}
	w.git(w.work, "fetch", "-q", "origin", "+refs/hub/*:refs/hub/*")
}

// maintainBeside runs git's own maintenance (pack-refs --all, gc --auto:
// fixtures.Maintain) on gitDirs for the rest of the test, as a server runs
// it after pushes, and checks when the test ends that it ran: the
// concurrency tests hold with it beside them (docs/operating.md, "git's
// maintenance beside git+"). GITPLUS_NO_MAINTENANCE=1 turns it off.
func maintainBeside(t *testing.T, gitDirs ...string) {
	t.Helper()
	m := fixtures.Maintain(t, gitDirs...)
	t.Cleanup(func() {
		runs, errs := m.Stop()
		if runs == 0 && os.Getenv("GITPLUS_NO_MAINTENANCE") == "" {
			t.Error("git's maintenance never ran beside the test")
		}
		if len(errs) > 0 {
			t.Logf("git's maintenance failed %d time(s) beside the test (lost lock races are git's): %s", len(errs), errs[0])
		}
	})
}
