package delivery

// The delivery spool (docs/delivery.md): what post-receive records and the
// delivery worker settles, under <gitdir>/gitplus/delivery/:
//
//	webhooks/pending/<id>.json   a webhook delivery not settled yet
//	webhooks/done/<id>.json      delivered, or failed after its window
//	mirrors/<key>.json           one mirror's state: changes requested and
//	                             covered, last success, last error
//	locks/                       flock(2) files: one per mirror state, one
//	                             per mirror sync, one per webhook
//	worker.lock                  held by the one running worker
//
// Decisions:
//   - Every record is written to a temporary file in its own directory and
//     renamed into place: a crash of the writing process leaves it whole or
//     absent. Records are not fsynced: git 2.39 by default does not fsync
//     the refs a push moves either (core.fsync=committed,-loose-object), so
//     an fsync here would buy no durability the push itself has, and would
//     cost every push several milliseconds (about 8 ms each on the
//     reference machine). After an unclean system shutdown a record may be
//     empty or cut: readers treat a record that does not parse as absent
//     (the worker moves it to webhooks/bad/ and logs it). Readers skip
//     temporary files.
//   - A delivery id is its creation time in nanoseconds (16 hex digits) and 6
//     random hex digits: ids sort in creation order, which is the order each
//     webhook's deliveries are sent in.
//   - Settling moves a record from pending/ to done/: the done record is
//     written first, then the pending one removed, so a crash in between
//     leaves both, and the pending copy is dropped on the next scan.
//   - Mirrors coalesce: post-receive only counts a change (requested++);
//     a sync reads the count before it starts and, on success, marks that
//     count covered, since a full push that starts after a change carries it.
//     A mirror is behind while requested > synced.
//   - Locks are flock(2) on files that are never removed: they are released
//     by the kernel when the holder dies, so a crashed worker blocks nobody.

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/gitplus/gitplus/receive/gitio"
)

// SpoolDir is the delivery spool, relative to the git directory.
const SpoolDir = "gitplus/delivery"

// States of a webhook delivery.
const (
	StatePending   = "pending"
	StateDelivered = "delivered"
	StateFailed    = "failed"
)

// ErrNoDelivery reports a delivery id the spool does not hold.
var ErrNoDelivery = errors.New("no such delivery")

// WebhookJob is one delivery of one push to one webhook, as spooled.
type WebhookJob struct {
	ID          string          `json:"id"`
	Hook        string          `json:"hook"`
	URL         string          `json:"url"`
	Format      string          `json:"format,omitempty"` // the hook's format when spooled ("": gitplus)
	Created     time.Time       `json:"created"`
	State       string          `json:"state"`
	Attempts    int             `json:"attempts"`
	LastStatus  string          `json:"last_status,omitempty"`
	LastError   string          `json:"last_error,omitempty"`
	LastAttempt *time.Time      `json:"last_attempt,omitempty"`
	NextAttempt time.Time       `json:"next_attempt"`
	Settled     *time.Time      `json:"settled,omitempty"`
	Updates     []DeliveryRef   `json:"updates"`
	Body        json.RawMessage `json:"body"`
}

// MirrorState is one mirror's delivery state.
type MirrorState struct {
	Name          string     `json:"name"`
	URL           string     `json:"url"`
	Requested     int64      `json:"requested"`
	LastRequested *time.Time `json:"last_requested,omitempty"`
	Synced        int64      `json:"synced"`
	Syncs         int64      `json:"syncs"`
	LastSuccess   *time.Time `json:"last_success,omitempty"`
	LastError     string     `json:"last_error,omitempty"`
	LastErrorTime *time.Time `json:"last_error_time,omitempty"`
	Failures      int        `json:"failures"`
	NextAttempt   time.Time  `json:"next_attempt"`
	// Carried is what the mirror was last known to hold: the digest of this
	// repository's refs/hub/* and refs/heads/* as the last successful sync
	// read them before it pushed (mirrorrefs.go). "" before the first.
	Carried string `json:"carried,omitempty"`
	// Refs is the digest of those refs now, as ReadMirror read them (not
	// stored; "" when not read).
	Refs string `json:"-"`
}

