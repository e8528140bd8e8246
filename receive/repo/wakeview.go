package repo

import "time"

// WakeFailure is one of the server's wake rules whose latest run failed
// (docs/operating.md "When a wake rule fails"), as `git+ queue show`
// prints it: Text is the line ("wake rule ci failed 3 times since …:
// <its last output line>"). The caller fills QueueView.WakeFailures from
// the server's records (hooks.WakeFailingIn).
type WakeFailure struct {
	Rule     string    `json:"rule"`
	Failures int       `json:"failures"`
	Since    time.Time `json:"since"`
	Last     time.Time `json:"last"`
	Exit     int       `json:"exit"`
	Error    string    `json:"error,omitempty"`
	Line     string    `json:"line,omitempty"`
	Text     string    `json:"text"`
}
