package queuerun

import (
	"context"

	"github.com/gitplus/gitplus/hubrefs/queue"
	"github.com/gitplus/gitplus/receive/sourcebranch"
)

// deleteSources deletes, after a phase that landed pull requests took
// effect, their source branches when the target's rules say
// deleteSourceBranch (receive/sourcebranch): listed in the report's
// Deleted, a branch kept for a reason in its Warnings.
func (r *runner) deleteSources(ctx context.Context, st *state, plan queue.Plan) {
	if plan.Land == nil {
		return
	}
	if b, ok := st.trust.Rules.For(plan.Land.Ref); !ok || !b.DeleteSourceBranch {
		return
	}
	p := sourcebranch.Push{GitDir: r.o.GitDir, Remote: r.o.Remote, Env: r.o.Env, PushOptions: r.o.PushOptions, Sign: r.o.Sign}
	for _, x := range plan.Land.Landed {
		pst := st.prs[x.PR]
		if pst == nil || pst.Source == "" {
			continue
		}
		if ok, note := sourcebranch.Delete(ctx, p, st.trust.Rules, plan.Land.Ref, pst.Source, x.Head); ok {
			r.rep.Deleted = append(r.rep.Deleted, pst.Source)
		} else if note != "" {
			r.warn(note)
		}
	}
}
