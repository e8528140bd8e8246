package repo

import (
	"context"
	"fmt"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/gitplus/gitplus/hubrefs"
)

// appendMerged appends the pr.merged p to pull request id's log, naming as
// the trust it was written under the tip of refs/hub/trust on the receiving
// side, read again for every attempt: the hook refuses a pr.merged naming
// another tip as a moved ref, and the audit judges the landing's rules by
// it (docs/events.md, "pr.merged"; docs/trust.md, "The rules in force").
func (s *Signing) appendMerged(id string, p hubrefs.PRMerged) (plumbing.Hash, error) {
	rebuild := func(ctx context.Context) (any, error) {
		tip, err := s.Repo.RemoteRef(hubrefs.TrustRef)
		if err != nil {
			return nil, err
		}
		if tip.IsZero() {
			return nil, fmt.Errorf("%s has no %s", s.Repo.Where(), hubrefs.TrustRef)
		}
		p.Trust = tip.String()
		return p, nil
	}
	p.Trust = s.Trust.Tip.String()
	return s.appendWith(hubrefs.PRRefPrefix+id, p, rebuild)
}
