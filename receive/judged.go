package receive

import (
	"time"

	"github.com/gitplus/gitplus/policy"
	"github.com/gitplus/gitplus/receive/judgedrec"
)

// recordJudged records that the pre-receive accepted updates: post-receive
// finds the record and raises no unjudged-update alarm (receive/judgedrec,
// docs/operating.md "When a protected branch moves unjudged"). A failure
// to write it is ignored: the push is never refused for it.
func recordJudged(gitDir string, updates []policy.Update) {
	recs := make([]judgedrec.Update, len(updates))
	for i, u := range updates {
		recs[i] = judgedrec.Update{Ref: u.Ref, Old: u.Old.String(), New: u.New.String()}
	}
	_ = judgedrec.Judged(gitDir, recs, time.Now())
}
