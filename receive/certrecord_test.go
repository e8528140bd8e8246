package receive

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/gitplus/gitplus/fixtures"
	"github.com/gitplus/gitplus/hubrefs"
	"github.com/gitplus/gitplus/policy"
)

// isRefusal reports whether err is a refusal with code.
func isRefusal(err error, code string) bool {
	var r *pushRefusal
	return errors.As(err, &r) && r.code == code
}

// TestCertReplayKeyIsWhatIsSigned: the same signed text under another
// signature (ECDSA signatures differ every time; the bytes of the
// certificate differ) is the same certificate, refused the second time.
func TestCertReplayKeyIsWhatIsSigned(t *testing.T) {
	s := fixtures.NewKeyOf(t, t.TempDir(), "ec", "ecdsa").Signer
	up := policy.Update{Ref: "refs/heads/main", Old: plumbing.NewHash(certOld), New: plumbing.NewHash(certNew)}
	nonce := nonceAt(time.Now(), "aa")
	first := signCert(t, s, nonce, certOld+" "+certNew+" refs/heads/main")
	second := signCert(t, s, nonce, certOld+" "+certNew+" refs/heads/main")
	if bytes.Equal(first, second) {
		t.Fatal("two ECDSA signatures of one text are the same bytes; the test needs them to differ")
	}
	dir, objs, id := certRepo(t, first)
	id2 := fixtures.GitRaw(t, dir, second, "hash-object", "-w", "--stdin")
	env := PushFromEnviron([]string{"GIT_PUSH_CERT=" + id, "GIT_PUSH_CERT_NONCE=" + nonce, "GIT_PUSH_CERT_NONCE_STATUS=OK"})
	if _, err := env.pusher(dir, objs, []policy.Update{up}, everyone); err != nil {
		t.Fatalf("first use: %v", err)
	}
	env.Cert = string(bytes.TrimSpace([]byte(id2)))
	if _, err := env.pusher(dir, objs, []policy.Update{up}, everyone); !isRefusal(err, CodePushCertNonce) {
		t.Fatalf("the same signed text re-signed: %v, want [%s]", err, CodePushCertNonce)
	}
}

// TestUseCertConcurrent: of concurrent uses of one certificate exactly one
// passes.
func TestUseCertConcurrent(t *testing.T) {
	dir := t.TempDir()
	now := time.Now()
	c := &PushCert{Signed: []byte("the certificate"), Nonce: nonceAt(now, "aa")}
	var wg sync.WaitGroup
	var mu sync.Mutex
	passed, replays := 0, 0
	for i := 0; i < 16; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			err := useCert(dir, c, true, now)
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				passed++
			case isRefusal(err, CodePushCertNonce):
				replays++
			default:
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if passed != 1 || replays != 15 {
		t.Fatalf("%d passed, %d replays; want 1 and 15", passed, replays)
	}
	if !certUsed(dir, c) {
		t.Fatal("CertUsed does not see the record")
	}
}

// TestUseCertMembersOnly: a non-member's certificate leaves no record, but
// a record made while its key was a member's refuses it.
func TestUseCertMembersOnly(t *testing.T) {
	dir := t.TempDir()
	now := time.Now()
	c := &PushCert{Signed: []byte("by a stranger"), Nonce: nonceAt(now, "aa")}
	for i := 0; i < 3; i++ {
		if err := useCert(dir, c, false, now); err != nil {
			t.Fatalf("a non-member's certificate, use %d: %v", i, err)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, filepath.FromSlash(certDir))); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a non-member's certificate was recorded: %v", err)
	}
	if err := useCert(dir, c, true, now); err != nil {
		t.Fatal(err)
	}
	if err := useCert(dir, c, false, now); !isRefusal(err, CodePushCertNonce) {
		t.Fatalf("a recorded certificate used by a non-member: %v", err)
	}

	// Through the hook's path: the pusher is established either way; the
	// record exists only when the signer is a member.
	s := newSSHSigner(t)
	up := policy.Update{Ref: "refs/heads/main", Old: plumbing.NewHash(certOld), New: plumbing.NewHash(certNew)}
	nonce := nonceAt(now, "bb")
	raw := signCert(t, s, nonce, certOld+" "+certNew+" refs/heads/main")
	gitDir, objs, id := certRepo(t, raw)
	env := PushFromEnviron([]string{"GIT_PUSH_CERT=" + id, "GIT_PUSH_CERT_NONCE=" + nonce, "GIT_PUSH_CERT_NONCE_STATUS=OK"})
	cert, err := ParsePushCert(raw)
	if err != nil {
		t.Fatal(err)
	}
	if p, err := env.pusher(gitDir, objs, []policy.Update{up}, memberKey(newSSHSigner(t).PublicKey())); err != nil || !hubrefs.SameKey(p.Key, s.PublicKey()) {
		t.Fatalf("a non-member's signed push: %+v %v", p, err)
	}
	if certUsed(gitDir, cert) {
		t.Fatal("a non-member's certificate was recorded")
	}
	if _, err := env.pusher(gitDir, objs, []policy.Update{up}, memberKey(s.PublicKey())); err != nil {
		t.Fatal(err)
	}
	if !certUsed(gitDir, cert) {
		t.Fatal("a member's certificate was not recorded")
	}
}

