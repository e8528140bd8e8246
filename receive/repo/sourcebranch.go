package repo

import (
	"context"

	"github.com/gitplus/gitplus/receive/sourcebranch"
)

// Merge is the direct landing (merge, pr.go), then, when the base's rules
// say deleteSourceBranch, the deletion of the pull request's source branch
// (receive/sourcebranch) once pr.merged is recorded.
func (s *Signing) Merge(id string) (*Merged, error) {
	res, err := s.merge(id)
	if err != nil {
		return nil, err
	}
	st, _, err := s.Repo.PRState(res.ID, s.Trust)
	if err != nil || st.Source == "" {
		return res, nil
	}
	p := sourcebranch.Push{GitDir: s.Repo.GitDir, Remote: s.Repo.Remote, Sign: s.Key.PushSigning()}
	if ok, note := sourcebranch.Delete(context.Background(), p, s.Trust.Rules, res.Branch, st.Source, st.Head); ok {
		res.SourceDeleted = st.Source
	} else {
		res.SourceNote = note
	}
	return res, nil
}
