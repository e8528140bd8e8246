package repo_test

import (
	"context"
	"crypto/ed25519"
	"encoding/pem"
	"fmt"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"golang.org/x/crypto/ssh"

	"github.com/gitplus/gitplus/hubrefs/pr"
	"github.com/gitplus/gitplus/receive/queuerun"
	"github.com/gitplus/gitplus/receive/repo"
)

// A program that creates a git+ repository, opens a pull request, has it
// approved and lands it through the merge queue, from Go alone.
// The repository has no receive hooks here, so nothing judges the pushes
// as a server does (`git+ hook install`); the writers judge each event
// locally all the same.
func Example() {
	dir, err := os.MkdirTemp("", "gitplus-example-")
	check(err)
	defer os.RemoveAll(dir)
	// A git that ignores the user's configuration, and who writes commits.
	for k, v := range map[string]string{"GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.DevNull,
		"GIT_AUTHOR_NAME": "Alice", "GIT_AUTHOR_EMAIL": "alice@example.com",
		"GIT_COMMITTER_NAME": "Alice", "GIT_COMMITTER_EMAIL": "alice@example.com"} {
		check(os.Setenv(k, v))
	}
	alice, bob := newKey(dir, "alice"), newKey(dir, "bob")

	// alice creates the repository: she is its admin.
	in, err := repo.Init(repo.InitOptions{Dir: filepath.Join(dir, "app.git"), Key: alice})
	check(err)
	r, err := repo.Open(in.GitDir, "") // a bare repository is its own remote
	check(err)
	defer r.Close()
	admin, err := repo.OpenSigning(r, alice)
	check(err)
	_, err = admin.AddMember("bob", bob.Authorized(), []string{"hub.review"})
	check(err)
	_, _, err = admin.SetRules([]byte(`{"protected":{"refs/heads/main":{"requiredApprovals":1,"queueCandidates":true}}}`), "the example")
	check(err)

	// main, and a branch with a change (the hook would refuse a direct
	// push to protected main; there is none here).
	work := filepath.Join(dir, "work")
	git(dir, "clone", "-q", in.GitDir, work)
	commit(work, "greet.sh", "echo hello\n")
	git(work, "push", "-q", "origin", "HEAD:refs/heads/main")
	git(work, "switch", "-q", "-c", "polite")
	commit(work, "greet.sh", "echo hello, please\n")
	git(work, "push", "-q", "origin", "polite")

	// alice opens a pull request and the queue for main (her signing
	// context is re-opened after the rules changed); bob approves.
	admin, err = repo.OpenSigning(r, alice)
	check(err)
	p, _, base, err := admin.OpenPR(repo.OpenPR{Base: "main", Head: "polite", Title: "Greet politely"})
	check(err)
	fmt.Println("opened a pull request onto", base)
	reviewer, err := repo.OpenSigning(r, bob)
	check(err)
	rp, err := reviewer.PR(p.ID)
	check(err)
	_, err = rp.Review(pr.Approve, "thanks")
	check(err)
	_, _, err = admin.OpenQueue("main")
	check(err)
	_, err = admin.EnterQueue(p.ID, "", "")
	check(err)

	// A pass of the merge queue publishes the candidate (main merged with
	// the head) and waits for its check; ci (alice holds every capability
	// as admin) records it green on the candidate; the next pass lands
	// exactly that candidate.
	run := queuerun.Options{GitDir: r.GitDir, Signer: alice.Signer, Name: admin.Member.Name, Target: base}
	rep, err := queuerun.Run(context.Background(), run)
	check(err)
	fmt.Println("published:", len(rep.Published), "waiting:", rep.Waiting[0].Reason[:14])
	ci, err := admin.PR(p.ID)
	check(err)
	_, err = ci.Check(repo.Check{Name: "ci", Rev: rep.Published[0].Step, Conclusion: pr.Success})
	check(err)
	rep, err = queuerun.Run(context.Background(), run)
	check(err)
	fmt.Println("landed:", len(rep.Landed))
	st, _, err := r.PRState(p.ID, admin.Trust)
	check(err)
	fmt.Println("pull request:", st.State)
	main := strings.TrimSpace(git(in.GitDir, "rev-parse", "main"))
	fmt.Println("main is the candidate:", len(rep.Landed) == 1 && main == rep.Landed[0].Commit)
	// Output:
	// opened a pull request onto refs/heads/main
	// published: 1 waiting: checks pending
	// landed: 1
	// pull request: merged
	// main is the candidate: true
}

// newKey writes an ed25519 private key file for name and loads it.
func newKey(dir, name string) *repo.Key {
	_, priv, err := ed25519.GenerateKey(nil)
	check(err)
	block, err := ssh.MarshalPrivateKey(priv, name)
	check(err)
	path := filepath.Join(dir, name+".key")
	check(os.WriteFile(path, pem.EncodeToMemory(block), 0o600))
	k, err := repo.LoadKey(path)
	check(err)
	return k
}

func commit(dir, file, text string) {
	check(os.WriteFile(filepath.Join(dir, file), []byte(text), 0o644))
	git(dir, "add", file)
	git(dir, "commit", "-q", "-m", "Change "+file)
}

func git(dir string, args ...string) string {
	out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).CombinedOutput()
	if err != nil {
		log.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

func check(err error) {
	if err != nil {
		log.Fatal(err)
	}
}
