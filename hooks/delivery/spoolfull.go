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

var unsaved = struct {
	sync.Mutex
	m map[string]unsavedRecord
}{m: map[string]unsavedRecord{}}

type unsavedRecord struct {
	job   WebhookJob
	exist bool
	size  int64
	mod   time.Time
}

// keepUnsavedJob remembers j as the record of its pending file p, which
// could not be written.
func keepUnsavedJob(p string, j *WebhookJob) {
	u := unsavedRecord{job: *j}
	if fi, err := os.Stat(p); err == nil {
		u.exist, u.size, u.mod = true, fi.Size(), fi.ModTime()
	}
	unsaved.Lock()
	defer unsaved.Unlock()
	unsaved.m[p] = u
}

func forgetUnsavedJob(p string) {
	unsaved.Lock()
	defer unsaved.Unlock()
	delete(unsaved.m, p)
}

// unsavedJob returns the record kept for pending file p while the file is
// still the one that could not be replaced.
func unsavedJob(p string) (*WebhookJob, bool) {
	unsaved.Lock()
	defer unsaved.Unlock()
	u, ok := unsaved.m[p]
	if !ok {
		return nil, false
	}
	fi, err := os.Stat(p)
	same := (err != nil && !u.exist) || (err == nil && u.exist && fi.Size() == u.size && fi.ModTime().Equal(u.mod))
	if !same {
		delete(unsaved.m, p)
		return nil, false
	}
	j := u.job
	return &j, true
}
