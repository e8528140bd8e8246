package checkrun

// The check.started lease (docs/queue.md, "CI once per candidate" and
// "Clocks and leases").
//
// Decisions:
//   - A start's time is its writer's clock, which the hook keeps within a
//     bound of the server's (docs/events.md, "Record times and clocks"):
//     a reader counts the lease from it, by its own clock (clock.Now).
//   - A reader without memory (git+ check run) does not believe a start
//     dated more than twice the default bound (clock.DefaultSkew) after its
//     own clock: such a start holds no lease. The hook never accepts one
//     from a clock that far ahead, so it was written before the bound, or
//     on a server whose clock was itself ahead; a living holder renews it
//     with starts that are dated right. Twice the bound, not once: a
//     holder up to the bound ahead and a reader slightly behind must still
//     agree that the lease holds (the reader's own start would then be
//     refused as older than the holder's).
//   - A long-running reader (git+ check worker) remembers when it first saw
//     each start (Sightings, measured on the monotonic clock). A start that
//     appeared while it was watching holds the lease for one lease from
//     that sighting, whatever its time says: a writer whose clock is days
//     behind (on a log idle for longer, where the hook cannot tell) then
//     still holds it, and a writer days ahead holds it no longer. A start
//     that was already there at its first look is judged by its time, as
//     any reader judges it, except that one dated more than twice the bound
//     ahead holds for one lease from the first look.

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/gitplus/gitplus/hubrefs"
	"github.com/gitplus/gitplus/hubrefs/pr"
	"github.com/gitplus/gitplus/hubrefs/trust"
	"github.com/gitplus/gitplus/receive/clock"
	"github.com/gitplus/gitplus/receive/repo"
)

// futureCap is how far after the reader's clock a start may be dated and
// still be believed.
const futureCap = 2 * clock.DefaultSkew

// Sightings is a long-running reader's memory of when it first saw each
// check.started. Safe for concurrent use.
type Sightings struct {
	mu       sync.Mutex
	first    map[plumbing.Hash]sighting
	watching bool
	keep     time.Duration
}

type sighting struct {
	at       time.Time
	appeared bool // first seen after Watch: it appeared while the reader watched
}

// NewSightings returns an empty memory that forgets a sighting keep after
// it (a start still read after that counts as seen anew).
func NewSightings(keep time.Duration) *Sightings {
	return &Sightings{first: map[plumbing.Hash]sighting{}, keep: keep}
}

// Watch marks the end of the reader's first look: a start first seen from
// now on appeared while it watched.
func (s *Sightings) Watch() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.watching = true
}

// See notes the check.started events of evs not seen before as seen at now
// (a reading of clock.Now, whose monotonic part measures the lease).
func (s *Sightings) See(evs []hubrefs.Event, now time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for id, x := range s.first {
		if now.Sub(x.at) > s.keep {
			delete(s.first, id)
		}
	}
	for _, ev := range evs {
		if ev.Type == hubrefs.TypeCheckStarted {
			s.noteLocked(ev.ID, now)
		}
	}
}

func (s *Sightings) noteLocked(id plumbing.Hash, now time.Time) sighting {
	x, ok := s.first[id]
	if !ok {
		x = sighting{at: now, appeared: s.watching}
		s.first[id] = x
	}
	return x
}

func (s *Sightings) sight(id plumbing.Hash, now time.Time) sighting {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.noteLocked(id, now)
}

// LiveStart returns a description of the live lease on (name, rev) in a
// pull request's events, or "" when there is none (see the package doc and
// this file's). now is the reader's clock; seen, when not nil, its memory.
func LiveStart(evs []hubrefs.Event, t *trust.State, name, rev string, lease time.Duration, now time.Time, seen *Sightings) string {
	var start *hubrefs.Event
	for i := range evs {
		ev := evs[i]
		if ev.Type != hubrefs.TypeCheckStarted && ev.Type != hubrefs.TypeCheckCompleted {
			continue
		}
		var p hubrefs.Check
		if ev.Unmarshal(&p) != nil || p.Name != name || p.Head != rev || !t.Has(ev.Signer, trust.CheckCap(name)) {
			continue
		}
		if ev.Type == hubrefs.TypeCheckStarted {
			start = &evs[i]
		} else {
			start = nil
		}
	}
	if start == nil {
		return ""
	}
	until, how := leaseUntil(*start, lease, now, seen)
	if !now.Before(until) {
		return ""
	}
	who := repo.Fingerprint(start.Signer)
	if m, ok := t.MemberByKey(start.Signer); ok {
		who = m.Name
	}
	var p hubrefs.Check
	if start.Unmarshal(&p) == nil && p.Worker != "" {
		who += " (" + p.Worker + ")"
	}
	return fmt.Sprintf("already running: check.started %s by %s, lease until %s%s", start.ID, who, until.UTC().Format(time.RFC3339), how)
}

