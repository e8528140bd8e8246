// Package demo is `git+ demo`: the whole git+ story on a throwaway
// repository, told as a Go program over the packages the verbs call —
// receive/repo (init, members, rules, pull requests, the queue),
// receive/queuerun (the queue's passes), receive/checkrun (CI),
// receive.AuditBranch (verify) and install.Install. It sits under hooks
// because it installs the receive hooks.
//
// Decisions:
//   - Each step prints the verb that does the same, with the member who
//     signs in brackets. git runs as a process for the clone, the commits
//     and the pushes, and receive-pack runs the installed hooks, which exec
//     the git+ binary Options.Binary names by absolute path.
//   - Run isolates the process's environment (so git's and the hooks'): no
//     system or global git config (GIT_CONFIG_NOSYSTEM,
//     GIT_CONFIG_GLOBAL=/dev/null), HOME in the demo's directory, fixed
//     author and committer identities, no ssh-agent (SSH_AUTH_SOCK and
//     GITPLUS_KEY removed): every signature comes from an ed25519 key file
//     the demo writes. Call it from a process of its own.
//   - main is seeded with one commit while the repository has no rules (an
//     unprotected branch is not judged), then the rules protect it. The root
//     commit is where the audit starts; it is not judged.
//   - The demo plays CI itself: after each queue pass it runs `sh test.sh` as
//     the check ci on every candidate the pass published.
//   - The outcome is checked: which pull requests land and which are evicted
//     (and why), the refusal codes of the hostile pushes, and the audit's
//     verdict. Anything else is an error naming what went wrong.
package demo

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"golang.org/x/crypto/ssh"

	"github.com/gitplus/gitplus/hooks/install"
	"github.com/gitplus/gitplus/hubrefs/pr"
	"github.com/gitplus/gitplus/receive"
	"github.com/gitplus/gitplus/receive/checkrun"
	"github.com/gitplus/gitplus/receive/queuerun"
	"github.com/gitplus/gitplus/receive/repo"
)

// Options say where to tell the story.
type Options struct {
	Dir    string    // an empty directory: repo.git (bare), work (a clone), keys, home
	Binary string    // the git+ binary the hooks run and git signs pushes with
	Out    io.Writer // the story
}

// Run tells the story in o.Dir. The error says what went wrong; the
// repository stays in o.Dir for the caller to keep or remove.
func Run(o Options) error {
	d := &demo{out: o.Out, bin: o.Binary, root: o.Dir, bare: Bare(o.Dir), work: Work(o.Dir),
		keyDir: filepath.Join(o.Dir, "keys"), keys: map[string]*repo.Key{}, label: map[string]string{}, prs: changes(), start: time.Now()}
	return d.run()
}

// ErrKeepDir is a --keep directory that cannot hold the demo.
var ErrKeepDir = errors.New("cannot build the demo there")

// Prepare makes the directory Run tells the story in: keep when given (it
// must not exist or be empty; it is kept), else a temporary one that done
// removes. done is never nil.
func Prepare(keep string) (dir string, done func(), err error) {
	done = func() {}
	if keep == "" {
		if dir, err = os.MkdirTemp("", "gitplus-demo-"); err != nil {
			return "", done, err
		}
		return dir, func() { os.RemoveAll(dir) }, nil
	}
	if ents, err := os.ReadDir(keep); err == nil && len(ents) != 0 {
		return "", done, fmt.Errorf("%w: %s is not empty", ErrKeepDir, keep)
	} else if err := os.MkdirAll(keep, 0o755); err != nil {
		return "", done, fmt.Errorf("%w: %w", ErrKeepDir, err)
	}
	dir, err = filepath.Abs(keep)
	return dir, done, err
}

// Bare and Work are the repositories Run makes in dir.
func Bare(dir string) string { return filepath.Join(dir, "repo.git") }

