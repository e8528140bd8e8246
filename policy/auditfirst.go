package policy

// The branch's first commit in the audit (docs/cli.md, "verify"): a
// protected branch that did not exist is created like any landing, by a
// pull request's head (`git+ pr merge` creating it), and `verify --branch`
// reports that landing like the others. Before, the audit started above
// the root commit and said nothing of it.
//
// Decisions:
//   - Only an audit from the root (no --since), and only when a record
//     names the root: a pr.merged of it, or a pull request proposing it.
//     It is judged as any direct landing (justify); justified, it is the
//     report's first landing and counts among the commits audited.
//   - A root no record names (pushed before the branch was protected), or
//     one whose records do not justify it, stays the base the audit starts
//     from, as before: it is not a finding.

// first adds the branch's root commit root to rep when a pull request
// justifies it.
func (a *auditor) first(rep *AuditReport, root *commit) {
	if len(a.mergedBy[root.id]) == 0 && len(a.headsBy[root.id]) == 0 {
		return
	}
	l, err := a.justify(root)
	if err != nil || l.PR == "" {
		return
	}
	rep.Landings = append(rep.Landings, l)
	rep.Commits++
	rep.First = true
}