// Behind reports whether the mirror waits for a sync: a change recorded
// and not carried yet, or refs that differ from what the mirror was last
// known to hold — a push whose change could not be recorded (a full disk)
// leaves the counts equal but not the refs.
func (m MirrorState) Behind() bool { return m.Requested > m.Synced || m.RefsBehind() }

// RefsBehind reports whether this repository's refs differ from what the
// mirror was last known to hold.
func (m MirrorState) RefsBehind() bool { return m.Refs != "" && m.Refs != m.Carried }

func spoolPath(gitDir string, parts ...string) string {
	return filepath.Join(append([]string{gitDir, SpoolDir}, parts...)...)
}

// newJobID is a new delivery id, made at now (the decisions above).
func newJobID(now time.Time) string {
	var b [3]byte
	_, _ = rand.Read(b[:])
	return fmt.Sprintf("%016x%s", now.UnixNano(), hex.EncodeToString(b[:]))
}

var jobIDRE = regexp.MustCompile(`^[0-9a-f]{22}$`)

// fileKey is a file name for a configured name: its safe characters and
// a hash that keeps distinct names distinct.
func fileKey(name string) string {
	safe := strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.' {
			return r
		}
		return '_'
	}, name)
	if len(safe) > 40 {
		safe = safe[:40]
	}
	s := sha256.Sum256([]byte(name))
	return safe + "-" + hex.EncodeToString(s[:4])
}

// writeAtomicSync writes data to p so that p is either its old content or
// the new one after a crash of this process (not fsynced: see above).
func writeAtomicSync(p string, data []byte) error {
	dir := filepath.Dir(p)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("creating %s: %w", dir, err)
	}
	if err := gitio.WriteFileAtomic(p, ".tmp-*", 0, data); err != nil {
		return fmt.Errorf("writing %s: %w", p, err)
	}
	return nil
}

// errBadRecord marks a spooled record that does not parse.
var errBadRecord = errors.New("unreadable delivery record")

// lockFile takes an exclusive flock on p (created if missing). With wait
// false it returns (nil, nil) when another process holds it.
func lockFile(p string, wait bool) (*os.File, error) {
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return nil, fmt.Errorf("creating %s: %w", filepath.Dir(p), err)
	}
	f, err := os.OpenFile(p, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("opening the lock %s: %w", p, err)
	}
	how := syscall.LOCK_EX
	if !wait {
		how |= syscall.LOCK_NB
	}
	for {
		err = syscall.Flock(int(f.Fd()), how)
		if !errors.Is(err, syscall.EINTR) {
			break
		}
	}
	if err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, nil
		}
		return nil, fmt.Errorf("locking %s: %w", p, err)
	}
	return f, nil
}

// WithLock runs fn holding the lock file p (lockFile, waiting for it).
func WithLock(p string, fn func() error) error {
	f, err := lockFile(p, true)
	if err != nil {
		return err
	}
	defer f.Close()
	return fn()
}

// spoolJob records a new pending webhook delivery.
func spoolJob(gitDir string, j *WebhookJob) error {
	b, err := json.Marshal(j)
	if err != nil {
		return fmt.Errorf("encoding delivery %s: %w", j.ID, err)
	}
	return writeAtomicSync(spoolPath(gitDir, "webhooks", "pending", j.ID+".json"), b)
}

func readJob(p string) (*WebhookJob, error) {
	if j, ok := unsavedJob(p); ok {
		return j, nil
	}
	b, err := os.ReadFile(p)
	if err != nil {
		return nil, err
	}
	var j WebhookJob
	if err := json.Unmarshal(b, &j); err != nil || j.ID == "" {
		return nil, fmt.Errorf("delivery record %s (%d bytes): %v: %w", p, len(b), err, errBadRecord)
	}
	return &j, nil
}

