package policy

// Every pr.merged naming a landing tells the truth about it (docs/boundary.md,
// "Verification"; issue #35): the audit justifies a landing by the first
// record that does, so a false record naming the same commit — one pull
// request's pr.merged claiming another's landing, say through squash
// trailers alone — would otherwise go unseen while `pr show` calls its pull
// request merged. A record is true to its commit C when C is its revision,
// a merge step whose second parent is its revision, a squash step of the
// branch binding its pull request at its revision under the rules its
// landing is judged by or the current ones (squashstep.go, the test the
// hook applies), or contains its revision (what the hook's rule accepts).

import (
	"errors"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/gitplus/gitplus/hubrefs/trust"
)

// falseRecords returns a finding for each pr.merged naming the landing c
// that is not true to it or that no hook judged (setEpochs); the error is
// an object that cannot be read.
func (a *auditor) falseRecords(c *commit) ([]AuditFinding, error) {
	var out []AuditFinding
	for _, m := range a.mergedBy[c.id] {
		if m.thenErr != nil {
			var r *refusal
			if errors.As(m.thenErr, &r) {
				out = append(out, AuditFinding{Commit: c.id, Code: r.Code, Reason: r.Reason})
				continue
			}
			return nil, m.thenErr
		}
		ok, err := a.carries(c, m)
		if err != nil {
			return nil, err
		}
		if !ok {
			out = append(out, AuditFinding{Commit: c.id, Code: CodeMergedNotLanded, Reason: a.notCarried(c, m)})
		}
	}
	return out, nil
}

// carries reports whether landing c carried the revision pr.merged m names.
func (a *auditor) carries(c *commit, m *mergedRef) (bool, error) {
	rev := plumbing.NewHash(m.rec.Revision)
	if rev == c.id || len(c.parents) == 2 && c.parents[1] == rev {
		return true, nil
	}
	for _, t := range []*trust.State{m.then, a.now} {
		b, _ := t.Rules.For(a.branch)
		ok, err := a.j.isSquashStep(c.id, b, m.p.st.ID, rev, false)
		if err != nil || ok {
			return ok, err
		}
	}
	ok, err := a.j.commits.isAncestor(rev, c.id)
	if err != nil && !isMissing(err) {
		return false, err
	}
	return ok, nil
}

// notCarried says why c did not carry m's revision.
func (a *auditor) notCarried(c *commit, m *mergedRef) string {
	rev := plumbing.NewHash(m.rec.Revision)
	why := ""
	if c2, err := a.j.commits.get(c.id); err == nil && a.j.squashTip(c2) {
		b, _ := m.then.Rules.For(a.branch)
		why = "; it is no squash step binding them either: " + a.j.squashNotStep(c.id, b, m.p.st.ID, rev)
	}
	return "pr.merged " + short(m.ev.ID) + " of pull request " + m.p.st.ID + " says " + short(c.id) + " carried its head " + short(rev) +
		", but " + short(c.id) + " neither is, merges nor contains it" + why + ": the record is false, and the pull request's change did not land here"
}