// Tell is `git+ demo [--keep DIR]`: the story told to out over the hooks
// running bin, in keep (kept) or a temporary directory (removed), ending
// with how long it took and where the repository is kept. A keep that
// cannot hold it is ErrKeepDir; a story that fails says so and where it
// stopped.
func Tell(keep, bin string, out io.Writer) error {
	root, done, err := Prepare(keep)
	if err != nil {
		return err
	}
	defer done()
	start := time.Now()
	if err := Run(Options{Dir: root, Binary: bin, Out: out}); err != nil {
		fmt.Fprintf(out, "\nDEMO FAILED after %.1fs: %v\n", time.Since(start).Seconds(), err)
		if keep != "" {
			fmt.Fprintf(out, "the repository is kept in %s\n", root)
		}
		return fmt.Errorf("demo failed: %w", err)
	}
	fmt.Fprintf(out, "\nDemo finished in %.1fs.", time.Since(start).Seconds())
	if keep != "" {
		fmt.Fprintf(out, " The repository is kept: %s (bare) and %s (a clone).\n", Bare(root), Work(root))
	} else {
		fmt.Fprintln(out, " The throwaway repository has been removed (keep it with --keep DIR).")
	}
	return nil
}
func Work(dir string) string { return filepath.Join(dir, "work") }

// demo is the story's state: its directory, keys and repository.
type demo struct {
	out             io.Writer
	bin, root, bare string
	work, keyDir    string
	keys            map[string]*repo.Key // member name -> key (file keyDir/name)
	label           map[string]string    // pull request id -> PR1..PR5
	prs             []*change
	r               *repo.Repo
	start           time.Time
}

// failed carries an error out of the story (see check); Run recovers it.
type failed struct{ err error }

// check stops the story with err, as t.Fatal stops a test.
func check(err error) {
	if err != nil {
		panic(failed{err})
	}
}

// must is check for a call that returns a value.
func must[T any](v T, err error) T {
	check(err)
	return v
}

func (d *demo) say(format string, args ...any) { fmt.Fprintf(d.out, format+"\n", args...) }

func (d *demo) step(title string) {
	fmt.Fprintf(d.out, "\n== %s   [%.1fs]\n", title, time.Since(d.start).Seconds())
}

// verb prints the git+ command that does what the next call does, with
// the member who signs in brackets.
func (d *demo) verb(as string, args ...string) {
	for i, a := range args {
		if a == "" || strings.ContainsAny(a, " '\"$;&|<>()*?") {
			args[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		}
	}
	if as != "" {
		as = "[" + as + "]"
	}
	d.say("%-8s $ git+ %s", as, strings.Join(args, " "))
}

// as opens the repository's trust as it is now for member name.
func (d *demo) as(name string) *repo.Signing { return must(repo.OpenSigning(d.r, d.keys[name])) }

// gitRun runs git in dir and returns its standard error and exit code.
func (d *demo) gitRun(dir string, args ...string) (string, int) {
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	var errb bytes.Buffer
	cmd.Stderr = &errb
	err := cmd.Run()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return errb.String(), ee.ExitCode()
	}
	check(err)
	return errb.String(), 0
}

// git runs git in dir, which must succeed, and returns its output.
func (d *demo) git(dir string, args ...string) string {
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	out, err := cmd.Output()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		err = fmt.Errorf("git %s: %w\n%s", strings.Join(args, " "), err, ee.Stderr)
	}
	check(err)
	return strings.TrimSpace(string(out))
}

// The project the demo's pull requests change.
const (
	testScript = `. ./calc.sh
[ "$(add 2 3)" = 5 ] || { echo "FAIL: add 2 3 gave $(add 2 3), want 5"; exit 1; }
echo "ok: every test passed"
`
	rulesJSON = `{"protected": {"refs/heads/main": {"requiredApprovals": 1, "requiredChecks": ["ci"], "queueCandidates": true}}}`
)

// change is one pull request of the story and what must become of it.
type change struct {
	branch, title string
	files         map[string]string
	want, why, id string
}

