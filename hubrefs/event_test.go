package hubrefs

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/hiddeco/sshsig"
	"github.com/matryer/is"
	"golang.org/x/crypto/ssh"
)

var keyKinds = []string{"ed25519", "ecdsa", "rsa"}

func TestRoundTrip(t *testing.T) {
	for _, kind := range keyKinds {
		t.Run(kind, func(t *testing.T) {
			is := is.New(t)
			k := genKey(t, kind)
			fromFile := loadTestKey(t, k.path)
			is.True(SameKey(fromFile.PublicKey(), k.signer.PublicKey()))
			for _, s := range []Signer{newTestSigner(k.signer), fromFile} {
				parent := plumbing.NewHash("1111111111111111111111111111111111111111")
				p := PROpened{Base: Base{Type: TypePROpened, Repo: testRepo}, ID: "pr-1", BaseRef: "refs/heads/main",
					Head: strings.Repeat("ab", 20), Title: "Add <things> & \"quotes\"\nsecond line"}
				obj, err := NewEvent(p, []plumbing.Hash{parent}, "alice", time.Unix(1700000123, 0), s)
				is.NoErr(err)
				raw := rawOf(t, obj)
				is.True(bytes.HasPrefix(raw, []byte("tree 4b825dc642cb6eb9a060e54bf8d69288fbee4904\nparent 1111111111111111111111111111111111111111\nauthor alice <alice@hub.invalid> 1700000123 +0000\ncommitter alice <alice@hub.invalid> 1700000123 +0000\ngpgsig -----BEGIN SSH SIGNATURE-----\n ")))
				is.True(bytes.Contains(raw, []byte(" -----END SSH SIGNATURE-----\n\npr.opened\n\n{\"type\":\"pr.opened\",")))
				is.True(bytes.HasSuffix(raw, []byte("}\n")))

				ev, err := Decode(raw, Ceilings{})
				is.NoErr(err)
				is.Equal(ev.ID, obj.Hash())
				is.Equal(ev.Type, TypePROpened)
				is.Equal(ev.Repo, testRepo)
				is.Equal(ev.Parents, []plumbing.Hash{parent})
				is.Equal(ev.Time, int64(1700000123))
				is.True(SameKey(ev.Signer, k.signer.PublicKey()))
				var back PROpened
				is.NoErr(ev.Unmarshal(&back))
				is.Equal(back, p)

				pub, err := Verify(raw)
				is.NoErr(err)
				is.True(SameKey(pub, k.signer.PublicKey()))

				st := newMemStore()
				st.SetEncodedObject(obj)
				ev2, err := ReadEvent(st, obj.Hash(), Ceilings{})
				is.NoErr(err)
				is.Equal(ev2.ID, ev.ID)
			}
		})
	}
}

func requireSSHKeygen(t *testing.T) {
	if _, err := exec.LookPath("ssh-keygen"); err != nil {
		t.Skip("ssh-keygen not on PATH; git cannot sign or verify SSH signatures")
	}
}

// TestGitVerifiesGoSignature: git verify-commit accepts events signed here.
func TestGitVerifiesGoSignature(t *testing.T) {
	t.Parallel()
	requireSSHKeygen(t)
	repo := bareRepo(t)
	for _, kind := range keyKinds {
		t.Run(kind, func(t *testing.T) {
			is := is.New(t)
			k := genKey(t, kind)
			raw, err := EncodeEvent(Review{Base: Base{Type: TypeReviewSubmit, Repo: testRepo}, Head: "h", BaseRef: "refs/heads/main", Verdict: "approve"},
				nil, "alice", time.Unix(1700000000, 0), newTestSigner(k.signer))
			is.NoErr(err)
			id, err := writeLoose(repo, plumbing.CommitObject, raw)
			is.NoErr(err)
			allowed := filepath.Join(t.TempDir(), "allowed_signers")
			is.NoErr(os.WriteFile(allowed, []byte("alice "+AuthorizedKey(k.signer.PublicKey())+"\n"), 0o644))
			git(t, repo, "config", "gpg.format", "ssh")
			git(t, repo, "config", "gpg.ssh.allowedSignersFile", allowed)
			out, err := gitErr(repo, nil, "verify-commit", "-v", id.String())
			is.NoErr(err)
			is.True(strings.Contains(out, `Good "git" signature for alice`)) // git's verdict
			git(t, repo, "fsck", "--strict", "--no-dangling")

			// a key not in the allowed signers file is not good for alice
			other := genKey(t, "ed25519")
			raw2, err := EncodeEvent(closed(), nil, "alice", time.Unix(1700000000, 0), newTestSigner(other.signer))
			is.NoErr(err)
			id2, err := writeLoose(repo, plumbing.CommitObject, raw2)
			is.NoErr(err)
			out, err = gitErr(repo, nil, "verify-commit", id2.String())
			is.True(err != nil) // git: "Good ... with key ..., No principal matched", exit 1
			is.True(!strings.Contains(out, `signature for alice`))
			is.True(strings.Contains(out, "No principal matched"))
		})
	}
}

