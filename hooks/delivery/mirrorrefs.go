package delivery

// Mirrors reconciled from refs (docs/delivery.md, "Mirrors follow the
// refs, not only the records").
//
// Decisions:
//   - A mirror's state keeps, beside the change counts post-receive records,
//     what the mirror was last known to hold: the digest of this
//     repository's refs/hub/* and refs/heads/* (what PushMirror pushes) as
//     the last successful sync read them before it pushed. A mirror whose
//     refs digest now differs is behind, whatever the counts say: a push
//     whose change could not be recorded (a full disk, post-receive killed)
//     still leaves the refs moved, and the next worker round, `git+ mirror
//     status` and `git+ mirror sync` see it.
//   - The digest is read before the push: a ref that moves while the sync
//     pushes makes the next look see a difference and sync once more, never
//     the reverse (a change marked carried that the mirror does not hold).
//   - A state recorded before the digest existed has none: its mirror is
//     behind once, and the next sync records one.
//   - Refs that cannot be read make the mirror behind, with the error: the
//     status says what it does not know rather than "in step".
//   - A state the worker cannot write (a full disk) stays, on disk and in
//     the worker's memory, the state before the sync — behind — with a
//     retry after a backoff that doubles per failed write (the mirror's
//     backoff_seconds up to backoff_max_seconds), so the worker neither
//     spins nor exits believing the mirror recorded in step: once a write
//     succeeds the state on disk is true again. A state another process
//     writes to the file meanwhile wins over the memory.

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"sort"
	"time"

	"github.com/gitplus/gitplus/receive/gitio"
)

// mirroredNamespaces are the refs PushMirror pushes.
var mirroredNamespaces = []string{"refs/hub/", "refs/heads/"}

// mirroredRefs is the digest of gitDir's refs under mirroredNamespaces:
// sha256 over "name id\n" lines in name order.
func mirroredRefs(gitDir string) (string, error) {
	refs, err := gitio.ReadRefsUnder(gitDir, mirroredNamespaces, nil)
	if err != nil {
		return "", fmt.Errorf("reading the refs mirrors carry: %w", err)
	}
	names := make([]string, 0, len(refs))
	for n := range refs {
		names = append(names, n)
	}
	sort.Strings(names)
	h := sha256.New()
	for _, n := range names {
		fmt.Fprintf(h, "%s %s\n", n, refs[n])
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// unwrittenStates holds, per mirror state file, the state this process
// failed to write (memo, spoolfull.go) and how many writes failed in a row.
var unwrittenStates = memo[unwrittenState]{m: map[string]unwritten[unwrittenState]{}}

type unwrittenState struct {
	st       MirrorState
	failures int // writes failed in a row
}

// keepUnwrittenMirror records in this process that r's state could not be
// written (werr): it stays before, to be retried after a backoff. It
// returns the state kept.
func keepUnwrittenMirror(gitDir string, r Remote, before MirrorState, werr error) MirrorState {
	u := unwrittenStates.keep(mirrorFile(gitDir, r.Name), func(was unwrittenState) unwrittenState {
		u := unwrittenState{failures: was.failures + 1}
		now := time.Now().UTC()
		before.LastError, before.LastErrorTime = clip("recording the mirror's state: "+werr.Error()), &now
		before.NextAttempt = now.Add(Backoff(u.failures, seconds(r.BackoffSeconds, DefaultBackoff), seconds(r.BackoffMaxSeconds, DefaultMirrorBackoff)))
		u.st = before
		return u
	})
	return u.st
}

// forgetUnwrittenMirror: r's state was written, the file holds the truth.
func forgetUnwrittenMirror(gitDir string, r Remote) {
	unwrittenStates.forget(mirrorFile(gitDir, r.Name))
}

// unwrittenMirror returns the state this process failed to write for r,
// while the file is still the one it failed to replace.
func unwrittenMirror(gitDir string, r Remote) (MirrorState, bool) {
	u, ok := unwrittenStates.get(mirrorFile(gitDir, r.Name))
	return u.st, ok
}