// TestUseCertStale: a nonce over certRecordTTL from now, either way, or not
// of receive-pack's form is refused, recorded or not.
func TestUseCertStale(t *testing.T) {
	now := time.Now()
	for _, nonce := range []string{
		nonceAt(now.Add(-certRecordTTL-time.Second), "aa"),
		nonceAt(now.Add(certRecordTTL+time.Second), "aa"),
		"n1", "-aa", "12x-aa", "", "99999999999999999999-aa",
	} {
		for _, record := range []bool{true, false} {
			c := &PushCert{Signed: []byte("x"), Nonce: nonce}
			if err := useCert(t.TempDir(), c, record, now); !isRefusal(err, CodePushCertNonce) {
				t.Errorf("nonce %q (record %v): %v, want [%s]", nonce, record, err, CodePushCertNonce)
			}
		}
	}
	// At the edge it is still taken.
	c := &PushCert{Signed: []byte("x"), Nonce: nonceAt(now.Add(-certRecordTTL+time.Second), "aa")}
	if err := useCert(t.TempDir(), c, true, now); err != nil {
		t.Fatal(err)
	}
}

// TestCertRecordsBounded: three hours of pushes, one every 10 s, each with
// the nonce of its second: the directory never holds more than the pushes
// of certRecordTTL + 3 buckets, expired buckets go whole, a replay inside
// the hour is refused, and the older flat records are removed.
func TestCertRecordsBounded(t *testing.T) {
	dir := t.TempDir()
	root := filepath.Join(dir, filepath.FromSlash(certDir))
	if err := os.MkdirAll(root, 0o755); err != nil {
		t.Fatal(err)
	}
	flat := filepath.Join(root, fmt.Sprintf("%064x", 1))
	if err := os.WriteFile(flat, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	start := time.Unix(1_800_000_000, 0)
	const every = 10 * time.Second
	bound := int((certRecordTTL+3*certBucket)/every) + 1
	most := 0
	for i := 0; i < int(3*time.Hour/every); i++ {
		now := start.Add(time.Duration(i) * every)
		c := &PushCert{Signed: fmt.Appendf(nil, "push %d", i), Nonce: nonceAt(now, "aa")}
		if err := useCert(dir, c, true, now); err != nil {
			t.Fatalf("push %d: %v", i, err)
		}
		// Replayed 50 minutes later (inside the hour): refused.
		if i >= 300 {
			old := &PushCert{Signed: fmt.Appendf(nil, "push %d", i-300), Nonce: nonceAt(now.Add(-300*every), "aa")}
			if err := useCert(dir, old, true, now); !isRefusal(err, CodePushCertNonce) {
				t.Fatalf("push %d replayed at push %d: %v", i-300, i, err)
			}
		}
		if n := countRecords(t, root); n > most {
			most = n
		}
	}
	if most > bound {
		t.Fatalf("the directory held %d records, over the bound %d", most, bound)
	}
	if _, err := os.Stat(flat); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the record of the flat layout was kept: %v", err)
	}
	entries, _ := os.ReadDir(root)
	if len(entries) > int((certRecordTTL+3*certBucket)/certBucket)+1 {
		t.Fatalf("%d buckets after three hours", len(entries))
	}
}

func countRecords(t testing.TB, root string) int {
	t.Helper()
	n := 0
	buckets, err := os.ReadDir(root)
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range buckets {
		if !b.IsDir() {
			n++
			continue
		}
		rs, err := os.ReadDir(filepath.Join(root, b.Name()))
		if err != nil {
			t.Fatal(err)
		}
		n += len(rs)
	}
	return n
}

// memberKey says that only k is a member.
func memberKey(k hubrefs.PublicKey) func(hubrefs.PublicKey) bool {
	return func(o hubrefs.PublicKey) bool { return hubrefs.SameKey(k, o) }
}