// changes are the story's five pull requests.
func changes() []*change {
	return []*change{
		{"feature/greeting", "Add a greeting", map[string]string{"greeting.txt": "hello\n"}, "landed", "adds a file; nothing else touches it", ""},
		{"feature/retitle", "Retitle the README", map[string]string{"README.md": "# calc: arithmetic in sh\n\nShell arithmetic, tested by test.sh.\n"}, "landed", "rewrites the README's first line", ""},
		{"feature/retitle-too", "Retitle the README differently", map[string]string{"README.md": "# sh-calc\n\nShell arithmetic, tested by test.sh.\n"}, "conflict", "rewrites the same line as PR2: it must conflict", ""},
		{"feature/fast-add", "Make add faster", map[string]string{"calc.sh": "add() { echo $(($1 * $2)); }\n"}, "failed", "breaks add(): test.sh must fail", ""},
		{"feature/sub", "Add sub()", map[string]string{"sub.sh": "sub() { echo $(($1 - $2)); }\n",
			"test.sh": strings.Replace(testScript, "echo \"ok", ". ./sub.sh\n[ \"$(sub 5 3)\" = 2 ] || { echo \"FAIL: sub 5 3 gave $(sub 5 3), want 2\"; exit 1; }\necho \"ok", 1)},
			"landed", "adds sub() and its test; queued behind the broken PR4", ""},
	}
}

