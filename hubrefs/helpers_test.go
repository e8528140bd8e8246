package hubrefs

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/storer"
	"github.com/hiddeco/sshsig"
	"golang.org/x/crypto/ssh"

	"github.com/gitplus/gitplus/fixtures"
	"github.com/gitplus/gitplus/receive/gitio"
)

// TestMain isolates every git this package's tests run (directly or through
// Append/Fetch, which inherit the environment) from the machine's config.
func TestMain(m *testing.M) {
	home, err := os.MkdirTemp("", "hubrefs-home-")
	if err != nil {
		panic(err)
	}
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(k, "GIT_") || k == "SSH_AUTH_SOCK" {
			os.Unsetenv(k)
		}
	}
	os.Setenv("HOME", home)
	os.Setenv("XDG_CONFIG_HOME", home)
	os.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	os.Setenv("GIT_CONFIG_GLOBAL", "/dev/null")
	for _, kv := range []string{"GIT_AUTHOR_NAME=Test", "GIT_AUTHOR_EMAIL=test@example.invalid",
		"GIT_COMMITTER_NAME=Test", "GIT_COMMITTER_EMAIL=test@example.invalid",
		"GIT_AUTHOR_DATE=1700000000 +0000", "GIT_COMMITTER_DATE=1700000000 +0000"} {
		k, v, _ := strings.Cut(kv, "=")
		os.Setenv(k, v)
	}
	code := m.Run()
	os.RemoveAll(home)
	os.Exit(code)
}

// git runs git in dir and returns its trimmed stdout; it fails the test on error.
func git(t testing.TB, dir string, args ...string) string {
	t.Helper()
	out, err := gitErr(dir, nil, args...)
	if err != nil {
		t.Fatalf("git %s: %v", strings.Join(args, " "), err)
	}
	return out
}

func gitErr(dir string, stdin []byte, args ...string) (string, error) {
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		return strings.TrimSpace(out.String() + errb.String()), fmt.Errorf("%w: %s", err, strings.TrimSpace(errb.String()))
	}
	return strings.TrimSpace(out.String() + errb.String()), nil
}

func bareRepo(t testing.TB) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "repo.git")
	git(t, ".", "init", "-q", "--bare", "-b", "main", dir)
	return dir
}

// memStore is a map-backed storer.EncodedObjectStorer.
type memStore struct {
	mu   sync.Mutex
	objs map[plumbing.Hash]plumbing.EncodedObject
}

func newMemStore() *memStore { return &memStore{objs: map[plumbing.Hash]plumbing.EncodedObject{}} }

func (m *memStore) NewEncodedObject() plumbing.EncodedObject { return &plumbing.MemoryObject{} }
func (m *memStore) SetEncodedObject(o plumbing.EncodedObject) (plumbing.Hash, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.objs[o.Hash()] = o
	return o.Hash(), nil
}
func (m *memStore) EncodedObject(t plumbing.ObjectType, h plumbing.Hash) (plumbing.EncodedObject, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	o, ok := m.objs[h]
	if !ok || (t != plumbing.AnyObject && o.Type() != t) {
		return nil, plumbing.ErrObjectNotFound
	}
	return o, nil
}
func (m *memStore) IterEncodedObjects(plumbing.ObjectType) (storer.EncodedObjectIter, error) {
	return nil, fmt.Errorf("not supported")
}
func (m *memStore) HasEncodedObject(h plumbing.Hash) error {
	_, err := m.EncodedObject(plumbing.AnyObject, h)
	return err
}
func (m *memStore) EncodedObjectSize(h plumbing.Hash) (int64, error) {
	o, err := m.EncodedObject(plumbing.AnyObject, h)
	if err != nil {
		return 0, err
	}
	return o.Size(), nil
}
func (m *memStore) AddAlternate(string) error { return fmt.Errorf("not supported") }

func (m *memStore) putRaw(t plumbing.ObjectType, raw []byte) plumbing.Hash {
	o := &plumbing.MemoryObject{}
	o.SetType(t)
	o.Write(raw)
	h, _ := m.SetEncodedObject(o)
	return h
}

// newLooseStore opens the object store of a git directory through gitio,
// the reader and writer the hook and the CLI use.
func newLooseStore(gitDir string) *gitio.Store {
	s, err := gitio.OpenStore(gitDir, gitio.QuarantineEnv{})
	if err != nil {
		panic(err)
	}
	return s
}

// testKey is a generated key with its private key file.
type testKey struct {
	name   string
	signer ssh.Signer
	path   string // unencrypted OpenSSH private key file
}

func genKey(t testing.TB, kind string) testKey {
	t.Helper()
	k := fixtures.NewKeyOf(t, t.TempDir(), "id_"+kind, kind)
	return testKey{name: kind, signer: k.Signer, path: k.Path}
}

var (
	edOnce sync.Once
	edKey  ssh.Signer
)

// quickSigner is a process-wide ed25519 signer for tests that need any key.
func quickSigner() Signer {
	edOnce.Do(func() {
		_, priv, _ := ed25519.GenerateKey(rand.Reader)
		edKey, _ = ssh.NewSignerFromKey(priv)
	})
	return newTestSigner(edKey)
}

// testSigner signs as hubrefs/sshsign does (which these internal tests
// cannot import: it imports hubrefs).
type testSigner struct{ s ssh.Signer }

func newTestSigner(s ssh.Signer) Signer { return testSigner{s} }

func (t testSigner) PublicKey() PublicKey { return t.s.PublicKey() }

func (t testSigner) Sign(msg []byte) ([]byte, error) {
	sig, err := sshsig.Sign(bytes.NewReader(msg), t.s, sshsig.HashSHA512, SigNamespace)
	if err != nil {
		return nil, err
	}
	return sshsig.Armor(sig), nil
}

// loadTestKey reads an unencrypted private key file into a signer.
func loadTestKey(t testing.TB, path string) Signer {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	s, err := ssh.ParsePrivateKey(data)
	if err != nil {
		t.Fatal(err)
	}
	return newTestSigner(s)
}

// rawOf reads an object's content.
func rawOf(t testing.TB, o plumbing.EncodedObject) []byte {
	t.Helper()
	r, err := o.Reader()
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

const testRepo = "0190a0b2-0000-7000-8000-000000000001"

func closed() Base { return Base{Type: TypePRClosed, Repo: testRepo} }

// writeLoose and localRef are gitio's writer and ref reader under the names
// these tests use.
func writeLoose(gitDir string, t plumbing.ObjectType, raw []byte) (plumbing.Hash, error) {
	return gitio.WriteLooseObject(gitDir, t, raw)
}

func localRef(gitDir, ref string, env []string) (plumbing.Hash, error) {
	return gitio.RemoteRef(context.Background(), gitDir, ".", ref, env)
}
