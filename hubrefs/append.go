package hubrefs

import (
	"context"
	"errors"
	"fmt"
	"math/rand"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/gitplus/gitplus/receive/clock"
	"github.com/gitplus/gitplus/receive/gitio"
)

// AppendOptions says what to append where.
type AppendOptions struct {
	// GitDir is the repository the event object is written into and pushed
	// from (a bare repository, or a work tree's .git; a work tree root is
	// accepted too).
	GitDir string
	// Remote receives the push: "." (default: GitDir itself, through its own
	// receive hooks), a path, a URL or a remote name such as "origin".
	Remote string
	// Ref is the hub ref, e.g. refs/hub/trust.
	Ref string
	// Payload is the typed payload (see MarshalPayload).
	Payload any
	// Signer signs the event; Name is the member name in author/committer.
	Signer Signer
	Name   string
	// Now is the clock events are dated by (default clock.Now).
	Now func() time.Time
	// PushOptions are passed as git push --push-option (the receiver must
	// set receive.advertisePushOptions).
	PushOptions []string
	// Env is added to the environment git runs with (which is inherited).
	Env []string
	// Sign, when set, signs each push with a push certificate if the
	// receiver asks for one (docs/serving.md "git+ verbs identify
	// themselves"): the key the event is signed with, so a member pushing
	// over HTTP needs no token.
	Sign *gitio.PushSigning
	// Attempts, when positive, bounds the pushes when the ref keeps moving;
	// zero means no count bound (Patience bounds the time).
	Attempts int
	// Patience bounds the time spent retrying without progress: a push that
	// keeps losing while the ref stands still, or keeps failing in transport
	// (default DefaultPatience). While the ref keeps moving — other writers
	// are landing — retries go on up to MaxPatience (default
	// DefaultMaxPatience), so a writer that lost many races in a row under
	// load is not starved out. Retries back off with jitter, re-reading the
	// tip each time (docs/queue.md, "Concurrent writers").
	Patience time.Duration
	// MaxPatience bounds the whole retrying, moving ref or not.
	MaxPatience time.Duration
	// Clock measures the patience (default time.Now).
	Clock func() time.Time
	// Sleep waits between retries (default time.Sleep).
	Sleep func(time.Duration)
	// Ceilings bound the payload and parents written (defaults as usual).
	Ceilings Ceilings
	// Rebuild, when set, gives the payload of every attempt in place of
	// Payload: a payload that names the tip of another ref (pr.merged names
	// the trust log's, docs/events.md) is built again, from that ref as it
	// is then, after a push that lost a race.
	Rebuild func(ctx context.Context) (any, error)
}

// RefusedError is a push the receiving hook refused: gitio's, the one push
// client's (its Refs name the ref, Lines hold the hook's lines).
type RefusedError = gitio.PushRefusedError

