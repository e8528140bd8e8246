package main

// git+ demo [--keep DIR]: the whole story on a throwaway repository.
//
// Decisions:
//   - The demo drives this same binary (os.Executable) as subprocesses with
//     --repo and --key, so it exercises the real CLI and the real hooks: git+
//     init installs hooks that exec this binary by absolute path (under `go
//     run`, the temporary build, which lives as long as the demo runs).
//   - Everything runs with an isolated environment: no system or global git
//     config (GIT_CONFIG_NOSYSTEM, GIT_CONFIG_GLOBAL=/dev/null), HOME in the
//     demo's directory, fixed author and committer identities, no ssh-agent
//     (SSH_AUTH_SOCK and GITPLUS_KEY removed): every signature comes from an
//     ed25519 key file the demo writes.
//   - main is seeded with one commit while the repository has no rules (an
//     unprotected branch is not judged), then the rules protect it. The root
//     commit is where `verify --branch` starts; it is not judged.
//   - The demo plays CI itself: after each `queue run` it runs `git+ check
//     run ... -- sh test.sh` on every candidate the pass published.
//   - The outcome is checked: which pull requests land and which are evicted
//     (and why), the refusal codes of the hostile pushes, and verify's verdict.
//     Anything else is an error (exit 1) naming what went wrong.
//   - The directory is removed at the end unless --keep DIR names where to
//     build it (DIR must not exist or be empty).

import (
	"bytes"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/urfave/cli/v2"
	"golang.org/x/crypto/ssh"
)

func init() {
	register(hubVerb(&cli.Command{
		Name:  "demo",
		Usage: "build a throwaway repository and walk through pull requests, the merge queue, a refused push and verify",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "keep", Usage: "build the demo in DIR (must not exist or be empty) and keep it"},
		},
		Action: demoAction,
	}))
}

// demoWorld is the demo's state: its directory, environment and keys.
type demoWorld struct {
	out   io.Writer
	bin   string
	root  string
	bare  string
	work  string
	env   []string
	keys  map[string]string // member name -> private key file
	label map[string]string // pull request id -> its short label
	start time.Time
}

func demoAction(c *cli.Context) error {
	if c.NArg() != 0 {
		return usageErr("usage: git+ demo [--keep DIR]")
	}
	bin, err := os.Executable()
	if err != nil {
		return fail(1, fmt.Errorf("finding this binary: %w", err))
	}
	root := c.String("keep")
	if root != "" {
		if err := demoEmptyDir(root); err != nil {
			return fail(2, fmt.Errorf("--keep: %w", err))
		}
		if root, err = filepath.Abs(root); err != nil {
			return fail(1, err)
		}
	} else {
		if root, err = os.MkdirTemp("", "gitplus-demo-"); err != nil {
			return fail(1, err)
		}
		defer os.RemoveAll(root)
	}
	w := &demoWorld{out: c.App.Writer, bin: bin, root: root, bare: filepath.Join(root, "repo.git"),
		work: filepath.Join(root, "work"), keys: map[string]string{}, label: map[string]string{}, start: time.Now()}
	if err := w.run(); err != nil {
		fmt.Fprintf(w.out, "\nDEMO FAILED after %.1fs: %v\n", time.Since(w.start).Seconds(), err)
		if c.String("keep") != "" {
			fmt.Fprintf(w.out, "the repository is kept in %s\n", root)
		}
		return fail(1, fmt.Errorf("demo failed: %w", err))
	}
	fmt.Fprintf(w.out, "\nDemo finished in %.1fs.", time.Since(w.start).Seconds())
	if c.String("keep") != "" {
		fmt.Fprintf(w.out, " The repository is kept: %s (bare) and %s (a clone).\n", w.bare, w.work)
	} else {
		fmt.Fprintln(w.out, " The throwaway repository has been removed (keep it with --keep DIR).")
	}
	return nil
}

func demoEmptyDir(dir string) error {
	ents, err := os.ReadDir(dir)
	if os.IsNotExist(err) {
		return os.MkdirAll(dir, 0o755)
	}
	if err != nil {
		return err
	}
	if len(ents) != 0 {
		return fmt.Errorf("%s is not empty", dir)
	}
	return nil
}

