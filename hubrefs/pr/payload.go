package pr

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/gitplus/gitplus/hubrefs"
	"github.com/gitplus/gitplus/hubrefs/trust"
	"github.com/gitplus/gitplus/receive/termtext"
)

// Pull request states.
const (
	Open   = "open"
	Closed = "closed"
	Merged = "merged"
)

// Review verdicts and check conclusions.
const (
	Approve   = "approve"
	Changes   = "changes"
	Comment   = "comment"
	Success   = "success"
	Failure   = "failure"
	Cancelled = "cancelled"
)

// Sentinel errors; every error of this package wraps one.
var (
	ErrMalformed    = errors.New("malformed payload")
	ErrUnknownType  = errors.New("unknown event type")
	ErrRepoMismatch = errors.New("event names another repository")
	ErrUnsigned     = errors.New("event is not signed")
	ErrUnauthorized = errors.New("signer may not write this event")
	ErrState        = errors.New("event does not fit the pull request's state")
	ErrOrder        = errors.New("events are not a causally ordered DAG of one pull request")
)

// EventError names the event at fault and wraps the reason (see
// hubrefs.EventError).
type EventError = hubrefs.EventError

// eventErr is the EventError of ev in this package's log.
func eventErr(ev hubrefs.Event, err error) error {
	return &EventError{Log: "pull request", ID: ev.ID, Type: ev.Type, Err: err}
}

// ValidOID reports whether s is a commit id as payloads write it: 40
// lower-case hex digits.
func ValidOID(s string) error {
	if len(s) != 40 {
		return fmt.Errorf("%w: %q is not a commit id (40 lower-case hex digits)", ErrMalformed, clip(s))
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return fmt.Errorf("%w: %q is not a commit id (40 lower-case hex digits)", ErrMalformed, s)
		}
	}
	return nil
}

// ValidThreadID reports whether s may name a thread: 1 to 128 ASCII
// letters, digits, '.', '_' and '-'.
func ValidThreadID(s string) error {
	if s == "" || len(s) > 128 {
		return fmt.Errorf("%w: thread id %q must be 1 to 128 bytes", ErrMalformed, clip(s))
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-') {
			return fmt.Errorf("%w: thread id %q: only letters, digits and . _ - are allowed", ErrMalformed, s)
		}
	}
	return nil
}

func clip(s string) string {
	if len(s) > 48 {
		return s[:48] + "..."
	}
	return s
}

// payload is one decoded, validated event payload; which fields are set
// depends on the type.
type payload struct {
	id, base, head, title, body string
	verdict                     string
	thread                      string
	name, conclusion, url       string
	sandbox                     string // check.completed: how the command ran
	revision, branch, commit    string
	trust                       string // pr.merged: the trust tip it names
	source                      string
	draft                       bool
	review, reason              string // review.dismissed
}

func field(name string, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("%s: %w", name, err)
}

// checkBase checks the payload's type and repository against the event and
// repoID.
func checkBase(ev hubrefs.Event, base hubrefs.Base, repoID string) error {
	if base.Type != ev.Type {
		return fmt.Errorf("%w: payload type %q differs from the message's %q", ErrMalformed, base.Type, ev.Type)
	}
	if ev.Repo != "" && ev.Repo != base.Repo {
		return fmt.Errorf("%w: payload repo %q differs from the event's %q", ErrRepoMismatch, base.Repo, ev.Repo)
	}
	if repoID != "" && base.Repo != repoID {
		return fmt.Errorf("%w: repo %q, but this repository is %q", ErrRepoMismatch, base.Repo, repoID)
	}
	return nil
}

// baseOnly decodes only the payload's type and repository and checks them;
// it gives the errors decode gives before looking at any other field.
func baseOnly(ev hubrefs.Event, repoID string) error {
	var base hubrefs.Base
	if err := json.Unmarshal(ev.Payload, &base); err != nil {
		return fmt.Errorf("%w: payload is not a JSON object: %w", ErrMalformed, err)
	}
	return checkBase(ev, base, repoID)
}

