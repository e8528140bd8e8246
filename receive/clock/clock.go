// Package clock is git+'s clock: the one place every reader of wall-clock
// time that a record or schedule depends on gets it from — the times events
// are stamped with, the lease a check.started holds, the queue's
// checkTimeout, the delivery worker's retry schedule (docs/events.md,
// "Record times and clocks").
//
// Decisions:
//   - Now is the kernel's clock moved by GITPLUS_CLOCK_OFFSET, a Go
//     duration ("72h", "-72h") read once per process. The variable is for
//     testing: it makes one process behave as on a machine whose clock is
//     off by that much, which libfaketime cannot do for Go (it reads the
//     clock through the vDSO). A malformed value is ignored. The result
//     keeps Go's monotonic reading, so durations measured between two
//     readings (a lease counted from when a start was seen, a retry's wait)
//     are those of the kernel's monotonic clock, whatever the offset and
//     whatever steps the wall clock takes.
//   - Server is the clock the pre-receive hook bounds record times by
//     (docs/events.md, "Record times and clocks"): the kernel's, never
//     offset. It stands for the server's clock; a push into a local path
//     runs the hook as a child of the pushing process, with its
//     environment, and a pusher's (simulated) skew must not move the
//     server's reference.
//   - DefaultSkew is the bound itself (5 minutes, as Kerberos bounds clock
//     skew). The hook takes the repository's gitplus.clockSkew instead
//     when set; readers on other machines (lease holders) assume this one.
package clock

import (
	"os"
	"sync"
	"time"
)

// EnvOffset names the variable that moves Now (testing only).
const EnvOffset = "GITPLUS_CLOCK_OFFSET"

// DefaultSkew is how far a record's time may be from the server's clock.
const DefaultSkew = 5 * time.Minute

var (
	offsetOnce sync.Once
	offset     time.Duration
)

// Offset is the process's GITPLUS_CLOCK_OFFSET (0 when unset or malformed).
func Offset() time.Duration {
	offsetOnce.Do(func() {
		if v := os.Getenv(EnvOffset); v != "" {
			if d, err := time.ParseDuration(v); err == nil {
				offset = d
			}
		}
	})
	return offset
}

// Now is git+'s clock: the kernel's, moved by GITPLUS_CLOCK_OFFSET.
func Now() time.Time { return time.Now().Add(Offset()) }

// Server is the clock the hook judges record times by: the kernel's.
func Server() time.Time { return time.Now() }