// demoEnv is an environment without the caller's git config, identity,
// agent or key.
func demoEnv(home string) []string {
	env := []string{}
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(k, "GIT_") || k == "HOME" || k == "XDG_CONFIG_HOME" || k == "SSH_AUTH_SOCK" || k == "GITPLUS_KEY" {
			continue
		}
		env = append(env, kv)
	}
	return append(env,
		"HOME="+home,
		"GIT_CONFIG_NOSYSTEM=1",
		"GIT_CONFIG_GLOBAL=/dev/null",
		"GIT_AUTHOR_NAME=Alice", "GIT_AUTHOR_EMAIL=alice@example.invalid",
		"GIT_COMMITTER_NAME=Alice", "GIT_COMMITTER_EMAIL=alice@example.invalid",
	)
}

// demoKey writes an ed25519 OpenSSH private key file and its .pub.
func demoKey(dir, name string) (string, error) {
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return "", err
	}
	block, err := ssh.MarshalPrivateKey(priv, name+"@demo")
	if err != nil {
		return "", err
	}
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, pem.EncodeToMemory(block), 0o600); err != nil {
		return "", err
	}
	signer, err := ssh.NewSignerFromKey(priv)
	if err != nil {
		return "", err
	}
	pub := strings.TrimSpace(string(ssh.MarshalAuthorizedKey(signer.PublicKey()))) + " " + name + "@demo\n"
	return path, os.WriteFile(path+".pub", []byte(pub), 0o644)
}

func (w *demoWorld) say(format string, args ...any) {
	fmt.Fprintf(w.out, format+"\n", args...)
}

func (w *demoWorld) step(title string) {
	fmt.Fprintf(w.out, "\n== %s   [%.1fs]\n", title, time.Since(w.start).Seconds())
}

// demoQuote shows an argument as a shell would need it.
func demoQuote(a string) string {
	if a != "" && strings.IndexFunc(a, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./:=@+,", r))
	}) < 0 {
		return a
	}
	return "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
}

func demoShow(args []string) string {
	q := make([]string, len(args))
	for i, a := range args {
		q[i] = demoQuote(a)
	}
	return strings.Join(q, " ")
}

// exec runs name (this binary when name is "git+", else git) in dir with the
// demo's environment and returns stdout, stderr and the exit code.
func (w *demoWorld) exec(dir, name string, args ...string) (string, string, int, error) {
	path := name
	if name == "git+" {
		path = w.bin
	}
	cmd := exec.Command(path, args...)
	cmd.Dir = dir
	cmd.Env = w.env
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	if err != nil {
		ee, ok := err.(*exec.ExitError)
		if !ok {
			return "", "", -1, fmt.Errorf("%s %s: %w", name, strings.Join(args, " "), err)
		}
		return out.String(), errb.String(), ee.ExitCode(), nil
	}
	return out.String(), errb.String(), 0, nil
}

// gpArgs prints the command as a user would type it (without --repo and
// --key, with who signs in brackets) and returns the full arguments.
func (w *demoWorld) gpArgs(as string, args []string) []string {
	full := []string{"--repo", w.bare}
	shown := "$ git+ " + demoShow(args)
	if as != "" {
		full = append(full, "--key", w.keys[as])
		shown = fmt.Sprintf("%-8s %s", "["+as+"]", shown)
	} else {
		shown = fmt.Sprintf("%-8s %s", "", shown)
	}
	w.say("%s", shown)
	return append(full, args...)
}

// gp runs `git+ --repo BARE --key KEY(as) ARGS`, printing the command first.
func (w *demoWorld) gp(as string, args ...string) (string, string, int, error) {
	return w.exec(w.root, "git+", w.gpArgs(as, args)...)
}

// demoResult is one finished command.
type demoResult struct {
	out, errs string
	code      int
}

// gpAll runs independent commands (they write different refs) at once, all
// signed by as, and returns their results in order. ok lists the exit codes
// taken as success (default: 0).
func (w *demoWorld) gpAll(as string, argss [][]string, ok ...int) ([]demoResult, error) {
	if len(ok) == 0 {
		ok = []int{0}
	}
	res := make([]demoResult, len(argss))
	errs := make([]error, len(argss))
	var wg sync.WaitGroup
	for i, args := range argss {
		full := w.gpArgs(as, args)
		wg.Add(1)
		go func() {
			defer wg.Done()
			out, stderr, code, err := w.exec(w.root, "git+", full...)
			if err == nil && !slices.Contains(ok, code) {
				err = fmt.Errorf("git+ %s: exit %d\n%s%s", demoShow(args), code, out, stderr)
			}
			res[i], errs[i] = demoResult{out, stderr, code}, err
		}()
	}
	wg.Wait()
	return res, errors.Join(errs...)
}