// decode validates ev's payload on its own. repoID "" skips the repository
// check (fuzzing only). The payload is decoded once, into the typed struct
// of its type (each embeds hubrefs.Base): by ev.PayloadInto, which hands
// over the value decoded when the event was read, if any (docs/scale.md,
// "Cold reads"); only when that fails is it decoded again, to report the
// type and repository checks first as before.
func decode(ev hubrefs.Event, repoID string) (payload, error) {
	unmarshal := func(v any, base *hubrefs.Base) error {
		if err := ev.PayloadInto(v); err != nil {
			if berr := baseOnly(ev, repoID); berr != nil {
				return berr
			}
			return fmt.Errorf("%w: %w", ErrMalformed, err)
		}
		return checkBase(ev, *base, repoID)
	}
	var p payload
	switch ev.Type {
	case hubrefs.TypePROpened:
		var v hubrefs.PROpened
		if err := unmarshal(&v, &v.Base); err != nil {
			return p, err
		}
		if err := trust.ValidUUID(v.ID); err != nil {
			return p, field("id", fmt.Errorf("%w: %w", ErrMalformed, err))
		}
		if err := trust.ValidBranch(v.BaseRef); err != nil {
			return p, field("base", fmt.Errorf("%w: %w", ErrMalformed, err))
		}
		if err := ValidOID(v.Head); err != nil {
			return p, field("head", err)
		}
		if strings.TrimSpace(v.Title) == "" || strings.ContainsAny(v.Title, "\r\n\t") || !termtext.Plain(v.Title) || len(v.Title) > 1024 {
			return p, field("title", fmt.Errorf("%w: the title must be one non-blank line of at most 1024 bytes, without control characters (docs/events.md)", ErrMalformed))
		}
		if v.Source != "" {
			if err := trust.ValidBranch(v.Source); err != nil {
				return p, field("source", fmt.Errorf("%w: %w", ErrMalformed, err))
			}
		}
		p.id, p.base, p.head, p.title, p.body, p.source, p.draft = v.ID, v.BaseRef, v.Head, v.Title, v.Body, v.Source, v.Draft
	case hubrefs.TypePRUpdated:
		var v hubrefs.PRUpdated
		if err := unmarshal(&v, &v.Base); err != nil {
			return p, err
		}
		if err := ValidOID(v.Head); err != nil {
			return p, field("head", err)
		}
		p.head = v.Head
	case hubrefs.TypePRRetargeted:
		var v hubrefs.PRRetargeted
		if err := unmarshal(&v, &v.Base); err != nil {
			return p, err
		}
		if err := trust.ValidBranch(v.BaseRef); err != nil {
			return p, field("base", fmt.Errorf("%w: %w", ErrMalformed, err))
		}
		p.base = v.BaseRef
	case hubrefs.TypePRClosed, hubrefs.TypePRReopened, hubrefs.TypePRDraft, hubrefs.TypePRReady:
		var v hubrefs.Base
		if err := unmarshal(&v, &v); err != nil {
			return p, err
		}
	case hubrefs.TypeReviewSubmit:
		var v hubrefs.Review
		if err := unmarshal(&v, &v.Base); err != nil {
			return p, err
		}
		if err := headAndBase(v.Head, v.BaseRef); err != nil {
			return p, err
		}
		switch v.Verdict {
		case Approve, Changes, Comment:
		default:
			return p, field("verdict", fmt.Errorf("%w: %q; use approve, changes or comment", ErrMalformed, v.Verdict))
		}
		p.head, p.base, p.verdict, p.body = v.Head, v.BaseRef, v.Verdict, v.Body
	case hubrefs.TypeReviewDismiss:
		var v hubrefs.ReviewDismissed
		if err := unmarshal(&v, &v.Base); err != nil {
			return p, err
		}
		if err := ValidOID(v.Review); err != nil {
			return p, field("review", err)
		}
		if err := reasonGiven("a dismissal", v.Reason); err != nil {
			return p, err
		}
		p.review, p.reason = v.Review, v.Reason
	case hubrefs.TypePRBypassed:
		var v hubrefs.PRBypassed
		if err := unmarshal(&v, &v.Base); err != nil {
			return p, err
		}
		if err := headAndBase(v.Head, v.BaseRef); err != nil {
			return p, err
		}
		if err := reasonGiven("a bypass", v.Reason); err != nil {
			return p, err
		}
		p.head, p.base, p.reason = v.Head, v.BaseRef, v.Reason
	case hubrefs.TypeThreadOpened, hubrefs.TypeThreadResolved:
		var v hubrefs.Thread
		if err := unmarshal(&v, &v.Base); err != nil {
			return p, err
		}
		if err := ValidThreadID(v.Thread); err != nil {
			return p, field("thread", err)
		}
		p.thread, p.body = v.Thread, v.Body
	case hubrefs.TypeCheckStarted, hubrefs.TypeCheckCompleted:
		var v hubrefs.Check
		if err := unmarshal(&v, &v.Base); err != nil {
			return p, err
		}
		if err := trust.ValidCheckName(v.Name); err != nil {
			return p, field("name", fmt.Errorf("%w: %w", ErrMalformed, err))
		}
		if err := ValidOID(v.Head); err != nil {
			return p, field("head", err)
		}
		switch {
		case ev.Type == hubrefs.TypeCheckStarted && v.Conclusion != "":
			return p, field("conclusion", fmt.Errorf("%w: check.started has no conclusion; write check.completed", ErrMalformed))
		case ev.Type == hubrefs.TypeCheckCompleted && v.Conclusion != Success && v.Conclusion != Failure && v.Conclusion != Cancelled:
			return p, field("conclusion", fmt.Errorf("%w: %q; use success, failure or cancelled", ErrMalformed, v.Conclusion))
		}
		switch {
		case v.Output != "" && ev.Type != hubrefs.TypeCheckCompleted:
			return p, field("output", fmt.Errorf("%w: only check.completed carries output", ErrMalformed))
		case v.Worker != "" && ev.Type != hubrefs.TypeCheckStarted:
			return p, field("worker", fmt.Errorf("%w: only check.started names its worker", ErrMalformed))
		case len(v.Worker) > 128:
			return p, field("worker", fmt.Errorf("%w: %d bytes, at most 128", ErrMalformed, len(v.Worker)))
		case len(v.Output) > hubrefs.MaxCheckOutput:
			return p, field("output", fmt.Errorf("%w: %d bytes, at most %d (the tail of the output)", ErrMalformed, len(v.Output), hubrefs.MaxCheckOutput))
		case v.Sandbox != "" && ev.Type != hubrefs.TypeCheckCompleted:
			return p, field("sandbox", fmt.Errorf("%w: only check.completed says how its command ran", ErrMalformed))
		}
		if v.Sandbox != "" {
			if err := ValidSandbox(v.Sandbox); err != nil {
				return p, field("sandbox", err)
			}
		}
		p.name, p.head, p.conclusion, p.url, p.sandbox = v.Name, v.Head, v.Conclusion, v.URL, v.Sandbox
	case hubrefs.TypePRMerged:
		var v hubrefs.PRMerged
		if err := unmarshal(&v, &v.Base); err != nil {
			return p, err
		}
		if err := ValidOID(v.Revision); err != nil {
			return p, field("revision", err)
		}
		if err := trust.ValidBranch(v.Branch); err != nil {
			return p, field("branch", fmt.Errorf("%w: %w", ErrMalformed, err))
		}
		if err := ValidOID(v.Commit); err != nil {
			return p, field("commit", err)
		}
		if v.Trust != "" { // absent in records written before it existed
			if err := ValidOID(v.Trust); err != nil {
				return p, field("trust", err)
			}
		}
		p.revision, p.branch, p.commit, p.trust = v.Revision, v.Branch, v.Commit, v.Trust
	default:
		if err := baseOnly(ev, repoID); err != nil {
			return p, err
		}
		return p, fmt.Errorf("%w %q in a pull request ref", ErrUnknownType, ev.Type)
	}
	return p, nil
}

// headAndBase checks the head and base fields an event names together.
func headAndBase(head, baseRef string) error {
	if err := ValidOID(head); err != nil {
		return field("head", err)
	}
	if err := trust.ValidBranch(baseRef); err != nil {
		return field("base", fmt.Errorf("%w: %w", ErrMalformed, err))
	}
	return nil
}

// reasonGiven checks the reason a dismissal or a bypass must give.
func reasonGiven(what, reason string) error {
	if strings.TrimSpace(reason) == "" || len(reason) > 4096 {
		return field("reason", fmt.Errorf("%w: %s says why, in 1 to 4096 bytes", ErrMalformed, what))
	}
	return nil
}