// TestGoVerifiesGitSignature: commits git signs with an SSH key decode here.
func TestGoVerifiesGitSignature(t *testing.T) {
	t.Parallel()
	requireSSHKeygen(t)
	repo := bareRepo(t)
	for _, kind := range keyKinds {
		t.Run(kind, func(t *testing.T) {
			is := is.New(t)
			k := genKey(t, kind)
			msg := filepath.Join(t.TempDir(), "msg")
			is.NoErr(os.WriteFile(msg, []byte("pr.closed\n\n{\"type\":\"pr.closed\",\"repo\":\""+testRepo+"\"}\n"), 0o644))
			cmd := exec.Command("git", "-c", "gpg.format=ssh", "-c", "user.signingkey="+k.path,
				"commit-tree", "-S", EmptyTree.String(), "-F", msg)
			cmd.Dir = repo
			cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=alice", "GIT_AUTHOR_EMAIL=alice@hub.invalid",
				"GIT_COMMITTER_NAME=alice", "GIT_COMMITTER_EMAIL=alice@hub.invalid")
			out, err := cmd.CombinedOutput()
			is.NoErr(err)
			id := plumbing.NewHash(strings.TrimSpace(string(out)))
			raw := []byte(git(t, repo, "cat-file", "commit", id.String()) + "\n")
			is.Equal(plumbing.ComputeHash(plumbing.CommitObject, raw), id)

			pub, err := Verify(raw)
			is.NoErr(err)
			is.True(SameKey(pub, k.signer.PublicKey()))
			ev, err := Decode(raw, Ceilings{})
			is.NoErr(err)
			is.Equal(ev.ID, id)
			is.Equal(ev.Type, TypePRClosed)
			is.Equal(ev.Time, int64(1700000000))
			is.True(SameKey(ev.Signer, k.signer.PublicKey()))

			// altering one byte of the message breaks git's signature here too
			bad := bytes.Replace(raw, []byte(`"pr.closed","repo"`), []byte(`"pr.closed","rep\u006f"`), 1)
			_, err = Verify(bad)
			is.True(errors.Is(err, ErrBadSignature))
		})
	}
}

// unsignedBody builds a commit body without signature.
func unsignedBody(tree string, parents []string, msg string) []byte {
	var b strings.Builder
	b.WriteString("tree " + tree + "\n")
	for _, p := range parents {
		b.WriteString("parent " + p + "\n")
	}
	b.WriteString("author bob <bob@hub.invalid> 1700000000 +0000\n")
	b.WriteString("committer bob <bob@hub.invalid> 1700000000 +0000\n")
	b.WriteString("\n" + msg)
	return []byte(b.String())
}

// insertSig puts a gpgsig header holding armored right before the blank line.
func insertSig(body []byte, armored string) []byte {
	i := bytes.Index(body, []byte("\n\n"))
	hdr := "gpgsig " + strings.ReplaceAll(strings.TrimRight(armored, "\n"), "\n", "\n ") + "\n"
	out := append([]byte{}, body[:i+1]...)
	out = append(out, hdr...)
	return append(out, body[i+1:]...)
}

func sshSign(t testing.TB, s ssh.Signer, body []byte, ns string, h sshsig.HashAlgorithm) string {
	t.Helper()
	sig, err := sshsig.Sign(bytes.NewReader(body), s, h, ns)
	if err != nil {
		t.Fatal(err)
	}
	return string(sshsig.Armor(sig))
}