// gpOK is gp that must exit 0; it prints the explanation after the command.
func (w *demoWorld) gpOK(as, explain string, args ...string) (string, error) {
	out, errs, code, err := w.gp(as, args...)
	if err != nil {
		return "", err
	}
	if code != 0 {
		return "", fmt.Errorf("git+ %s: exit %d\n%s%s", demoShow(args), code, out, errs)
	}
	if explain != "" {
		w.say("           %s", explain)
	}
	return out, nil
}

func (w *demoWorld) git(dir string, args ...string) (string, error) {
	out, errs, code, err := w.exec(dir, "git", args...)
	if err != nil {
		return "", err
	}
	if code != 0 {
		return "", fmt.Errorf("git %s: exit %d\n%s", demoShow(args), code, errs)
	}
	return strings.TrimSpace(out), nil
}

func demoLast(out string) string {
	lines := strings.Split(strings.TrimSpace(out), "\n")
	return strings.TrimSpace(lines[len(lines)-1])
}

func demoShort(id string) string {
	if len(id) > 10 {
		return id[:10]
	}
	return id
}

// The project the demo's pull requests change.
const (
	demoReadme = "# calc\n\nShell arithmetic, tested by test.sh.\n"
	demoCalc   = "add() { echo $(($1 + $2)); }\n"
	demoTest   = `. ./calc.sh
[ "$(add 2 3)" = 5 ] || { echo "FAIL: add 2 3 gave $(add 2 3), want 5"; exit 1; }
echo "ok: every test passed"
`
	demoRules = `{"protected": {"refs/heads/main": {"requiredApprovals": 1, "requiredChecks": ["ci"], "queueCandidates": true}}}`
)

// demoPR is one pull request of the story and what must become of it.
type demoPR struct {
	label  string // short name used in the output
	branch string
	title  string
	files  map[string]string
	want   string // landed, conflict, failed
	why    string
	id     string
}

func demoPRs() []*demoPR {
	return []*demoPR{
		{label: "PR1", branch: "feature/greeting", title: "Add a greeting", files: map[string]string{"greeting.txt": "hello\n"},
			want: "landed", why: "adds a file; nothing else touches it"},
		{label: "PR2", branch: "feature/retitle", title: "Retitle the README", files: map[string]string{"README.md": "# calc: arithmetic in sh\n\nShell arithmetic, tested by test.sh.\n"},
			want: "landed", why: "rewrites the README's first line"},
		{label: "PR3", branch: "feature/retitle-too", title: "Retitle the README differently", files: map[string]string{"README.md": "# sh-calc\n\nShell arithmetic, tested by test.sh.\n"},
			want: "conflict", why: "rewrites the same line as PR2: it must conflict"},
		{label: "PR4", branch: "feature/fast-add", title: "Make add faster", files: map[string]string{"calc.sh": "add() { echo $(($1 * $2)); }\n"},
			want: "failed", why: "breaks add(): test.sh must fail"},
		{label: "PR5", branch: "feature/sub", title: "Add sub()", files: map[string]string{
			"sub.sh":  "sub() { echo $(($1 - $2)); }\n",
			"test.sh": strings.Replace(demoTest, "echo \"ok", ". ./sub.sh\n[ \"$(sub 5 3)\" = 2 ] || { echo \"FAIL: sub 5 3 gave $(sub 5 3), want 2\"; exit 1; }\necho \"ok", 1)},
			want: "landed", why: "adds sub() and its test; queued behind the broken PR4"},
	}
}

// demoRun is the part of `queue run --json` the demo reads.
type demoRun struct {
	Idle    string `json:"idle"`
	Settled []struct {
		PR, Reason, Detail string
	} `json:"settled"`
	Landed []struct {
		PR, Head, Commit string
	} `json:"landed"`
	Commit  string `json:"commit"`
	Evicted []struct {
		PR, Reason, Detail string
		Checks, Paths      []string
	} `json:"evicted"`
	Published []struct {
		PR, Head, Step, Branch string
		Parents                []string
	} `json:"published"`
	Waiting []struct {
		PR, Reason string
	} `json:"waiting"`
	Refused  []string `json:"refused"`
	Resets   []string `json:"resets"`
	Warnings []string `json:"warnings"`
	Chain    []struct {
		PR, Commit, Verdict string
	} `json:"chain"`
}

