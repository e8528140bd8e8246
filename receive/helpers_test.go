package receive

import (
	"testing"

	"github.com/gitplus/gitplus/policy"
	"github.com/gitplus/gitplus/receive/gitio"
)

// TestPushClientCodes: the push client (gitio, below policy) recognises
// the hook's lost-race refusals by the codes policy and this package print.
func TestPushClientCodes(t *testing.T) {
	if gitio.CodeRefMoved != policy.CodeRefMoved {
		t.Errorf("gitio.CodeRefMoved %q, policy.CodeRefMoved %q", gitio.CodeRefMoved, policy.CodeRefMoved)
	}
	if gitio.CodePushCertNonce != CodePushCertNonce {
		t.Errorf("gitio.CodePushCertNonce %q, CodePushCertNonce %q", gitio.CodePushCertNonce, CodePushCertNonce)
	}
}