func TestDecodeRefusals(t *testing.T) {
	k := genKey(t, "ed25519")
	s := k.signer
	payload := func(typ string) string { return `{"type":"` + typ + `","repo":"` + testRepo + `"}` }
	msg := func(first, p string) string { return first + "\n\n" + p + "\n" }
	good := unsignedBody(EmptyTree.String(), nil, msg("pr.closed", payload("pr.closed")))
	signed := func(body []byte) []byte { return insertSig(body, sshSign(t, s, body, "git", sshsig.HashSHA512)) }
	ok := signed(good)
	nine := []string{}
	for i := 0; i < 9; i++ {
		nine = append(nine, strings.Repeat(string("123456789"[i]), 40))
	}
	big := `{"type":"pr.closed","repo":"` + testRepo + `","body":"` + strings.Repeat("x", 70<<10) + `"}`
	sigOnly := sshSign(t, s, good, "git", sshsig.HashSHA512)

	cases := []struct {
		name string
		raw  []byte
		c    Ceilings
		want error
	}{
		{"unsigned", good, Ceilings{}, ErrUnsigned},
		{"wrong namespace", insertSig(good, sshSign(t, s, good, "file", sshsig.HashSHA512)), Ceilings{}, ErrBadSignature},
		{"altered payload key", bytes.Replace(ok, []byte(`"repo"`), []byte(`"rePo"`), 1), Ceilings{}, ErrMalformed}, // shape is checked before the signature
		{"altered message", bytes.Replace(ok, []byte(testRepo), []byte(strings.Replace(testRepo, "1", "2", 1)), 1), Ceilings{}, ErrBadSignature},
		{"altered time", bytes.Replace(ok, []byte("committer bob <bob@hub.invalid> 1700000000"), []byte("committer bob <bob@hub.invalid> 1700000001"), 1), Ceilings{}, ErrBadSignature},
		{"two gpgsig headers", insertSig(ok, sigOnly), Ceilings{}, ErrBadSignature},
		{"two blocks in one header", insertSig(good, sigOnly+sigOnly), Ceilings{}, ErrBadSignature},
		{"pgp signature", insertSig(good, "-----BEGIN PGP SIGNATURE-----\n\nabc\n-----END PGP SIGNATURE-----\n"), Ceilings{}, ErrBadSignature},
		{"garbage signature", insertSig(good, "-----BEGIN SSH SIGNATURE-----\nAAAA\n-----END SSH SIGNATURE-----\n"), Ceilings{}, ErrBadSignature},
		{"type mismatch", signed(unsignedBody(EmptyTree.String(), nil, msg("pr.closed", payload("pr.reopened")))), Ceilings{}, ErrMalformed},
		{"unknown type", signed(unsignedBody(EmptyTree.String(), nil, msg("pr.exploded", payload("pr.exploded")))), Ceilings{}, ErrUnknownType},
		{"over payload ceiling", signed(unsignedBody(EmptyTree.String(), nil, msg("pr.closed", big))), Ceilings{}, ErrCeiling},
		{"over lowered ceiling", ok, Ceilings{EventBytes: 20}, ErrCeiling},
		{"too many parents", signed(unsignedBody(EmptyTree.String(), nine, msg("pr.closed", payload("pr.closed")))), Ceilings{}, ErrCeiling},
		{"duplicate parent", signed(unsignedBody(EmptyTree.String(), []string{nine[0], nine[0]}, msg("pr.closed", payload("pr.closed")))), Ceilings{}, ErrMalformed},
		{"non-empty tree", signed(unsignedBody(strings.Repeat("5", 40), nil, msg("pr.closed", payload("pr.closed")))), Ceilings{}, ErrMalformed},
		{"payload not an object", signed(unsignedBody(EmptyTree.String(), nil, msg("pr.closed", `["pr.closed"]`))), Ceilings{}, ErrMalformed},
		{"payload null", signed(unsignedBody(EmptyTree.String(), nil, msg("pr.closed", `null`))), Ceilings{}, ErrMalformed},
		{"payload trailing data", signed(unsignedBody(EmptyTree.String(), nil, msg("pr.closed", payload("pr.closed")+"{}"))), Ceilings{}, ErrMalformed},
		{"payload without repo", signed(unsignedBody(EmptyTree.String(), nil, msg("pr.closed", `{"type":"pr.closed"}`))), Ceilings{}, ErrMalformed},
		{"repo not a string", signed(unsignedBody(EmptyTree.String(), nil, msg("pr.closed", `{"type":"pr.closed","repo":7}`))), Ceilings{}, ErrMalformed},
		{"duplicate key", signed(unsignedBody(EmptyTree.String(), nil, msg("pr.closed", `{"type":"pr.closed","repo":"r","type":"pr.closed"}`))), Ceilings{}, ErrMalformed},
		{"key differing in case", signed(unsignedBody(EmptyTree.String(), nil, msg("pr.closed", `{"type":"pr.closed","repo":"r","Type":"pr.merged"}`))), Ceilings{}, ErrMalformed},
		{"invalid utf-8", signed(unsignedBody(EmptyTree.String(), nil, msg("pr.closed", "{\"type\":\"pr.closed\",\"repo\":\"r\xff\"}"))), Ceilings{}, ErrMalformed},
		{"no blank line after type", signed(unsignedBody(EmptyTree.String(), nil, "pr.closed\n"+payload("pr.closed")+"\n")), Ceilings{}, ErrMalformed},
		{"extra header", signed(bytes.Replace(good, []byte("\n\n"), []byte("\nencoding ISO-8859-1\n\n"), 1)), Ceilings{}, ErrMalformed},
		{"bad committer", signed(bytes.Replace(good, []byte("committer bob <bob@hub.invalid> 1700000000 +0000"), []byte("committer bob"), 1)), Ceilings{}, ErrMalformed},
		{"upper-case hex parent", signed(unsignedBody(EmptyTree.String(), []string{strings.Repeat("A", 40)}, msg("pr.closed", payload("pr.closed")))), Ceilings{}, ErrMalformed},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Decode(tc.raw, tc.c)
			if !errors.Is(err, tc.want) {
				t.Fatalf("Decode: got %v, want %v", err, tc.want)
			}
			if !strings.Contains(err.Error(), "event ") {
				t.Fatalf("error does not name the event: %v", err)
			}
		})
	}
	t.Run("control: the unaltered event decodes", func(t *testing.T) {
		ev, err := Decode(ok, Ceilings{})
		if err != nil {
			t.Fatal(err)
		}
		if !SameKey(ev.Signer, s.PublicKey()) {
			t.Fatal("wrong signer")
		}
	})
	t.Run("sha256 signatures verify", func(t *testing.T) {
		if _, err := Decode(insertSig(good, sshSign(t, s, good, "git", sshsig.HashSHA256)), Ceilings{}); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("nine parents under a raised ceiling", func(t *testing.T) {
		raw := signed(unsignedBody(EmptyTree.String(), nine, msg("pr.closed", payload("pr.closed"))))
		ev, err := Decode(raw, Ceilings{Parents: 9})
		if err != nil || len(ev.Parents) != 9 {
			t.Fatalf("got %v, %d parents", err, len(ev.Parents))
		}
	})
	t.Run("object over the size ceiling is not read", func(t *testing.T) {
		st := newMemStore()
		id := st.putRaw(plumbing.CommitObject, signed(unsignedBody(EmptyTree.String(), nil, msg("pr.closed", big))))
		_, err := ReadEvent(st, id, Ceilings{})
		if !errors.Is(err, ErrCeiling) || !strings.Contains(err.Error(), id.String()) {
			t.Fatalf("got %v", err)
		}
		blob := st.putRaw(plumbing.BlobObject, []byte("hello"))
		if _, err := ReadEvent(st, blob, Ceilings{}); !errors.Is(err, ErrMalformed) {
			t.Fatalf("blob: got %v", err)
		}
	})
}

func TestEncodeRefusals(t *testing.T) {
	s := quickSigner()
	when := time.Unix(1700000000, 0)
	p := plumbing.NewHash(strings.Repeat("1", 40))
	cases := []struct {
		name    string
		payload any
		parents []plumbing.Hash
		who     string
		signer  Signer
		want    error
	}{
		{"unknown type", Base{Type: "pr.exploded", Repo: testRepo}, nil, "alice", s, ErrUnknownType},
		{"no repo", Base{Type: TypePRClosed}, nil, "alice", s, ErrMalformed},
		{"not an object", json.RawMessage(`[1]`), nil, "alice", s, ErrMalformed},
		{"unmarshalable", map[string]any{"f": func() {}}, nil, "alice", s, ErrMalformed},
		{"bad name", closed(), nil, "al<ice>", s, ErrMalformed},
		{"name with newline", closed(), nil, "alice\nparent x", s, ErrMalformed},
		{"empty name", closed(), nil, "", s, ErrMalformed},
		{"duplicate parents", closed(), []plumbing.Hash{p, p}, "alice", s, ErrMalformed},
		{"zero parent", closed(), []plumbing.Hash{{}}, "alice", s, ErrMalformed},
		{"no signer", closed(), nil, "alice", nil, ErrUnsigned},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := EncodeEvent(tc.payload, tc.parents, tc.who, when, tc.signer); !errors.Is(err, tc.want) {
				t.Fatalf("got %v, want %v", err, tc.want)
			}
		})
	}
	// raw payload bytes are accepted as written, but only with the keys
	// their type declares (docs/events.md)
	if _, err := EncodeEvent(json.RawMessage(`{"type":"pr.closed","repo":"r","extra":[1,2]}`), nil, "Ann Lee", when, s); !errors.Is(err, ErrMalformed) {
		t.Fatalf("an unknown key was written: %v", err)
	}
	raw, err := EncodeEvent(json.RawMessage(` {"type":"pr.closed", "repo":"r"} `), nil, "Ann Lee", when, s)
	if err != nil {
		t.Fatal(err)
	}
	ev, err := Decode(raw, Ceilings{})
	if err != nil || string(ev.Payload) != `{"type":"pr.closed", "repo":"r"}` {
		t.Fatalf("got %v %s", err, ev.Payload)
	}
}
