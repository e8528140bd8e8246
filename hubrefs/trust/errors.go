package trust

import (
	"errors"
	"fmt"

	"github.com/go-git/go-git/v5/plumbing"
)

// Sentinel errors. Every error this package returns wraps one of them, so
// callers branch with errors.Is.
var (
	ErrMalformed     = errors.New("malformed payload")
	ErrUnknownType   = errors.New("unknown event type")
	ErrRepoMismatch  = errors.New("event names another repository")
	ErrUnsigned      = errors.New("event is not signed")
	ErrUnauthorized  = errors.New("signer may not write this event")
	ErrUnknownCap    = errors.New("unknown capability")
	ErrBadKey        = errors.New("bad key")
	ErrBadRef        = errors.New("bad ref name")
	ErrMemberExists  = errors.New("member already exists")
	ErrNoMember      = errors.New("no such member")
	ErrKeyInUse      = errors.New("key already belongs to another member")
	ErrLastAdmin     = errors.New("would leave no member holding repo.admin")
	ErrOrder         = errors.New("events are not a causally ordered DAG of one log")
	ErrUnknownField  = errors.New("unknown field")
	ErrInvalidRules  = errors.New("invalid rules")
	ErrInvalidStored = errors.New("stored trust log holds an event the boundary refuses")
)

// EventError names the event at fault. It wraps the reason, so errors.Is
// reaches the sentinel.
type EventError struct {
	ID   plumbing.Hash
	Type string
	Err  error
}

func (e *EventError) Error() string {
	return fmt.Sprintf("trust event %s (%s): %v", e.ID, e.Type, e.Err)
}

func (e *EventError) Unwrap() error { return e.Err }