func (d *demo) run() (err error) {
	defer func() {
		switch r := recover().(type) {
		case nil:
		case failed:
			err = r.err
		default:
			panic(r)
		}
	}()
	d.say("git+ demo: a throwaway repository in %s", d.root)
	d.say("Every step below calls the packages the git+ verbs call; git runs the receive hooks, which run this binary (%s).", filepath.Base(d.bin))
	isolate(filepath.Join(d.root, "home"), d.keyDir)
	d.step("1. Keys and a repository")
	names := []string{"admin", "alice", "bob", "ci", "queue"}
	for _, n := range names {
		d.keys[n] = newKey(d.keyDir, n)
	}
	d.say("wrote ed25519 keys for %s in %s (no ssh-agent is used)", strings.Join(names, ", "), d.keyDir)
	d.verb("admin", "init", "--name", "demo", "--admin", "admin", d.bare)
	made := must(repo.Init(repo.InitOptions{Dir: d.bare, Key: d.keys["admin"], Admin: "admin", Name: "demo"}))
	check(install.Install(made.GitDir, d.bin))
	d.r = must(repo.Open(made.GitDir, "."))
	defer d.r.Close()
	d.say("           created the bare repository, its signed trust root (RepoID %s) and the receive hooks", made.RepoID)

	d.step("2. Seed main (main is not protected yet; the push is signed)")
	d.git(d.root, "clone", "-q", d.bare, d.work)
	// git+ init requires a known pusher: the clone signs its pushes with
	// the admin's key, through git+ itself as the signing program
	// (docs/serving.md "Who must be known").
	for _, kv := range [][2]string{{"gpg.format", "ssh"}, {"user.signingKey", d.keys["admin"].Source}, {"gpg.ssh.program", d.bin}, {"push.gpgSign", "if-asked"}} {
		d.git(d.work, "config", kv[0], kv[1])
	}
	d.say("$ git config push.gpgSign if-asked   (with gpg.format ssh and user.signingKey admin's key: git+ init requires a known pusher)")
	d.commitFiles("", "main", map[string]string{"README.md": "# calc\n\nShell arithmetic, tested by test.sh.\n", "calc.sh": "add() { echo $(($1 + $2)); }\n", "test.sh": testScript}, "Initial commit")
	d.git(d.work, "push", "-q", "origin", "main")
	seed := d.git(d.bare, "rev-parse", "main")
	d.say("$ git push origin main")
	d.say("           main = %s: README.md, calc.sh (add) and test.sh, the test CI will run", seed[:10])

	d.step("3. Members and rules")
	for _, m := range []struct{ name, cap, role string }{
		{"alice", "hub.pr", "a developer: opens pull requests"},
		{"bob", "hub.review", "a reviewer: approves them"},
		{"ci", "hub.check:ci", "the CI: records the check named ci"},
		{"queue", "hub.queue", "the queue bot: builds candidates and lands them"},
	} {
		pub := filepath.Join(d.keyDir, m.name+".pub")
		d.verb("admin", "member", "add", m.name, "--key", pub, "--cap", m.cap)
		must(d.as("admin").AddMember(m.name, must(repo.ReadKeyArg(pub)), []string{m.cap}))
		d.say("           %s is %s", m.name, m.role)
	}
	rulesFile := filepath.Join(d.root, "rules.json")
	check(os.WriteFile(rulesFile, []byte(rulesJSON+"\n"), 0o644))
	d.say("rules.json: %s", rulesJSON)
	d.verb("admin", "rules", "set", rulesFile)
	_, _, err = d.as("admin").SetRules([]byte(rulesJSON), rulesFile)
	check(err)
	d.say("           main is now protected: 1 approval, check ci green, queue candidates allowed")
	alice, bob, ci, queue := d.as("alice"), d.as("bob"), d.as("ci"), d.as("queue")
	d.verb("queue", "queue", "open", "--target", "main")
	qid, _, err := queue.OpenQueue("main")
	check(err)
	d.say("           opened the merge queue %s for main", qid)

	d.step("4. Five pull requests: opened by alice, approved by bob, entered in the queue")
	push := []string{"push", "-q", "origin"}
	for _, p := range d.prs {
		d.commitFiles("main", p.branch, p.files, p.title)
		push = append(push, p.branch)
	}
	d.git(d.work, push...)
	d.say("$ git push origin feature/greeting feature/retitle ...   (five branches; unprotected branches are not judged)")
	for i, p := range d.prs {
		d.verb("alice", "pr", "open", "--base", "main", "--head", p.branch, "--title", p.title)
		opened, _, _, err := alice.OpenPR(repo.OpenPR{Base: "main", Head: p.branch, Title: p.title})
		check(err)
		p.id, d.label[opened.ID] = opened.ID, fmt.Sprintf("PR%d", i+1)
		d.say("           PR%d = %s: %s", i+1, p.id, p.why)
	}
	for _, p := range d.prs {
		d.verb("bob", "pr", "review", p.id, "--approve")
		must(must(bob.PR(p.id)).Review(pr.Approve, ""))
	}
	d.say("           bob approved all five heads (each review names the head and base it approves)")
	for _, p := range d.prs {
		d.verb("queue", "queue", "enter", p.id)
		must(queue.EnterQueue(p.id, "", ""))
	}
	d.say("           queue order: PR1, PR2, PR3, PR4, PR5")

	d.step("5. Queue passes (the demo plays CI: `sh test.sh` on every published candidate)")
	d.passes(ci)
	mainNow := d.git(d.bare, "rev-parse", "main")
	hist := d.git(d.bare, "log", "--first-parent", "--format=%h %s", "main")
	d.say("\n$ git log --first-parent --oneline main\n    %s", strings.ReplaceAll(hist, "\n", "\n    "))
	d.say("           landed: PR1, PR2, PR5; evicted: PR3 (conflict), PR4 (failed). PR3 and PR4 stay open for alice to fix.")

	d.step("6. Hostile pushes: the hook refuses what no record justifies")
	d.git(d.work, "fetch", "-q", "origin", "main")
	d.commitFiles("origin/main", "sneaky", map[string]string{"calc.sh": "add() { echo 42; }\n"}, "Sneak a change past review")
	d.hostile("an unreviewed commit pushed straight to main", "not-a-pr-head", mainNow, "push", "origin", "sneaky:main")
	d.hostile("main rewound to the seed commit", "non-fast-forward", mainNow, "push", "--force", "origin", seed+":refs/heads/main")

	d.step("7. Offline verification of main's history")
	d.verb("", "verify", "--branch", "main")
	rep := must(receive.AuditBranch(d.r.GitDir, "refs/heads/main", plumbing.ZeroHash))
	d.say("           %s", receive.AuditSummary(rep))
	if len(rep.Unjustified) != 0 {
		return fmt.Errorf("the audit found %d unjustified commits on main", len(rep.Unjustified))
	}
	d.say("           verified: every landing on main is justified by the signed records (exit 0)")
	return nil
}