// listJobs reads the records of one state directory ("pending" or "done"),
// in id order. Records that do not parse are returned as errors beside the
// rest.
func listJobs(gitDir, which string) ([]*WebhookJob, []error) {
	return listJobsFrom(gitDir, which, "")
}

// listJobsFrom is listJobs of the records whose id is not below from (ids
// start with their creation time, so this skips older records unread).
func listJobsFrom(gitDir, which, from string) ([]*WebhookJob, []error) {
	dir := spoolPath(gitDir, "webhooks", which)
	ents, err := os.ReadDir(dir)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, nil
		}
		return nil, []error{fmt.Errorf("listing %s: %w", dir, err)}
	}
	var out []*WebhookJob
	var errs []error
	for _, e := range ents {
		id, ok := strings.CutSuffix(e.Name(), ".json")
		if !ok || !jobIDRE.MatchString(id) || id < from {
			continue
		}
		j, err := readJob(filepath.Join(dir, e.Name()))
		if err != nil {
			if !errors.Is(err, os.ErrNotExist) {
				errs = append(errs, err)
			}
			continue
		}
		out = append(out, j)
	}
	sort.Slice(out, func(a, b int) bool { return out[a].ID < out[b].ID })
	return out, errs
}

// Deliveries returns every spooled webhook delivery, settled ones first
// within id order (the order they were recorded in).
func Deliveries(gitDir string) ([]*WebhookJob, []error) {
	return DeliveriesSince(gitDir, time.Time{})
}

// DeliveriesSince is Deliveries of the deliveries recorded at or after
// since (older records are not read).
func DeliveriesSince(gitDir string, since time.Time) ([]*WebhookJob, []error) {
	from := ""
	if !since.IsZero() {
		from = fmt.Sprintf("%016x", since.UnixNano())
	}
	done, e1 := listJobsFrom(gitDir, "done", from)
	pending, e2 := listJobsFrom(gitDir, "pending", from)
	seen := map[string]bool{}
	var out []*WebhookJob
	for _, j := range done {
		seen[j.ID] = true
		out = append(out, j)
	}
	for _, j := range pending {
		if !seen[j.ID] {
			out = append(out, j)
		}
	}
	sort.Slice(out, func(a, b int) bool { return out[a].ID < out[b].ID })
	return out, append(e1, e2...)
}

// FindDelivery returns the record of delivery id.
func FindDelivery(gitDir, id string) (*WebhookJob, error) {
	if !jobIDRE.MatchString(id) {
		return nil, fmt.Errorf("delivery %q: not a delivery id (22 hex digits, as `git+ webhook deliveries` lists them): %w", id, ErrNoDelivery)
	}
	for _, which := range []string{"done", "pending"} {
		j, err := readJob(spoolPath(gitDir, "webhooks", which, id+".json"))
		if err == nil {
			return j, nil
		}
		if !errors.Is(err, os.ErrNotExist) {
			return nil, err
		}
	}
	return nil, fmt.Errorf("delivery %s in %s: %w (list them with `git+ webhook deliveries`)", id, spoolPath(gitDir), ErrNoDelivery)
}

// saveJob writes j where its state says: pending/ while pending, else done/
// and then the pending copy removed.
func saveJob(gitDir string, j *WebhookJob) error {
	b, err := json.Marshal(j)
	if err != nil {
		return fmt.Errorf("encoding delivery %s: %w", j.ID, err)
	}
	pending := spoolPath(gitDir, "webhooks", "pending", j.ID+".json")
	if j.State == StatePending {
		if err := writeAtomicSync(pending, b); err != nil {
			keepUnsavedJob(pending, j)
			return err
		}
		forgetUnsavedJob(pending)
		return nil
	}
	if err := writeAtomicSync(spoolPath(gitDir, "webhooks", "done", j.ID+".json"), b); err != nil {
		keepUnsavedJob(pending, j)
		return err
	}
	forgetUnsavedJob(pending)
	if err := os.Remove(pending); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("removing the settled delivery %s: %w", pending, err)
	}
	return nil
}

