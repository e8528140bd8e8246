// Package trust folds refs/hub/trust (docs/trust.md): members, their keys and
// capabilities, and the rules protecting branches. The fold is pure: a
// function of decoded, signature-verified events in causal order.
//
// # Rules
//
// Every field of a branch's protection is optional with the docs/trust.md
// default: requirePullRequest true, requiredApprovals 1, requiredChecks
// ["ci"], requireResolvedThreads false, requireProvenance false,
// queueCandidates false, queueDepth 8. An absent (or null) requiredChecks
// is ["ci"]; an explicit [] requires no checks (Branch.RequiredChecks nil).
// Ceilings default to eventsPerRef 10000 and eventBytes 65536; the docs/events.md
// parents-per-event ceiling is the optional field ceilings.parentsPerEvent
// (default 8). A trust log without rules.set protects nothing.
//
// Decisions where the design is silent:
//   - Field names match exactly (case-sensitive). ParseRulesStrict refuses
//     an unknown field at any level, naming its path; ParseRules ignores it.
//     Both decode through the same code, so a document both accept gives the
//     same Rules. The fold and the boundary parse rules.set strictly, and
//     event decoding refuses a repeated key at any level (docs/events.md).
//   - Keys are full ref names (refs/...) by git's check-ref-format rules, or
//     globs where '*' matches any run of characters inside one path segment
//     (refs/heads/release/* does not match refs/heads/release/a/b). "**" is
//     refused. Keys under refs/hub/ are refused: hub refs follow the event
//     rules, not branch protection.
//   - Precedence in Rules.For: an exact key, then the longest matching glob,
//     then the one with fewer '*', then the lexically smaller key.
//   - requiredApprovals ≥ 0; queueDepth ≥ 1 (queueCandidates false is the
//     only way to turn candidates off); every ceiling ≥ 1; required check
//     names are valid check names and not repeated.
//
// # Names, keys, capabilities
//
// Member names are 1–64 ASCII letters, digits, '.', '_', '-' (they appear in
// commit identities and allowed-signers files). Keys are one authorized_keys
// line without options, of type ed25519, ecdsa or rsa; KeyLine keeps the
// normalised "<type> <base64>" form. A key belongs to at most one member.
// Capabilities are repo.admin (implies all), source.push, source.tag, hub.pr, hub.review,
// hub.queue, hub.bypass and hub.check:<name>; an unknown one, or one listed twice, is
// refused. RepoIDs are lower-case canonical UUIDs (any version).
//
// # The fold
//
// repo.created is the root, signed by the admin key it names; it is never
// written again. member.added, member.changed (a full replacement of key and
// capabilities), member.removed, team.set and rules.set need a signer holding
// repo.admin in the state before the event. team.set lists current members
// only; member.removed takes the member out of every team; rules.set
// naming an approver that is neither a member nor a defined team
// ("team:NAME") is refused (docs/trust.md, "Teams", "Who counts"). member.added of an existing name, member.changed
// or member.removed of an unknown one, a key already held by another member,
// and any change leaving no member with repo.admin are refused: the last rule
// keeps the trust log writable.
//
// A stored event the boundary would have refused means the boundary was
// bypassed: Fold fails closed with ErrInvalidStored and an *EventError
// naming the event, rather than skipping it. Authorize is that same
// judgement for a new event; State.Apply applies a linear append in place
// (the fold cache's fast path).
//
// The log is linear (docs/trust.md): every event's only parent is the
// event before it, and Fold refuses a fork or a join (ErrOrder wrapping
// hubrefs.ErrNotLinear), as the boundary refuses to store one. So each event
// is judged against the one state its predecessor left, the state the
// boundary judged it against, on every replica: no event written on an older
// state (where a since-removed admin still held repo.admin) takes effect.
// State.Skipped is always empty for such a log; it stays in the State so
// cached states keep their format.
package trust