// passes runs queue passes until the queue is drained, playing CI on every
// published candidate, and checks each pull request's fate.
func (d *demo) passes(ci *repo.Signing) {
	qk := d.keys["queue"]
	got := map[string]string{}
	for pass := 1; ; pass++ {
		if pass > 6 {
			check(errors.New("the queue is not drained after 6 passes"))
		}
		d.say("\n-- pass %d", pass)
		d.verb("queue", "queue", "run", "--target", "main", "--json")
		rep := must(queuerun.Run(context.Background(), queuerun.Options{GitDir: d.r.GitDir, Remote: ".",
			Signer: qk.Signer, Name: "queue", Target: "refs/heads/main", Sign: qk.PushSigning()}))
		if rep.Idle != "" {
			d.say("           nothing to do: %s", rep.Idle)
		}
		for _, s := range rep.Settled {
			d.say("           settled %s: %s %s", d.label[s.PR], s.Reason, s.Detail)
			if s.Reason != "landed" {
				got[s.PR] = s.Reason
			}
		}
		for _, l := range rep.Landed {
			d.say("           LANDED %s: its head %s went onto main as candidate %s", d.label[l.PR], l.Head[:10], l.Commit[:10])
			got[l.PR] = "landed"
		}
		if rep.Commit != "" {
			d.say("           main moved to %s in one compare-and-swap push the hook accepted", rep.Commit[:10])
		}
		for _, e := range rep.Evicted {
			why := e.Detail
			switch e.Reason {
			case "conflict":
				why = "merging it onto the chain conflicts in " + strings.Join(e.Paths, ", ")
			case "failed":
				why = "check " + strings.Join(e.Checks, ", ") + " failed on its candidate, and every candidate ahead of it is green"
			}
			d.say("           EVICTED %s (%s): %s", d.label[e.PR], e.Reason, why)
			got[e.PR] = e.Reason
		}
		for _, p := range rep.Published {
			d.say("           built candidate %s for %s = merge(%s, %s's head), pushed to its candidate branch", p.Step[:10], d.label[p.PR], p.Parents[0][:10], d.label[p.PR])
		}
		for _, x := range rep.Waiting {
			d.say("           waiting %s: %s", d.label[x.PR], x.Reason)
		}
		for _, x := range rep.Refused {
			check(fmt.Errorf("the hook refused the queue's landing: %s", x))
		}
		for _, x := range rep.Resets {
			d.say("           reset: %s", x)
		}
		for _, x := range rep.Warnings {
			d.say("           warning: %s", x)
		}
		left := 0 // chain steps this pass did not land
		for _, st := range rep.Chain {
			if got[st.PR] != "landed" {
				left++
			}
		}
		if len(rep.Published) == 0 && left == 0 {
			d.say("           the queue is drained: every entry landed or was evicted")
			break
		}
		if len(rep.Published) == 0 && len(rep.Landed) == 0 && len(rep.Evicted) == 0 {
			check(fmt.Errorf("pass %d changed nothing but %d candidates remain", pass, left))
		}
		for _, p := range rep.Published {
			d.verb("ci", "check", "run", "--pr", p.PR, "--rev", p.Step, "--name", "ci", "--", "sh", "test.sh")
			var out, errs bytes.Buffer
			res := must(checkrun.Run(ci, checkrun.Options{PR: p.PR, Rev: p.Step, Name: "ci", Argv: []string{"sh", "test.sh"}, Stdout: &out, Stderr: &errs}))
			last := lastLine(out.String())
			if res.Conclusion == pr.Success {
				d.say("           CI on %s's candidate %s: success (%s)", d.label[p.PR], p.Step[:10], last)
				continue
			}
			if last == "" {
				last = lastLine(errs.String())
			}
			d.say("           CI on %s's candidate %s: FAILURE (%s)", d.label[p.PR], p.Step[:10], last)
		}
	}
	for i, p := range d.prs {
		if got[p.id] != p.want {
			check(fmt.Errorf("unexpected queue outcome: PR%d ended %q, want %q", i+1, got[p.id], p.want))
		}
	}
}

