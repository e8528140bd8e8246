package serve_test

import (
	"crypto/ed25519"
	"encoding/pem"
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"golang.org/x/crypto/ssh"

	"github.com/gitplus/gitplus/hooks/serve"
	"github.com/gitplus/gitplus/receive/repo"
)

// A program that serves a git+ repository over HTTP and gives a member a
// token, from Go alone. The installed hooks run Binary on every push; the
// example only reads and authenticates, so a stand-in serves.
func Example() {
	root, err := os.MkdirTemp("", "gitplus-serve-example-")
	check(err)
	defer os.RemoveAll(root)
	check(os.Setenv("GIT_CONFIG_NOSYSTEM", "1"))
	check(os.Setenv("GIT_CONFIG_GLOBAL", os.DevNull))

	// alice creates team/app.git and makes bob a member.
	alice, bob := newKey(root, "alice"), newKey(root, "bob")
	in, err := repo.Init(repo.InitOptions{Dir: filepath.Join(root, "team", "app.git"), Key: alice})
	check(err)
	r, err := repo.Open(in.GitDir, "")
	check(err)
	defer r.Close()
	admin, err := repo.OpenSigning(r, alice)
	check(err)
	_, err = admin.AddMember("bob", bob.Authorized(), []string{"source.push"})
	check(err)

	// The operator issues bob a token; only its hash is kept.
	token, rec, _, err := serve.IssueToken(in.GitDir, "bob", time.Now())
	check(err)
	fmt.Println("token issued for", rec.Name, strings.HasPrefix(token, serve.TokenPrefix))

	stand, err := exec.LookPath("true")
	check(err)
	s := serve.New(root, stand, false)
	served, err := s.Prepare("", os.Stderr)
	check(err)
	fmt.Println("repositories served:", served)
	srv := httptest.NewServer(s)
	defer srv.Close()

	// Reads are anonymous; pushing needs a member (a token, a signed push,
	// or SSH). A wrong token is refused, reads included.
	out, err := exec.Command("git", "ls-remote", srv.URL+"/team/app.git", "refs/hub/trust").Output()
	check(err)
	fmt.Println("anonymous read lists refs/hub/trust:", strings.Contains(string(out), "refs/hub/trust"))
	// What git sends first: the refs offer for a push (a GET), then the
	// push itself (a POST). Without a member the push is refused.
	probe := func(method, path, user, pass string) int {
		req, err := http.NewRequest(method, srv.URL+"/team/app.git"+path, strings.NewReader("0000"))
		check(err)
		if user != "" {
			req.SetBasicAuth(user, pass)
		}
		resp, err := http.DefaultClient.Do(req)
		check(err)
		resp.Body.Close()
		return resp.StatusCode
	}
	const offer = "/info/refs?service=git-receive-pack"
	fmt.Println("push, anonymous:", probe("POST", "/git-receive-pack", "", ""))
	fmt.Println("push offer, bob's token:", probe("GET", offer, "bob", token))
	fmt.Println("push offer, a wrong token:", probe("GET", offer, "bob", token+"x"))
	n, err := serve.RevokeTokens(in.GitDir, "bob", "")
	check(err)
	fmt.Println("revoked", n, "- push offer, bob's token:", probe("GET", offer, "bob", token))

	// Output:
	// token issued for bob true
	// repositories served: 1
	// anonymous read lists refs/hub/trust: true
	// push, anonymous: 401
	// push offer, bob's token: 200
	// push offer, a wrong token: 401
	// revoked 1 - push offer, bob's token: 401
}

// newKey writes an ed25519 private key file for name and loads it.
func newKey(dir, name string) *repo.Key {
	_, priv, err := ed25519.GenerateKey(nil)
	check(err)
	block, err := ssh.MarshalPrivateKey(priv, name)
	check(err)
	path := filepath.Join(dir, "."+name+".key") // a dot: serve does not look there
	check(os.WriteFile(path, pem.EncodeToMemory(block), 0o600))
	k, err := repo.LoadKey(path)
	check(err)
	return k
}

func check(err error) {
	if err != nil {
		log.Fatal(err)
	}
}
