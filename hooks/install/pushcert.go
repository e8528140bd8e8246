package install

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
)

// CertNonceSlop is the receive.certNonceSlop Install sets when none is set:
// how many seconds a signed push over HTTP may take between reading the
// refs (when the server issues the nonce) and sending the push. Over HTTP
// each request is a new receive-pack, which accepts a nonce it issued
// earlier only within this slop (docs/serving.md "Signed pushes").
const CertNonceSlop = "300"

// configurePushCerts lets the repository take signed pushes: receive-pack
// advertises push certificates only with receive.certNonceSeed set. An
// existing seed or slop is kept (a new seed would invalidate nonces issued
// a moment ago).
func configurePushCerts(dir string) error {
	if out, err := git(dir, "config", "--get", "receive.certNonceSeed"); err != nil || out == "" {
		var b [32]byte
		if _, err := rand.Read(b[:]); err != nil {
			return fmt.Errorf("generating receive.certNonceSeed for %s: %w", dir, err)
		}
		if out, err := setConfig(dir, "receive.certNonceSeed", hex.EncodeToString(b[:])); err != nil {
			return fmt.Errorf("setting receive.certNonceSeed in %s: %v: %s: %w", dir, err, out, ErrInstall)
		}
	}
	// receive-pack checks an SSH-signed certificate itself too, and without
	// gpg.ssh.allowedSignersFile prints an error line to the pusher of a
	// push that then succeeds. The hook does the real verification against
	// the trust log; an empty allowed-signers file keeps receive-pack quiet
	// (docs/serving.md "Signed pushes").
	if out, err := git(dir, "config", "--get", "gpg.ssh.allowedSignersFile"); err != nil || out == "" {
		if out, err := setConfig(dir, "gpg.ssh.allowedSignersFile", os.DevNull); err != nil {
			return fmt.Errorf("setting gpg.ssh.allowedSignersFile in %s: %v: %s: %w", dir, err, out, ErrInstall)
		}
	}
	if out, err := git(dir, "config", "--get", "receive.certNonceSlop"); err != nil || out == "" {
		if out, err := setConfig(dir, "receive.certNonceSlop", CertNonceSlop); err != nil {
			return fmt.Errorf("setting receive.certNonceSlop in %s: %v: %s: %w", dir, err, out, ErrInstall)
		}
	}
	return nil
}