func (w *demoWorld) lbl(id string) string {
	if l, ok := w.label[id]; ok {
		return l
	}
	return demoShort(id)
}

func (w *demoWorld) run() error {
	w.say("git+ demo: a throwaway repository in %s", w.root)
	w.say("Every command below is this binary (%s) run as a subprocess, so the real CLI and hooks do the work.", filepath.Base(w.bin))
	home := filepath.Join(w.root, "home")
	keyDir := filepath.Join(w.root, "keys")
	for _, d := range []string{home, keyDir} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return err
		}
	}
	w.env = demoEnv(home)

	// 1. Keys, repository, members, rules.
	w.step("1. Keys and a repository")
	names := []string{"admin", "alice", "bob", "ci", "queue"}
	for _, n := range names {
		p, err := demoKey(keyDir, n)
		if err != nil {
			return fmt.Errorf("writing %s's key: %w", n, err)
		}
		w.keys[n] = p
	}
	w.say("wrote ed25519 keys for %s in %s (no ssh-agent is used)", strings.Join(names, ", "), keyDir)
	out, err := w.gpOK("admin", "", "init", "--name", "demo", "--admin", "admin", w.bare)
	if err != nil {
		return err
	}
	w.say("           created the bare repository, its signed trust root (RepoID %s) and the receive hooks", demoLast(out))

	w.step("2. Seed main (main is not protected yet; the push is signed)")
	files := map[string]string{"README.md": demoReadme, "calc.sh": demoCalc, "test.sh": demoTest}
	if _, err := w.git(w.root, "clone", "-q", w.bare, w.work); err != nil {
		return err
	}
	// git+ init requires a known pusher: the clone signs its pushes with
	// the admin's key, through git+ itself as the signing program
	// (docs/serving.md "Who must be known").
	for _, kv := range [][2]string{{"gpg.format", "ssh"}, {"user.signingKey", w.keys["admin"]}, {"gpg.ssh.program", w.bin}, {"push.gpgSign", "if-asked"}} {
		if _, err := w.git(w.work, "config", kv[0], kv[1]); err != nil {
			return err
		}
	}
	w.say("$ git config push.gpgSign if-asked   (with gpg.format ssh and user.signingKey admin's key: git+ init requires a known pusher)")
	if err := w.commitFiles("", "main", files, "Initial commit"); err != nil {
		return err
	}
	if _, err := w.git(w.work, "push", "-q", "origin", "main"); err != nil {
		return err
	}
	seed, err := w.git(w.bare, "rev-parse", "main")
	if err != nil {
		return err
	}
	w.say("$ git push origin main")
	w.say("           main = %s: README.md, calc.sh (add) and test.sh, the test CI will run", demoShort(seed))

	w.step("3. Members and rules")
	for _, m := range []struct{ name, cap, role string }{
		{"alice", "hub.pr", "a developer: opens pull requests"},
		{"bob", "hub.review", "a reviewer: approves them"},
		{"ci", "hub.check:ci", "the CI: records the check named ci"},
		{"queue", "hub.queue", "the queue bot: builds candidates and lands them"},
	} {
		if _, err := w.gpOK("admin", m.name+" is "+m.role, "member", "add", m.name, "--key", w.keys[m.name]+".pub", "--cap", m.cap); err != nil {
			return err
		}
	}
	rules := filepath.Join(w.root, "rules.json")
	if err := os.WriteFile(rules, []byte(demoRules+"\n"), 0o644); err != nil {
		return err
	}
	w.say("rules.json: %s", demoRules)
	if _, err := w.gpOK("admin", "main is now protected: 1 approval, check ci green, queue candidates allowed", "rules", "set", rules); err != nil {
		return err
	}
	out, err = w.gpOK("queue", "", "queue", "open", "--target", "main")
	if err != nil {
		return err
	}
	w.say("           opened the merge queue %s for main", demoLast(out))

	// 4. Five pull requests.
	w.step("4. Five pull requests: opened by alice, approved by bob, entered in the queue")
	prs := demoPRs()
	push := []string{"push", "-q", "origin"}
	for _, p := range prs {
		if err := w.commitFiles("main", p.branch, p.files, p.title); err != nil {
			return err
		}
		push = append(push, p.branch)
	}
	if _, err := w.git(w.work, push...); err != nil {
		return err
	}
	w.say("$ git push origin feature/greeting feature/retitle ...   (five branches; unprotected branches are not judged)")
	var opens, reviews [][]string
	for _, p := range prs {
		opens = append(opens, []string{"pr", "open", "--base", "main", "--head", p.branch, "--title", p.title})
	}
	outs, err := w.gpAll("alice", opens)
	if err != nil {
		return err
	}
	for i, p := range prs {
		p.id = demoLast(outs[i].out)
		w.label[p.id] = p.label
		w.say("           %s = %s: %s", p.label, p.id, p.why)
		reviews = append(reviews, []string{"pr", "review", p.id, "--approve"})
	}
	if _, err := w.gpAll("bob", reviews); err != nil {
		return err
	}
	w.say("           bob approved all five heads (each review names the head and base it approves)")
	for _, p := range prs {
		if _, err := w.gpOK("queue", "", "queue", "enter", p.id); err != nil {
			return err
		}
	}
	w.say("           queue order: PR1, PR2, PR3, PR4, PR5")

	// 5. Queue passes with the demo playing CI.
	w.step("5. Queue passes (the demo plays CI: `sh test.sh` on every published candidate)")
	got := map[string]string{}
	for pass := 1; ; pass++ {
		if pass > 6 {
			return fmt.Errorf("the queue is not drained after 6 passes")
		}
		w.say("\n-- pass %d", pass)
		out, err := w.gpOK("queue", "", "queue", "run", "--target", "main", "--json")
		if err != nil {
			return err
		}
		var rep demoRun
		if err := json.Unmarshal([]byte(out), &rep); err != nil {
			return fmt.Errorf("queue run --json: %v\n%s", err, out)
		}
		if rep.Idle != "" {
			w.say("           nothing to do: %s", rep.Idle)
		}
		for _, s := range rep.Settled {
			w.say("           settled %s: %s %s", w.lbl(s.PR), s.Reason, s.Detail)
			if s.Reason != "landed" {
				got[s.PR] = s.Reason
			}
		}
		for _, l := range rep.Landed {
			w.say("           LANDED %s: its head %s went onto main as candidate %s", w.lbl(l.PR), demoShort(l.Head), demoShort(l.Commit))
			got[l.PR] = "landed"
		}
		if rep.Commit != "" {
			w.say("           main moved to %s in one compare-and-swap push the hook accepted", demoShort(rep.Commit))
		}
		for _, e := range rep.Evicted {
			why := e.Detail
			switch e.Reason {
			case "conflict":
				why = "merging it onto the chain conflicts in " + strings.Join(e.Paths, ", ")
			case "failed":
				why = "check " + strings.Join(e.Checks, ", ") + " failed on its candidate, and every candidate ahead of it is green"
			}
			w.say("           EVICTED %s (%s): %s", w.lbl(e.PR), e.Reason, why)
			got[e.PR] = e.Reason
		}
		for _, p := range rep.Published {
			w.say("           built candidate %s for %s = merge(%s, %s's head), pushed to its candidate branch",
				demoShort(p.Step), w.lbl(p.PR), demoShort(p.Parents[0]), w.lbl(p.PR))
		}
		for _, x := range rep.Waiting {
			w.say("           waiting %s: %s", w.lbl(x.PR), x.Reason)
		}
		for _, x := range rep.Refused {
			return fmt.Errorf("the hook refused the queue's landing: %s", x)
		}
		for _, x := range rep.Resets {
			w.say("           reset: %s", x)
		}
		for _, x := range rep.Warnings {
			w.say("           warning: %s", x)
		}
		left := 0 // chain steps this pass did not land
		for _, st := range rep.Chain {
			if got[st.PR] != "landed" {
				left++
			}
		}
		if len(rep.Published) == 0 && left == 0 {
			w.say("           the queue is drained: every entry landed or was evicted")
			break
		}
		if len(rep.Published) == 0 && len(rep.Landed) == 0 && len(rep.Evicted) == 0 {
			return fmt.Errorf("pass %d changed nothing but %d candidates remain", pass, left)
		}
		var checks [][]string
		for _, p := range rep.Published {
			checks = append(checks, []string{"check", "run", "--pr", p.PR, "--rev", p.Step, "--name", "ci", "--", "sh", "test.sh"})
		}
		results, err := w.gpAll("ci", checks, 0, 1)
		if err != nil {
			return err
		}
		for i, p := range rep.Published {
			r := results[i]
			res := demoLast(r.out)
			if r.code == 0 {
				w.say("           CI on %s's candidate %s: success (%s)", w.lbl(p.PR), demoShort(p.Step), res)
				continue
			}
			if res == "" {
				res = demoLast(r.errs)
			}
			w.say("           CI on %s's candidate %s: FAILURE (%s)", w.lbl(p.PR), demoShort(p.Step), res)
		}
	}
	var bad []string
	for _, p := range prs {
		if got[p.id] != p.want {
			bad = append(bad, fmt.Sprintf("%s ended %q, want %q", p.label, got[p.id], p.want))
		}
	}
	if len(bad) != 0 {
		return fmt.Errorf("unexpected queue outcome: %s", strings.Join(bad, "; "))
	}
	mainNow, err := w.git(w.bare, "rev-parse", "main")
	if err != nil {
		return err
	}
	hist, err := w.git(w.bare, "log", "--first-parent", "--format=%h %s", "main")
	if err != nil {
		return err
	}
	w.say("\n$ git log --first-parent --oneline main")
	for _, l := range strings.Split(hist, "\n") {
		w.say("    %s", l)
	}
	w.say("           landed: PR1, PR2, PR5; evicted: PR3 (conflict), PR4 (failed). PR3 and PR4 stay open for alice to fix.")

	// 6. Hostile pushes.
	w.step("6. Hostile pushes: the hook refuses what no record justifies")
	if _, err := w.git(w.work, "fetch", "-q", "origin", "main"); err != nil {
		return err
	}
	if err := w.commitFiles("origin/main", "sneaky", map[string]string{"calc.sh": "add() { echo 42; }\n"}, "Sneak a change past review"); err != nil {
		return err
	}
	if err := w.hostile("an unreviewed commit pushed straight to main", "not-a-pr-head", mainNow, "push", "origin", "sneaky:main"); err != nil {
		return err
	}
	if err := w.hostile("main rewound to the seed commit", "non-fast-forward", mainNow, "push", "--force", "origin", seed+":refs/heads/main"); err != nil {
		return err
	}

	// 7. Offline verification.
	w.step("7. Offline verification of main's history")
	out, errs, code, err := w.gp("", "verify", "--branch", "main")
	if err != nil {
		return err
	}
	if code != 0 {
		return fmt.Errorf("git+ verify --branch main: exit %d\n%s%s", code, out, errs)
	}
	w.say("           %s", demoLast(out))
	w.say("           verified: every landing on main is justified by the signed records (exit 0)")
	return nil
}