// Append writes a new event on top of Ref's current value (or as a root when
// the ref does not exist) into GitDir and pushes it to Remote with the old
// value as the expected one (compare-and-swap), so the receive hooks judge
// it. When the push loses a race it fetches the ref (remotes other than
// "."), rebuilds the event on the new tip and tries again, up to Attempts
// times; then ErrStale. A hook refusal is *RefusedError (ErrRefused). It
// returns the id of the event that landed.
func Append(ctx context.Context, o AppendOptions) (plumbing.Hash, error) {
	if o.Remote == "" {
		o.Remote = "."
	}
	if o.Now == nil {
		o.Now = clock.Now
	}
	if o.Patience <= 0 {
		o.Patience = DefaultPatience
	}
	if o.MaxPatience <= 0 {
		o.MaxPatience = DefaultMaxPatience
	}
	if o.MaxPatience < o.Patience {
		o.MaxPatience = o.Patience
	}
	if o.Sleep == nil {
		o.Sleep = time.Sleep
	}
	if o.Clock == nil {
		o.Clock = time.Now
	}
	start := o.Clock()
	progress := start // when the ref was last seen to move
	var seen plumbing.Hash
	transport := 1
	c := o.Ceilings.norm()
	if !strings.HasPrefix(o.Ref, "refs/hub/") {
		return plumbing.ZeroHash, fmt.Errorf("appending to %q: events live under refs/hub/: %w", o.Ref, ErrMalformed)
	}
	gitDir, err := gitio.ResolveGitDir(o.GitDir)
	if err != nil {
		return plumbing.ZeroHash, fmt.Errorf("appending to %s: %w", o.Ref, err)
	}
	checkPayload := func() error {
		_, body, err := MarshalPayload(o.Payload)
		if err != nil {
			return err
		}
		if len(body) > c.EventBytes {
			return fmt.Errorf("appending to %s: payload of %d bytes, over the ceiling of %d: %w", o.Ref, len(body), c.EventBytes, ErrCeiling)
		}
		return nil
	}
	if o.Rebuild == nil {
		if err := checkPayload(); err != nil {
			return plumbing.ZeroHash, err
		}
	}
	for attempt := 1; ; attempt++ {
		if o.Rebuild != nil {
			p, err := o.Rebuild(ctx)
			if err != nil {
				return plumbing.ZeroHash, fmt.Errorf("appending to %s: %w", o.Ref, err)
			}
			o.Payload = p
			if err := checkPayload(); err != nil {
				return plumbing.ZeroHash, err
			}
		}
		old, err := gitio.RemoteRef(ctx, gitDir, ".", o.Ref, o.Env)
		if err != nil {
			return plumbing.ZeroHash, err
		}
		if attempt > 1 && old != seen {
			progress = o.Clock()
		}
		seen = old
		var parents []plumbing.Hash
		if !old.IsZero() {
			parents = []plumbing.Hash{old}
		}
		raw, err := EncodeEvent(o.Payload, parents, o.Name, o.Now(), o.Signer)
		if err != nil {
			return plumbing.ZeroHash, fmt.Errorf("appending to %s: %w", o.Ref, err)
		}
		id, err := gitio.WriteLooseObject(gitDir, plumbing.CommitObject, raw)
		if err != nil {
			return plumbing.ZeroHash, fmt.Errorf("appending to %s: %w", o.Ref, err)
		}
		_, err = gitio.Push(ctx, gitio.PushOptions{GitDir: gitDir, Remote: o.Remote, PushOptions: o.PushOptions, Env: o.Env,
			Sign: o.Sign, Updates: []gitio.PushUpdate{{Ref: o.Ref, Old: old, New: id}}})
		if errors.Is(err, gitio.ErrPushAuth) {
			// The server wants credentials this push did not have: no
			// retry changes that, and nothing moved.
			return plumbing.ZeroHash, fmt.Errorf("appending to %s at %s: %w", o.Ref, o.Remote, err)
		}
		if err != nil && !errors.Is(err, ErrStale) && !errors.Is(err, ErrRefused) && ctx.Err() == nil {
			// Transport (a broken pipe, a killed connection): the push may
			// or may not have taken effect. Read the ref back: holding our
			// event means done; otherwise retry like a lost race.
			switch {
			case landed(ctx, gitDir, o, id):
				err = nil
			case transport >= TransportAttempts:
				return plumbing.ZeroHash, fmt.Errorf("appending to %s at %s: the push failed %d times in transport, and the ref does not hold the event (the connection broke or the server did not answer: check that `git ls-remote %s` works, then run the verb again): %w", o.Ref, o.Remote, transport, o.Remote, err)
			default:
				transport++
				err = fmt.Errorf("%w (transport: %w)", ErrStale, err)
			}
		}
		if err == nil {
			if o.Remote != "." {
				// Keep the local copy current so the next append starts from
				// the right tip; it is only a copy, so a failure is harmless.
				_ = gitio.UpdateRef(ctx, gitDir, o.Ref, id, o.Env)
			}
			return id, nil
		}
		if !errors.Is(err, ErrStale) {
			return plumbing.ZeroHash, err
		}
		if now := o.Clock(); o.Attempts > 0 && attempt >= o.Attempts || now.Sub(progress) >= o.Patience || now.Sub(start) >= o.MaxPatience {
			return plumbing.ZeroHash, fmt.Errorf("appending to %s at %s: the push kept losing: gave up after %d attempts in %s (others are writing to it; try again): %w",
				o.Ref, o.Remote, attempt, now.Sub(start).Round(time.Millisecond), err)
		}
		o.Sleep(Backoff(attempt))
		if o.Remote != "." {
			if err := gitio.Fetch(ctx, gitDir, o.Remote, o.Env, "+"+o.Ref+":"+o.Ref); err != nil {
				// A ref the remote does not have (a first event whose push
				// failed in transport) has nothing to fetch: build on none.
				if cur, lerr := gitio.RemoteRef(ctx, gitDir, o.Remote, o.Ref, o.Env); lerr != nil || !cur.IsZero() {
					return plumbing.ZeroHash, fmt.Errorf("appending to %s: re-reading it from %s after a failed push: %w", o.Ref, o.Remote, err)
				}
			}
		}
	}
}

// TransportAttempts bounds the pushes of one Append that fail in transport
// (git ends without reporting the ref): a broken pipe is retried, a remote
// that is down or refuses the credentials fails soon.
const TransportAttempts = 3

// DefaultPatience is how long Append keeps retrying while the ref does not
// move; DefaultMaxPatience how long it keeps retrying while it does.
const (
	DefaultPatience    = 2 * time.Minute
	DefaultMaxPatience = 10 * time.Minute
)

// Backoff is the wait before retry n (1-based) of a lost race: 10 ms
// doubling up to 160 ms, plus a random jitter of up to the same again, so
// writers that collided spread out instead of colliding again. The cap is
// about one push through the hooks: a writer that lost many races in a row
// must not wait much longer than a newcomer, or it starves under load.
func Backoff(n int) time.Duration {
	d := 10 * time.Millisecond << min(max(n-1, 0), 4)
	return d + time.Duration(rand.Int63n(int64(d)))
}

// landed reports whether o.Ref at o.Remote holds id (after a push whose
// outcome git did not report).
func landed(ctx context.Context, gitDir string, o AppendOptions, id plumbing.Hash) bool {
	cur, err := gitio.RemoteRef(ctx, gitDir, o.Remote, o.Ref, o.Env)
	return err == nil && cur == id
}

// Fetch fetches every hub ref from remote into gitDir
// (+refs/hub/*:refs/hub/*), so that Append and ReadLog see the remote's events.
func Fetch(ctx context.Context, gitDir, remote string) error {
	gitDir, err := gitio.ResolveGitDir(gitDir)
	if err != nil {
		return err
	}
	// With the hub refs, the status the server publishes of itself
	// (failing wake rules, unjudged updates: hooks/opstatus/opstatus.go), which
	// readers show and nothing judges.
	return gitio.Fetch(ctx, gitDir, remote, nil, "+refs/hub/*:refs/hub/*", "+refs/gitplus/status/*:refs/gitplus/status/*")
}
