package delivery

import (
	"strings"
	"testing"
)

func TestSignature(t *testing.T) {
	sig := Sign("k", []byte("body"))
	if !strings.HasPrefix(sig, "sha256=") || !VerifySignature("k", []byte("body"), sig) || VerifySignature("k2", []byte("body"), sig) {
		t.Fatalf("signature %s", sig)
	}
}