func lastLine(out string) string {
	lines := strings.Split(strings.TrimSpace(out), "\n")
	return strings.TrimSpace(lines[len(lines)-1])
}

// hostile runs a git push that the hook must refuse with code and checks main
// did not move.
func (d *demo) hostile(what, code, mainWant string, args ...string) {
	d.say("$ git %s", strings.Join(args, " "))
	errs, rc := d.gitRun(d.work, args...)
	_, line, _ := strings.Cut(errs, "git+: refused")
	line, _, _ = strings.Cut(line, "\n")
	if rc == 0 || !strings.Contains(line, "["+code+"]") {
		check(fmt.Errorf("git %s (exit %d): want a refusal [%s] of %s, got:\n%s", strings.Join(args, " "), rc, code, what, errs))
	}
	if now := d.git(d.bare, "rev-parse", "main"); now != mainWant {
		check(fmt.Errorf("main moved to %s after a refused push", now))
	}
	d.say("    git+: refused %s", strings.TrimSpace(line))
	d.say("           REFUSED %s; main did not move", what)
}

// commitFiles commits files on a new branch (from base, or an orphan main
// when base is "") in the work clone.
func (d *demo) commitFiles(base, branch string, files map[string]string, msg string) {
	if base == "" {
		d.git(d.work, "checkout", "-q", "--orphan", branch)
	} else {
		d.git(d.work, "checkout", "-q", "-B", branch, base)
	}
	paths := []string{}
	for p, body := range files {
		check(os.WriteFile(filepath.Join(d.work, p), []byte(body), 0o644))
		paths = append(paths, p)
	}
	sort.Strings(paths)
	d.git(d.work, append([]string{"add", "--"}, paths...)...)
	d.git(d.work, "commit", "-q", "-m", msg)
}

// isolate makes this process's environment (and so git's and the
// hooks') free of the caller's git config, identity, agent and key.
func isolate(home, keyDir string) {
	check(os.MkdirAll(home, 0o700))
	check(os.MkdirAll(keyDir, 0o700))
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(k, "GIT_") || k == "XDG_CONFIG_HOME" || k == "SSH_AUTH_SOCK" || k == "GITPLUS_KEY" {
			os.Unsetenv(k)
		}
	}
	for _, kv := range []string{"HOME=" + home, "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null",
		"GIT_AUTHOR_NAME=Alice", "GIT_AUTHOR_EMAIL=alice@example.invalid", "GIT_COMMITTER_NAME=Alice", "GIT_COMMITTER_EMAIL=alice@example.invalid"} {
		k, v, _ := strings.Cut(kv, "=")
		os.Setenv(k, v)
	}
}

// newKey writes an ed25519 OpenSSH private key file and its .pub, and
// loads it.
func newKey(dir, name string) *repo.Key {
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	check(err)
	block := must(ssh.MarshalPrivateKey(priv, name+"@demo"))
	path := filepath.Join(dir, name)
	check(os.WriteFile(path, pem.EncodeToMemory(block), 0o600))
	pub := strings.TrimSpace(string(ssh.MarshalAuthorizedKey(must(ssh.NewSignerFromKey(priv)).PublicKey()))) + " " + name + "@demo\n"
	check(os.WriteFile(path+".pub", []byte(pub), 0o644))
	return must(repo.LoadKey(path))
}
