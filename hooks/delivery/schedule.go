package delivery

// The retry schedule of deliveries (docs/delivery.md, "Clocks").
//
// Decisions:
//   - A webhook delivery gives up after a number of attempts, counted, never
//     after a span of wall-clock time: its hook's `attempts` when set, and
//     at most the attempts whose backoff schedule fits in
//     retry_window_seconds (attempt 1 at once, each next one the backoff
//     after the one before: 35 with the defaults). A clock that runs ahead
//     of the one that spooled the delivery, or a record spooled while the
//     clock was behind, cannot make a delivery look older than it is and
//     give it up early; a worker stopped for a while does not use up the
//     window while it is stopped.
//   - A retry is due the backoff after the failed attempt, by the worker's
//     clock (clock.Now). The worker that scheduled it also remembers that
//     moment on the monotonic clock, so a wall clock stepped while it waits
//     neither delays the retry nor brings it forward.
//   - A recorded next attempt (spooled by post-receive, or scheduled by an
//     earlier worker) dated more than the longest backoff after the
//     worker's clock is due at once: no schedule ever asks for a longer
//     wait, so it was written by a clock that was ahead, or this one
//     stepped back. The same holds for a failing mirror's next sync.

import (
	"time"
)

// maxBudget bounds the attempts a window can buy (a window of years with
// a backoff of milliseconds).
const maxBudget = 1 << 20

// AttemptBudget is how many attempts a delivery to h gets before it is
// failed.
func (h Webhook) AttemptBudget() int {
	n := windowAttempts(seconds(h.RetryWindowSeconds, DefaultRetryWindow), h.firstBackoff(), h.maxBackoff())
	if h.Attempts > 0 {
		n = min(n, h.Attempts)
	}
	return n
}

func (h Webhook) firstBackoff() time.Duration { return seconds(h.BackoffSeconds, DefaultBackoff) }
func (h Webhook) maxBackoff() time.Duration {
	return seconds(h.BackoffMaxSeconds, DefaultWebhookBackoff)
}

// windowAttempts counts the attempts of the backoff schedule (first,
// doubled up to longest) that start within window of the first attempt.
func windowAttempts(window, first, longest time.Duration) int {
	if first <= 0 {
		first = DefaultBackoff
	}
	if longest <= 0 {
		longest = first
	}
	n, at := 1, time.Duration(0) // attempt n starts at offset at
	for n < maxBudget {
		d := Backoff(n, first, longest)
		if at+d > window {
			return n
		}
		if d >= longest { // every later wait is longest
			more := (window - at) / longest
			return int(min(int64(n)+int64(more), maxBudget))
		}
		at += d
		n++
	}
	return n
}

// dueAt reports whether an attempt recorded as next is due at now, where
// longest is the longest wait any schedule asks for.
func dueAt(next, now time.Time, longest time.Duration) bool {
	return !next.After(now) || next.Sub(now) > longest
}
