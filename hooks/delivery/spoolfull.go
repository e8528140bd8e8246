package delivery

// Webhook records the worker cannot write (docs/delivery.md, "A full
// disk").
//
// Decisions:
//   - A delivery record that cannot be written after an attempt (the disk
//     under the spool full) is kept in the memory of the process that made
//     the attempt, keyed by its pending file, for as long as that file is
//     the one it failed to replace: readJob returns the kept record, so
//     the worker sees the attempt it made (its count, its next retry, or
//     that it was delivered) instead of the record on disk, and neither
//     sends a delivered body again nor retries without backoff. It writes
//     the record again at each look until the disk has room.
//   - Another process changing the file (`git+ webhook redeliver`) wins
//     over the memory.
//   - What is only in memory dies with the worker: a worker killed while
//     the disk is full leaves the record as it was, and the next worker
//     sends it again (at least once, as ever: receivers drop duplicates by
//     X-GitPlus-Delivery).

import (
	"os"
	"sync"
	"time"
)

// unwritten is what a process keeps of a record it could not write to its
// file: the record, and the file as it stood then, so that another
// process changing the file wins over the memory.
type unwritten[T any] struct {
	rec   T
	exist bool
	size  int64
	mod   time.Time
}

// memo holds, per file, the record this process could not write (the
// webhook records here, the mirror states in mirrorrefs.go).
type memo[T any] struct {
	sync.Mutex
	m map[string]unwritten[T]
}

// keep replaces the record kept for file p with next of the one kept
// before (the zero T when none), and returns it.
func (k *memo[T]) keep(p string, next func(before T) T) T {
	k.Lock()
	defer k.Unlock()
	u := unwritten[T]{rec: next(k.m[p].rec)}
	if fi, err := os.Stat(p); err == nil {
		u.exist, u.size, u.mod = true, fi.Size(), fi.ModTime()
	}
	k.m[p] = u
	return u.rec
}

// forget drops what was kept for p: its record was written.
func (k *memo[T]) forget(p string) {
	k.Lock()
	defer k.Unlock()
	delete(k.m, p)
}

// get returns the record kept for p while the file is still the one that
// could not be replaced; a file changed since is the truth again.
func (k *memo[T]) get(p string) (T, bool) {
	k.Lock()
	defer k.Unlock()
	u, ok := k.m[p]
	if !ok {
		var zero T
		return zero, false
	}
	fi, err := os.Stat(p)
	same := (err != nil && !u.exist) || (err == nil && u.exist && fi.Size() == u.size && fi.ModTime().Equal(u.mod))
	if !same {
		delete(k.m, p)
		var zero T
		return zero, false
	}
	return u.rec, true
}

var unsaved = memo[WebhookJob]{m: map[string]unwritten[WebhookJob]{}}

// keepUnsavedJob remembers j as the record of its pending file p, which
// could not be written.
func keepUnsavedJob(p string, j *WebhookJob) {
	unsaved.keep(p, func(WebhookJob) WebhookJob { return *j })
}

func forgetUnsavedJob(p string) { unsaved.forget(p) }

// unsavedJob returns the record kept for pending file p while the file is
// still the one that could not be replaced.
func unsavedJob(p string) (*WebhookJob, bool) {
	j, ok := unsaved.get(p)
	if !ok {
		return nil, false
	}
	return &j, true
}
