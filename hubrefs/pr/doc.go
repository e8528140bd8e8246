// Package pr folds one pull request ref, refs/hub/pr/<uuid> (docs/events.md),
// and judges new pull request events for the boundary. Pure: a function of
// decoded, signature-verified events in causal order and a trust state.
//
// Two judgements, two trust states (docs/trust.md). Authorize decides whether
// a NEW event may be written, against the trust state current at the push.
// Fold replays STORED events, which the boundary already admitted against the
// trust of their own push, so structural events (pr.opened, pr.updated,
// pr.retargeted, pr.closed, pr.reopened, pr.merged, thread.opened,
// thread.resolved) always apply, even if their signer has since left. What
// grants authority is re-judged against the trust state given to Fold (or
// Rejudge), so a removed member's approvals and checks stop counting at once:
//
//   - Approvals: for each current member (found by the review's signing key
//     in t; a key no longer a member's counts for nobody) the latest review
//     with a verdict, in causal order, is theirs. It counts if it is approve,
//     names the current head and the current base, the member holds
//     hub.review and is not the opener. A comment carries no verdict and
//     neither grants nor withdraws an approval; changes after approve
//     withdraws it; moving the head or retargeting stales every approval.
//   - ApproverTeams: the teams (in t) of each member whose approval counts
//     above, which a branch's "approvers" are matched against
//     (State.ReviewAt; docs/trust.md, "Who counts").
//   - Vetoes: the current members holding hub.review, not the opener,
//     whose latest verdict is changes — whatever head it named — and not
//     dismissed by a review.dismissed whose signer currently holds
//     hub.bypass (docs/trust.md, "Vetoes").
//   - Checks: the latest check.completed per (name, revision) among those
//     whose signer currently holds hub.check:<name> (repo.admin implies it).
//     Filtering comes first: removing a rogue CI key brings back the honest
//     result it overwrote. check.started records nothing; a re-run is a newer
//     check.completed for the same key.
//
// Drafts (docs/events.md, "Drafts"): pr.opened with "draft": true, or
// pr.draft, makes Draft true; pr.ready makes it false. A draft never passes
// ReviewAt. pr.draft and pr.ready need the opener holding hub.pr or a
// repo.admin, an open pull request and a real change; review.dismissed
// needs hub.bypass and names a changes review of this pull request not
// dismissed before.
//
// Decisions where the design is silent:
//   - The opener is the key that signed pr.opened; "not the opener" also
//     excludes whichever member holds that key now. pr.updated, pr.retargeted,
//     pr.closed and pr.reopened need the opener still holding hub.pr, or a
//     repo.admin.
//   - States: updated and retargeted need an open pull request and a real
//     change; closed needs open; reopened needs closed. Merged is final: no
//     reopen, close, update or retarget after pr.merged; reviews, threads and
//     checks may still be written. pr.merged needs hub.queue or source.push,
//     an open or closed (not merged) pull request, and a revision that was a
//     head the pull request proposed (State.Heads). The opener cannot approve
//     their own pull request (refused outright, not merely not counted).
//     thread.opened of an existing id and thread.resolved of an unknown or
//     resolved one are refused.
//   - The log is linear (docs/trust.md): each event's only parent is the
//     one before it; the fold refuses a fork or a join (hubrefs.ErrNotLinear).
//     closed/reopened never undo merged, a second pr.merged adds a record.
//     The boundary also accepts pr.merged only for what landed
//     (docs/events.md).
//   - Payloads: ids are lower-case canonical UUIDs; commit ids are 40
//     lower-case hex digits; base and branch are full refs/heads/... names;
//     titles are one non-blank line of at most 1024 bytes, without control
//     characters (termtext.Plain, no tab; docs/events.md "Titles"); thread ids are 1–128
//     letters, digits, '.', '_', '-'; check names follow trust.ValidCheckName.
//     Payloads decode strictly (docs/events.md): unknown, repeated or
//     case- or Unicode-folded keys are refused; so are unknown types. That the ref's
//     name matches the root's id is the caller's check.
package pr