// leaseUntil is when start's lease ends by the reader's clock, and how it
// was counted when not from the start's time. A zero time: no lease.
func leaseUntil(start hubrefs.Event, lease time.Duration, now time.Time, seen *Sightings) (time.Time, string) {
	written := time.Unix(start.Time, 0)
	ahead := written.Sub(now) > futureCap
	if seen != nil {
		x := seen.sight(start.ID, now)
		switch {
		case x.appeared:
			return x.at.Add(lease), " (counted from when this worker first saw it)"
		case ahead:
			return x.at.Add(lease), fmt.Sprintf(" (counted from when this worker first saw it: it is dated %s, ahead of this clock)", written.UTC().Format(time.RFC3339))
		}
	}
	if ahead {
		return time.Time{}, ""
	}
	return written.Add(lease), ""
}

// completions counts the check.completed events of check name at rev by a
// current holder of hub.check:<name>.
func completions(evs []hubrefs.Event, t *trust.State, name, rev string) int {
	n := 0
	for _, ev := range evs {
		var p hubrefs.Check
		if ev.Type == hubrefs.TypeCheckCompleted && ev.Unmarshal(&p) == nil && p.Name == name && p.Head == rev && t.Has(ev.Signer, trust.CheckCap(name)) {
			n++
		}
	}
	return n
}

// startLease appends check.started unless a live start holds the check
// (then it returns who holds it). The append is a compare-and-swap on the
// tip the lease was judged on; a lost race re-reads and judges again.
func startLease(s *repo.Signing, id, name, commit, worker string, lease time.Duration, seen *Sightings) (holder string, err error) {
	r := s.Repo
	begin := time.Now()
	done := -1 // completions of the check at commit when first read
	for attempt := 1; ; attempt++ {
		st, evs, err := r.PRState(id, s.Trust)
		if err != nil {
			return "", err
		}
		now := clock.Now()
		if seen != nil {
			seen.See(evs, now)
		}
		if holder := LiveStart(evs, s.Trust, name, commit, lease, now, seen); holder != "" {
			return holder, nil
		}
		// A race lost to a worker that ran the check and recorded it
		// meanwhile (its start and completion both after our first read):
		// the check is done, not to be run again.
		if n := completions(evs, s.Trust, name, commit); done < 0 {
			done = n
		} else if n > done {
			return "completed meanwhile by another worker", nil
		}
		started := hubrefs.Check{Base: hubrefs.Base{Type: hubrefs.TypeCheckStarted, Repo: s.Trust.RepoID}, Name: name, Head: commit, Worker: worker}
		ev, err := repo.NewEvent(started, st.Tip, s.Key, now)
		if err != nil {
			return "", err
		}
		if err := pr.Authorize(ev, st, s.Trust); err != nil {
			return "", fmt.Errorf("check.started on pull request %s refused, nothing written: %w", id, err)
		}
		_, err = hubrefs.Append(context.Background(), hubrefs.AppendOptions{
			GitDir: r.GitDir, Remote: r.Remote, Ref: hubrefs.PRRefPrefix + id, Payload: started,
			Signer: s.Key.Signer, Name: s.Member.Name, Ceilings: repo.EventCeilings(s.Trust), Attempts: 1,
			Sign: s.Key.PushSigning(),
		})
		if err == nil {
			return "", nil
		}
		if !errors.Is(err, hubrefs.ErrStale) || time.Since(begin) > hubrefs.DefaultPatience {
			return "", fmt.Errorf("appending check.started to pull request %s: %w", id, err)
		}
		time.Sleep(hubrefs.Backoff(attempt))
		if err := r.Refresh(); err != nil {
			return "", err
		}
	}
}
