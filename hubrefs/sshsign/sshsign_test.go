package sshsign

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/pem"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"
	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/agent"

	"github.com/gitplus/gitplus/fixtures"
	"github.com/gitplus/gitplus/hubrefs"
)

type testKey struct {
	signer ssh.Signer
	path   string // unencrypted OpenSSH private key file
}

func genKey(t testing.TB, kind string) testKey {
	t.Helper()
	k := fixtures.NewKeyOf(t, t.TempDir(), "id_"+kind, kind)
	return testKey{signer: k.Signer, path: k.Path}
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestLoadKeyFile: every key kind loads from its file and signs events
// that verify as that key.
func TestLoadKeyFile(t *testing.T) {
	for _, kind := range []string{"ed25519", "ecdsa", "rsa"} {
		is := is.New(t)
		k := genKey(t, kind)
		s, err := LoadKeyFile(k.path)
		is.NoErr(err)
		is.True(hubrefs.SameKey(s.PublicKey(), k.signer.PublicKey()))
		raw, err := hubrefs.EncodeEvent(hubrefs.Base{Type: hubrefs.TypePRClosed, Repo: "0190a0b2-0000-7000-8000-000000000001"}, nil, "alice", time.Unix(1700000000, 0), s)
		is.NoErr(err)
		ev, err := hubrefs.Decode(raw, hubrefs.Ceilings{})
		is.NoErr(err)
		is.True(hubrefs.SameKey(ev.Signer, k.signer.PublicKey()))
	}
}

func TestLoadKeyFileRefusals(t *testing.T) {
	is := is.New(t)
	dir := t.TempDir()
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	is.NoErr(err)
	block, err := ssh.MarshalPrivateKeyWithPassphrase(priv, "", []byte("secret"))
	is.NoErr(err)
	locked := filepath.Join(dir, "locked")
	is.NoErr(os.WriteFile(locked, pem.EncodeToMemory(block), 0o600))
	_, err = LoadKeyFile(locked)
	is.True(errors.Is(err, hubrefs.ErrKey))
	is.True(strings.Contains(err.Error(), "passphrase"))
	is.True(strings.Contains(err.Error(), "ssh-agent"))
	is.True(strings.Contains(err.Error(), locked))

	pubFile := filepath.Join(dir, "key.pub")
	s, _ := ssh.NewSignerFromKey(priv)
	is.NoErr(os.WriteFile(pubFile, ssh.MarshalAuthorizedKey(s.PublicKey()), 0o644))
	_, err = LoadKeyFile(pubFile)
	is.True(errors.Is(err, hubrefs.ErrKey))
	is.True(strings.Contains(err.Error(), "public key"))

	junk := filepath.Join(dir, "junk")
	is.NoErr(os.WriteFile(junk, []byte("hello"), 0o600))
	_, err = LoadKeyFile(junk)
	is.True(errors.Is(err, hubrefs.ErrKey))

	_, err = LoadKeyFile(filepath.Join(dir, "absent"))
	is.True(errors.Is(err, os.ErrNotExist))
}

// startAgent serves an in-memory ssh-agent holding keys on a unix socket.
func startAgent(t *testing.T, keys ...any) string {
	t.Helper()
	ring := agent.NewKeyring()
	for _, k := range keys {
		if err := ring.Add(agent.AddedKey{PrivateKey: k}); err != nil {
			t.Fatal(err)
		}
	}
	dir, err := os.MkdirTemp("", "agent")
	if err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(dir, "s")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close(); os.RemoveAll(dir) })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() { agent.ServeAgent(ring, c); c.Close() }()
		}
	}()
	return sock
}

func TestAgentSigner(t *testing.T) {
	is := is.New(t)
	_, edPriv, _ := ed25519.GenerateKey(rand.Reader)
	rsaKey := genKey(t, "rsa")
	rsaPriv, err := ssh.ParseRawPrivateKey(mustRead(t, rsaKey.path))
	is.NoErr(err)
	sock := startAgent(t, edPriv, rsaPriv)

	keys, err := AgentKeys(sock)
	is.NoErr(err)
	is.Equal(len(keys), 2)

	first, err := AgentSigner(sock, nil)
	is.NoErr(err)
	is.True(hubrefs.SameKey(first.PublicKey(), keys[0]))

	s, err := AgentSigner(sock, rsaKey.signer.PublicKey())
	is.NoErr(err)
	for _, signer := range []hubrefs.Signer{first, s} {
		raw, err := hubrefs.EncodeEvent(hubrefs.Base{Type: hubrefs.TypePRClosed, Repo: "0190a0b2-0000-7000-8000-000000000001"}, nil, "alice", time.Unix(1700000000, 0), signer)
		is.NoErr(err)
		ev, err := hubrefs.Decode(raw, hubrefs.Ceilings{})
		is.NoErr(err)
		is.True(hubrefs.SameKey(ev.Signer, signer.PublicKey()))
	}

	_, err = AgentSigner(sock, genKey(t, "ecdsa").signer.PublicKey())
	is.True(errors.Is(err, hubrefs.ErrKey))
	is.True(strings.Contains(err.Error(), "ssh-add"))

	empty := startAgent(t)
	_, err = AgentSigner(empty, nil)
	is.True(errors.Is(err, hubrefs.ErrKey))

	_, err = AgentSigner(filepath.Join(t.TempDir(), "nope"), nil)
	is.True(errors.Is(err, hubrefs.ErrKey))
}

func TestAgentSocket(t *testing.T) {
	is := is.New(t)
	sock, err := AgentSocket(func(k string) string {
		if k == "SSH_AUTH_SOCK" {
			return "/run/agent.sock"
		}
		return ""
	})
	is.NoErr(err)
	is.Equal(sock, "/run/agent.sock")
	_, err = AgentSocket(func(string) string { return "" })
	is.True(errors.Is(err, hubrefs.ErrKey))
}
