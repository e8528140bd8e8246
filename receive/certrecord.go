package receive

// The records of used push certificates (docs/serving.md "Replayed
// certificates").
//
// Decisions:
//   - The replay key is the SHA-256 of PushCert.Signed: the text the
//     signature covers, nonce and command lines included. Bytes outside it
//     (the armor) do not count, so re-encoding a certificate does not make
//     it new; ParsePushCert refuses non-canonical armor besides.
//   - A record is an empty file gitplus/push-certs/<bucket>/<key in hex>,
//     created with O_EXCL, so that of concurrent uses of one certificate
//     exactly one passes.
//   - <bucket> is the certificate's nonce time (receive-pack's nonce is
//     "<unix seconds>-<HMAC>"; the nonce status OK vouches for it) rounded
//     down to certBucket, in decimal seconds. One certificate always maps to
//     one bucket, whenever it is replayed.
//   - The hook refuses (push-cert-nonce) a certificate whose nonce is more
//     than certRecordTTL from now, whatever receive.certNonceSlop allows.
//     So a bucket whose newest second is more than certRecordTTL old can
//     never be asked about again: it is removed whole, one bucket later
//     for margin.
//   - Only the certificate of a current member is recorded. Anyone can sign
//     a certificate; a non-member's would fill the directory before the
//     pusher is judged. A non-member's certificate is still looked up (a
//     record made while the key was a member's refuses it), and a
//     non-member is refused wherever the rules require a known pusher.
//   - A certificate counts as used only by a push that took effect: when
//     the judgement refuses the push (pre-receive then refuses all of it,
//     and git applies nothing), the record this push made is removed again
//     (forgetCert). So a push refused for its content (a bad object, a
//     missing approval) and pushed again unchanged within the same second
//     (receive-pack's nonce is per second, so its certificate is the same
//     text) is judged again, not taken for a replay; and a replay of a
//     refused push can at most make the one update its signer signed take
//     effect once, under the same expected old values. A replay of a push
//     that took effect stays refused.
//   - The sweep runs only when a push creates a new bucket, so at most once
//     per certBucket in the steady state, and reads only the top directory
//     (a handful of buckets). No push lists the records themselves. The
//     directory holds at most the members' signed pushes of the last
//     certRecordTTL + 2 certBucket (BenchmarkCertRecord shows it).

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// certDir holds the records of used certificates, under the git directory.
const certDir = "gitplus/push-certs"

// certRecordTTL is how long a certificate is remembered, from its nonce
// time; an older certificate is refused.
const certRecordTTL = time.Hour

// certBucket is the width of a bucket of records.
const certBucket = 10 * time.Minute

// nonceTime returns the time at the front of a nonce receive-pack issued
// ("<unix seconds>-<HMAC>"); false for any other form.
func nonceTime(nonce string) (time.Time, bool) {
	stamp, _, ok := strings.Cut(nonce, "-")
	if !ok || stamp == "" || len(stamp) > 12 || strings.TrimLeft(stamp, "0123456789") != "" {
		return time.Time{}, false
	}
	n, err := strconv.ParseInt(stamp, 10, 64)
	if err != nil {
		return time.Time{}, false
	}
	return time.Unix(n, 0), true
}

// certRecord returns the bucket directory and the record file of c.
func certRecord(gitDir string, c *PushCert, at time.Time) (bucket, file string) {
	w := int64(certBucket / time.Second)
	b := at.Unix() / w * w
	sum := sha256.Sum256(c.Signed)
	bucket = filepath.Join(gitDir, filepath.FromSlash(certDir), strconv.FormatInt(b, 10))
	return bucket, filepath.Join(bucket, hex.EncodeToString(sum[:]))
}

// CheckCertUnused refuses, as the hook would (an error reading "[code]
// reason", code push-cert-nonce), a certificate whose nonce is not
// receive-pack's or over certRecordTTL from now, or that was used before in
// gitDir. It records nothing: git+ serve asks it before receive-pack runs.
func CheckCertUnused(gitDir string, c *PushCert, now time.Time) error {
	return useCert(gitDir, c, false, now)
}