func hookLock(gitDir, name string) string {
	return spoolPath(gitDir, "locks", "hook-"+fileKey(name)+".lock")
}

func mirrorFile(gitDir, name string) string {
	return spoolPath(gitDir, "mirrors", fileKey(name)+".json")
}

func mirrorStateLock(gitDir, name string) string {
	return spoolPath(gitDir, "locks", "mirror-"+fileKey(name)+".state.lock")
}

func mirrorSyncLock(gitDir, name string) string {
	return spoolPath(gitDir, "locks", "mirror-"+fileKey(name)+".sync.lock")
}

// ReadMirror returns the state of mirror r (zero counts when none is
// recorded yet), with the digest of the refs it carries as they are now
// (Refs). Refs that cannot be read are an error beside a state that says
// the mirror is behind: unknown is never "in step".
func ReadMirror(gitDir string, r Remote) (MirrorState, error) {
	st, err := readMirrorFile(gitDir, r)
	refs, rerr := mirroredRefs(gitDir)
	if rerr != nil {
		st.Refs = "unreadable"
		return st, errors.Join(err, rerr)
	}
	st.Refs = refs
	return st, err
}

// readMirrorFile is ReadMirror without reading the refs: the state as
// recorded, or as this process last tried to record it when that failed
// (a full disk: see updateMirror).
func readMirrorFile(gitDir string, r Remote) (MirrorState, error) {
	if st, ok := unwrittenMirror(gitDir, r); ok {
		return st, nil
	}
	st := MirrorState{Name: r.Name, URL: r.URL}
	b, err := os.ReadFile(mirrorFile(gitDir, r.Name))
	if errors.Is(err, os.ErrNotExist) {
		return st, nil
	}
	if err != nil {
		return st, fmt.Errorf("reading the state of mirror %s: %w", r.Name, err)
	}
	if err := json.Unmarshal(b, &st); err != nil {
		return MirrorState{Name: r.Name, URL: r.URL}, fmt.Errorf("mirror state %s: %w (delete it: the next push rebuilds it)", mirrorFile(gitDir, r.Name), err)
	}
	st.Name, st.URL = r.Name, r.URL
	return st, nil
}

// updateMirror changes mirror r's state under its state lock. A state that
// cannot be written (a full disk) stays as it was, behind, and this
// process retries it after a backoff (mirrorrefs.go, unwrittenMirror).
func updateMirror(gitDir string, r Remote, fn func(*MirrorState)) (MirrorState, error) {
	var st MirrorState
	err := WithLock(mirrorStateLock(gitDir, r.Name), func() error {
		var err error
		st, err = readMirrorFile(gitDir, r)
		if err != nil {
			st = MirrorState{Name: r.Name, URL: r.URL} // a torn record cannot happen; a hand-edited one is rebuilt
		}
		before := st
		fn(&st)
		b, err := json.Marshal(st)
		if err != nil {
			return err
		}
		if err := writeAtomicSync(mirrorFile(gitDir, r.Name), b); err != nil {
			st = keepUnwrittenMirror(gitDir, r, before, err)
			return err
		}
		forgetUnwrittenMirror(gitDir, r)
		return nil
	})
	return st, err
}

// RequestMirror records one change for mirror r to carry.
func RequestMirror(gitDir string, r Remote, now time.Time) error {
	_, err := updateMirror(gitDir, r, func(st *MirrorState) {
		st.Requested++
		t := now.UTC()
		st.LastRequested = &t
		st.NextAttempt = t // a new change is worth a prompt try
	})
	return err
}