// hostile runs a git push that the hook must refuse with code and checks main
// did not move.
func (w *demoWorld) hostile(what, code, mainWant string, args ...string) error {
	w.say("$ git %s", demoShow(args))
	_, errs, rc, err := w.exec(w.work, "git", args...)
	if err != nil {
		return err
	}
	if rc == 0 {
		return fmt.Errorf("git %s succeeded; the hook should have refused %s", demoShow(args), what)
	}
	line := ""
	for _, l := range strings.Split(errs, "\n") {
		if i := strings.Index(l, "git+: refused"); i >= 0 {
			line = strings.TrimSpace(l[i:])
			break
		}
	}
	if !strings.Contains(line, "["+code+"]") {
		return fmt.Errorf("git %s: want a refusal [%s], got:\n%s", demoShow(args), code, errs)
	}
	now, err := w.git(w.bare, "rev-parse", "main")
	if err != nil {
		return err
	}
	if now != mainWant {
		return fmt.Errorf("main moved to %s after a refused push", now)
	}
	w.say("    %s", line)
	w.say("           REFUSED %s; main did not move", what)
	return nil
}

// commitFiles commits files on a new branch (from base, or an orphan main
// when base is "") in the work clone.
func (w *demoWorld) commitFiles(base, branch string, files map[string]string, msg string) error {
	if base == "" {
		if _, err := w.git(w.work, "checkout", "-q", "--orphan", branch); err != nil {
			return err
		}
	} else if _, err := w.git(w.work, "checkout", "-q", "-B", branch, base); err != nil {
		return err
	}
	paths := make([]string, 0, len(files))
	for p := range files {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	for _, p := range paths {
		if err := os.WriteFile(filepath.Join(w.work, p), []byte(files[p]), 0o644); err != nil {
			return err
		}
	}
	if _, err := w.git(w.work, append([]string{"add", "--"}, paths...)...); err != nil {
		return err
	}
	_, err := w.git(w.work, "commit", "-q", "-m", msg)
	return err
}