// certUsed reports whether c was recorded as used in gitDir; false for a
// certificate whose nonce is not receive-pack's.
func certUsed(gitDir string, c *PushCert) bool {
	at, ok := nonceTime(c.Nonce)
	if !ok {
		return false
	}
	_, file := certRecord(gitDir, c, at)
	_, err := os.Lstat(file)
	return err == nil
}

// forgetCert removes the record of c that this push made, for a push the
// judgement refused (see the decisions above). A record that is not there
// (c was not recorded: its signer is no member) is no error.
func forgetCert(gitDir string, c *PushCert) {
	if at, ok := nonceTime(c.Nonce); ok {
		_, file := certRecord(gitDir, c, at)
		os.Remove(file)
	}
}

// replayRefusal is the refusal of a certificate used before.
func replayRefusal() error {
	return certRefusal(CodePushCertNonce, "this push certificate was used before (a replay: what it signs, nonce and commands, was pushed already); sign a new push (git push --signed)")
}

// useCert refuses c if it is stale or was used before and, when record is
// true, records it as used.
func useCert(gitDir string, c *PushCert, record bool, now time.Time) error {
	at, ok := nonceTime(c.Nonce)
	if !ok {
		return certRefusal(CodePushCertNonce, "the push certificate's nonce %q is not of the form receive-pack issues (<seconds>-<hmac>); push again with git push --signed", c.Nonce)
	}
	if d := now.Sub(at); d > certRecordTTL || d < -certRecordTTL {
		return certRefusal(CodePushCertNonce, "the push certificate's nonce was issued at %s, more than %s from now (%s): a stale certificate; push again", at.UTC().Format(time.RFC3339), certRecordTTL, now.UTC().Format(time.RFC3339))
	}
	bucket, file := certRecord(gitDir, c, at)
	if !record {
		if _, err := os.Lstat(file); err == nil {
			return replayRefusal()
		}
		return nil
	}
	root := filepath.Dir(bucket)
	for try := 0; ; try++ {
		if err := os.MkdirAll(root, 0o755); err != nil {
			return fmt.Errorf("recording the push certificate in %s: %w", root, err)
		}
		created := true
		if err := os.Mkdir(bucket, 0o755); errors.Is(err, os.ErrExist) {
			created = false
		} else if err != nil {
			return fmt.Errorf("recording the push certificate in %s: %w", bucket, err)
		}
		f, err := os.OpenFile(file, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
		if errors.Is(err, os.ErrExist) {
			return replayRefusal()
		}
		if errors.Is(err, os.ErrNotExist) && try == 0 {
			continue // a concurrent sweep removed the bucket at its edge
		}
		if err != nil {
			return fmt.Errorf("recording the push certificate in %s: %w", bucket, err)
		}
		f.Close()
		if created {
			sweepCerts(root, now)
		}
		return nil
	}
}

// certExpired reports whether the bucket starting at start can be removed
// at now: every nonce in it is over certRecordTTL old, by one bucket more.
func certExpired(start int64, now time.Time) bool {
	return now.Sub(time.Unix(start, 0)) > certRecordTTL+2*certBucket
}

// sweepCerts removes the expired buckets under root, and the records of
// the older flat layout (files named by the SHA-256 of a certificate's raw
// bytes, which nothing reads any more).
func sweepCerts(root string, now time.Time) {
	entries, err := os.ReadDir(root)
	if err != nil {
		return
	}
	for _, e := range entries {
		p := filepath.Join(root, e.Name())
		if !e.IsDir() {
			if len(e.Name()) == 2*sha256.Size {
				os.Remove(p)
			}
			continue
		}
		if start, err := strconv.ParseInt(e.Name(), 10, 64); err == nil && certExpired(start, now) {
			os.RemoveAll(p)
		}
	}
}
