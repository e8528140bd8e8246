// Package hubrefs holds the records git+ keeps under refs/hub/*: signed events
// (empty-tree commits whose message is "<type>\n\n<JSON payload>\n"), their
// encoding, SSH signing and verification, reading a ref's event DAG in causal
// order, ceilings, and appending through git push. The folds (trust, pull
// requests, queues) live in subpackages and consume the Event values defined
// here.
//
// Decisions (beyond docs/events.md):
//
//   - Events are encoded and parsed by this package byte for byte, not through
//     go-git's object.Commit: the writer controls the exact bytes that are
//     signed, and the reader verifies the signature over the exact raw bytes it
//     read (minus the gpgsig header), with no re-encoding in between.
//   - Decode is strict about the commit: the headers must be exactly tree (the
//     empty tree), parent*, author, committer, gpgsig, in that order; any other
//     header (encoding, mergetag, gpgsig-sha256, ...) is ErrMalformed. Verify is
//     general (it also serves provenance checks of source commits): it strips
//     gpgsig and gpgsig-sha256 as git does and checks the one gpgsig block.
//   - An event must be signed: Decode refuses unsigned events (ErrUnsigned).
//     Decode proves which key signed; whether that key may write the event is
//     the trust fold's question.
//   - The payload must be valid UTF-8 and one JSON object whose top-level keys
//     are unique even ignoring case (encoding/json matches keys without regard
//     to case, so {"type":..,"Type":..} would be read differently by different
//     readers); "type" and "repo" must be non-empty strings. Then it must
//     hold exactly the keys its type declares, at every level, compared byte
//     for byte, each once (StrictUnmarshal; docs/events.md).
//   - Every hub log is linear (docs/trust.md): CheckNext says whether an
//     event may follow a log's tip; the folds refuse forks and joins
//     (ErrNotLinear). CausalOrder of a chain is the chain.
//   - Zero (or negative) fields of Ceilings mean the defaults. The object size
//     is bounded before it is read: payload ceiling plus 16 KiB for headers
//     and signature.
//   - Causal order among ready events: smaller committer time first, then the
//     smaller commit id (byte order of the hash, which equals hex order).
//     CausalOrder treats parents outside the given set as already delivered,
//     so it orders a suffix (ReadNew) the same way as a whole log.
//   - ReadLog decodes and verifies each event exactly once and verifies
//     signatures on all CPUs; the walk itself only parses headers.
//   - ReadNew refuses (ErrNotForward) when new does not descend from old: a hub
//     ref only moves forward. The events-per-ref ceiling bounds the events it
//     reads; the ref's total is the caller's to track (the fold cache).
//   - Append pushes through receive/gitio's push client (gitio.Push, the one
//     git+ has), with git's compare-and-swap (--force-with-lease=<ref>:<old>,
//     an empty <old> for a ref that must not exist yet), so a concurrent writer
//     makes the push fail as stale instead of being overwritten. On a stale
//     push (git's own report, or the hook's [ref-moved]) it fetches the ref
//     (for a remote other than "."), rebuilds the event on the new tip and
//     retries after a backoff with jitter (Backoff), for at most
//     AppendOptions.Patience (DefaultPatience, two minutes) without the ref
//     moving, MaxPatience (ten minutes) in all, or Attempts pushes when set.
//     A push that failed otherwise (git ended without reporting: a broken
//     pipe, a killed connection) is read back: the ref holding the event is
//     success, anything else is retried like a lost race. A hook refusal is
//     returned as *RefusedError (gitio.PushRefusedError) holding the hook's
//     "git+: ..." lines with git's "remote: " prefix removed.
//   - Append writes the event as a loose object with gitio.WriteLooseObject
//     and reads its ref with gitio's ref reader. Reading events takes any
//     storer.EncodedObjectStorer (gitio's layered store in production).
//     After a successful push to a remote, the clone's own copy of the ref
//     is moved to the new event (gitio.UpdateRef: git update-ref), so the
//     next append starts from the right tip.
//   - hubrefs never reads the environment; git subprocesses inherit it, plus
//     AppendOptions.Env. AgentSocket takes a getenv function from cmd.
package hubrefs
