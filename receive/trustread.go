package receive

// The trust state of a repository read from its git directory, for the
// server-side readers that are not the judgement (git+ hook check, the
// post-receive's unjudged-update alarm): refs/hub/trust's tip, the log
// through the fold cache the hook keeps (docs/foldcache.md).

import (
	"errors"
	"fmt"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/gitplus/gitplus/hubrefs"
	"github.com/gitplus/gitplus/hubrefs/trust"
	"github.com/gitplus/gitplus/policy"
	"github.com/gitplus/gitplus/receive/gitio"
)

// ReadTrust returns the trust state of the repository at gitDir, folded at
// the tip of refs/hub/trust, or nil (and no error) when the repository has
// no trust log.
func ReadTrust(gitDir string) (*trust.State, error) {
	tip, err := gitio.ReadRef(gitDir, hubrefs.TrustRef)
	if errors.Is(err, plumbing.ErrReferenceNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading %s in %s: %w", hubrefs.TrustRef, gitDir, err)
	}
	return readTrustAt(gitDir, tip)
}

func readTrustAt(gitDir string, tip plumbing.Hash) (*trust.State, error) {
	store, err := OpenStore(gitDir, QuarantineEnv{})
	if err != nil {
		return nil, fmt.Errorf("opening the objects of %s: %w", gitDir, err)
	}
	defer store.Close()
	st, err := (&policy.Reader{Objects: store, Cache: NewDirCache(gitDir)}).Trust(tip)
	if err != nil {
		return nil, fmt.Errorf("reading %s in %s: %w", hubrefs.TrustRef, gitDir, err)
	}
	return st, nil
}
