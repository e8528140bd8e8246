package trust

import (
	"errors"

	"github.com/gitplus/gitplus/hubrefs"
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
	ErrNoTeam        = errors.New("no such team")
	ErrKeyInUse      = errors.New("key already belongs to another member")
	ErrLastAdmin     = errors.New("would leave no member holding repo.admin")
	ErrOrder         = errors.New("events are not a causally ordered DAG of one log")
	ErrUnknownField  = errors.New("unknown field")
	ErrInvalidRules  = errors.New("invalid rules")
	ErrInvalidStored = errors.New("stored trust log holds an event the boundary refuses")
)

// EventError names the event at fault and wraps the reason (see
// hubrefs.EventError).
type EventError = hubrefs.EventError

// eventErr is the EventError of ev in this package's log.
func eventErr(ev hubrefs.Event, err error) error {
	return &EventError{Log: "trust", ID: ev.ID, Type: ev.Type, Err: err}
}
