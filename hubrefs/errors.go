package hubrefs

import (
	"errors"
	"fmt"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/gitplus/gitplus/receive/gitio"
)

// Sentinel errors; every error returned by this package that a caller may
// branch on wraps one of these (test with errors.Is).
var (
	// ErrUnsigned: the commit carries no gpgsig header.
	ErrUnsigned = errors.New("unsigned")
	// ErrBadSignature: the signature is malformed, not SSHSIG, in the wrong
	// namespace, one of several blocks, or does not verify.
	ErrBadSignature = errors.New("bad signature")
	// ErrCeiling: a ceiling (events per ref, payload bytes, parents) is exceeded.
	ErrCeiling = errors.New("over ceiling")
	// ErrMalformed: the object is not a well-formed event.
	ErrMalformed = errors.New("malformed event")
	// ErrUnknownType: the event's type is not one this version knows.
	ErrUnknownType = errors.New("unknown event type")
	// ErrMissing: an object the walk needs is not in the object store.
	ErrMissing = errors.New("missing object")
	// ErrNotForward: the new tip does not descend from the old one.
	ErrNotForward = errors.New("not a forward move")
	// ErrNotLinear: a hub log forks or joins; every hub log is one chain
	// (docs/trust.md).
	ErrNotLinear = errors.New("hub log is not linear")
	// ErrStale: the ref kept moving while appending; every attempt lost the
	// race. It is the push client's gitio.ErrPushStale.
	ErrStale = gitio.ErrPushStale
	// ErrRefused: the receiving repository's hook refused the update
	// (see RefusedError for its lines). It is gitio.ErrPushRefused.
	ErrRefused = gitio.ErrPushRefused
	// ErrKey: a key could not be loaded or found.
	ErrKey = errors.New("key unavailable")
)

// EventError names the event of a log at fault and wraps the reason, so
// errors.Is reaches the fold's sentinel. The folds (trust, pr, queue) return
// it with Log naming their kind of log.
type EventError struct {
	Log  string // "trust", "pull request", "queue"
	ID   plumbing.Hash
	Type string
	Err  error
}

func (e *EventError) Error() string {
	return fmt.Sprintf("%s event %s (%s): %v", e.Log, e.ID, e.Type, e.Err)
}

func (e *EventError) Unwrap() error { return e.Err }
