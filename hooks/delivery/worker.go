package delivery

// The delivery worker (docs/delivery.md): one process per repository that
// settles what post-receive spooled, started detached by post-receive.
//
// Decisions:
//   - One worker at a time: it holds worker.lock (flock) while it works. A
//     post-receive that finds the lock held starts nobody. A worker with
//     nothing left releases the lock and looks once more: whatever was
//     spooled before that look is its own (it takes the lock back, or a
//     newer worker has it); whatever is spooled after it finds the lock free
//     and starts a worker. So no delivery is left without a worker.
//   - Webhooks: each hook's deliveries go one at a time, in id order (the
//     order recorded); a delivery waiting for its backoff holds the ones
//     after it. Hooks and mirrors progress independently (one goroutine
//     each at most), so a slow receiver delays only itself.
//   - A delivery whose hook is no longer in webhooks.json is failed with
//     that reason. A mirror no longer in remotes.json is no longer synced.
//   - Every send and sync holds the hook's or mirror's lock, which `git+
//     webhook redeliver` and `git+ mirror sync` take too: one sync at a
//     time per mirror, and no delivery sent twice at once.
//   - The configuration is re-read on every round, so a fixed file takes
//     effect without a push; a file that does not load is logged once per
//     change of its error.
//   - The worker polls the spool every 100 ms (at most) while anything is
//     pending; it exits when nothing is.
//   - Retries are counted and scheduled by the worker's clock, never timed
//     against a record's creation (schedule.go).

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/gitplus/gitplus/hooks/config"
	"github.com/gitplus/gitplus/hooks/wake"
	"github.com/gitplus/gitplus/receive/clock"
)

// WorkerLog is the delivery worker's log, relative to the git directory.
const WorkerLog = "gitplus/log/delivery.log"

// WorkerArgs are the arguments (after the binary) that run the worker.
var WorkerArgs = []string{"hook", "deliver"}

func workerLockPath(gitDir string) string { return spoolPath(gitDir, "worker.lock") }

// WorkerRunning reports whether a delivery worker holds gitDir's worker lock.
func WorkerRunning(gitDir string) bool {
	f, err := lockFile(workerLockPath(gitDir), false)
	if err != nil || f == nil {
		return err == nil
	}
	f.Close()
	return false
}

// StartWorker starts `binary hook deliver` for gitDir detached (its own
// session, standard input /dev/null, output appended to WorkerLog) unless
// a worker already runs. It does not wait for it.
func StartWorker(gitDir, binary string, environ []string) error {
	if WorkerRunning(gitDir) {
		return nil
	}
	if binary == "" {
		return fmt.Errorf("starting the delivery worker for %s: the git+ binary is unknown (deliveries stay spooled; run `git+ --repo %s hook deliver`)", gitDir, gitDir)
	}
	f, err := wake.OpenLog(filepath.Join(gitDir, WorkerLog))
	if err != nil {
		return err
	}
	defer f.Close()
	cmd := exec.Command(binary, append(append([]string{}, WorkerArgs...), "--repo", gitDir)...)
	cmd.Dir = gitDir
	cmd.Env = wake.ChildEnv(environ, nil)
	cmd.Stdout, cmd.Stderr = f, f
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("starting the delivery worker %s for %s: %w", binary, gitDir, err)
	}
	_ = cmd.Process.Release()
	return nil
}

// Worker settles the spool of one repository.
type Worker struct {
	GitDir  string
	Environ []string  // environment of mirror pushes
	Log     io.Writer // one line per outcome (nil: none)
	Now     func() time.Time
	Tick    time.Duration // longest sleep between rounds (default 100 ms)
	Send    Sender        // sends one webhook attempt (Via(webhookpost.Post))

	mu      sync.Mutex
	lastCfg string
	cache   map[string]cachedJob // pending records by file name

	dueMu sync.Mutex
	due   map[string]time.Time // retries this worker scheduled, by delivery id, on the monotonic clock (schedule.go)
}

type cachedJob struct {
	mod  time.Time
	size int64
	job  *WebhookJob
}

// pending lists the pending deliveries in id order, parsing only records
// that changed since the last round (the worker polls often; a receiver
// that is down can leave many records pending). A record that does not
// parse is moved to webhooks/bad/ and reported.
func (w *Worker) pending() ([]*WebhookJob, []error) {
	dir := spoolPath(w.GitDir, "webhooks", StatePending)
	ents, err := os.ReadDir(dir)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, nil
		}
		return nil, []error{fmt.Errorf("listing %s: %w", dir, err)}
	}
	if w.cache == nil {
		w.cache = map[string]cachedJob{}
	}
	seen := map[string]bool{}
	var out []*WebhookJob
	var errs []error
	for _, e := range ents {
		id, ok := strings.CutSuffix(e.Name(), ".json")
		if !ok || !jobIDRE.MatchString(id) {
			continue
		}
		fi, err := e.Info()
		if err != nil {
			continue
		}
		seen[e.Name()] = true
		if c, ok := w.cache[e.Name()]; ok && c.mod.Equal(fi.ModTime()) && c.size == fi.Size() {
			out = append(out, c.job)
			continue
		}
		p := filepath.Join(dir, e.Name())
		j, err := readJob(p)
		if errors.Is(err, errBadRecord) {
			bad := spoolPath(w.GitDir, "webhooks", "bad")
			if os.MkdirAll(bad, 0o755) == nil {
				_ = os.Rename(p, filepath.Join(bad, e.Name()))
			}
			errs = append(errs, fmt.Errorf("%w (moved to %s)", err, bad))
			continue
		}
		if err != nil {
			continue
		}
		w.cache[e.Name()] = cachedJob{mod: fi.ModTime(), size: fi.Size(), job: j}
		out = append(out, j)
	}
	for name := range w.cache {
		if !seen[name] {
			delete(w.cache, name)
		}
	}
	sort.Slice(out, func(a, b int) bool { return out[a].ID < out[b].ID })
	return out, errs
}

func (w *Worker) now() time.Time {
	if w.Now != nil {
		return w.Now()
	}
	return clock.Now()
}

// nextOf is when delivery j's next attempt is due: as this worker
// scheduled it, else as recorded.
func (w *Worker) nextOf(j *WebhookJob) time.Time {
	w.dueMu.Lock()
	defer w.dueMu.Unlock()
	if t, ok := w.due[j.ID]; ok {
		return t
	}
	return j.NextAttempt
}

// schedule remembers the moment delivery id's retry is due (zero: settled).
func (w *Worker) schedule(id string, at time.Time) {
	w.dueMu.Lock()
	defer w.dueMu.Unlock()
	if w.due == nil {
		w.due = map[string]time.Time{}
	}
	if at.IsZero() {
		delete(w.due, id)
	} else {
		w.due[id] = at
	}
}

func (w *Worker) logf(format string, args ...any) {
	if w.Log == nil {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	fmt.Fprintf(w.Log, "%s %s\n", time.Now().UTC().Format(time.RFC3339), fmt.Sprintf(format, args...))
}

// Run works until nothing is pending (or ctx ends). It returns at once
// when another worker holds the lock.
func (w *Worker) Run(ctx context.Context) error {
	lock, err := w.lock()
	if err != nil || lock == nil {
		return err
	}
	tick := w.Tick
	if tick <= 0 {
		tick = 100 * time.Millisecond
	}
	running := map[string]bool{}
	done := make(chan string, 64)
	for {
		for drained := false; !drained; {
			select {
			case k := <-done:
				delete(running, k)
			default:
				drained = true
			}
		}
		work, wake := w.round(ctx, running, done)
		if len(running) > 0 {
			work = true
		}
		if !work {
			lock.Close()
			if w.hasWork() {
				if lock, err = w.lock(); err != nil || lock == nil {
					return err
				}
				continue
			}
			return nil
		}
		sleep := tick
		if d := wake.Sub(w.now()); !wake.IsZero() && d < sleep {
			sleep = max(d, 5*time.Millisecond)
		}
		select {
		case <-ctx.Done():
			lock.Close()
			for len(running) > 0 {
				delete(running, <-done)
			}
			return ctx.Err()
		case k := <-done:
			delete(running, k)
		case <-time.After(sleep):
		}
	}
}

// lock takes the worker lock and writes this process's id into it.
func (w *Worker) lock() (*os.File, error) {
	f, err := lockFile(workerLockPath(w.GitDir), false)
	if err != nil || f == nil {
		return nil, err
	}
	if err := f.Truncate(0); err == nil {
		_, _ = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	}
	return f, nil
}

// WorkerPID returns the process id of the running worker of gitDir (0 when
// none runs).
func WorkerPID(gitDir string) int {
	if !WorkerRunning(gitDir) {
		return 0
	}
	b, _ := os.ReadFile(workerLockPath(gitDir))
	pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	return pid
}

// hasWork reports whether any delivery is pending or any configured mirror
// is behind.
func (w *Worker) hasWork() bool {
	if js, _ := listJobs(w.GitDir, StatePending); len(js) > 0 {
		return true
	}
	remotes, _ := LoadRemotes(w.GitDir)
	for _, r := range remotes {
		if st, _ := ReadMirror(w.GitDir, r); st.Behind() {
			return true
		}
	}
	return false
}

// round starts what is due and reports whether anything is left to do and
// the earliest time something becomes due.
func (w *Worker) round(ctx context.Context, running map[string]bool, done chan<- string) (bool, time.Time) {
	remotes, rerr := LoadRemotes(w.GitDir)
	hooks, herr := LoadWebhooks(w.GitDir)
	cfg := fmt.Sprint(rerr, herr)
	if cfg != w.lastCfg {
		w.lastCfg = cfg
		for _, e := range []error{rerr, herr} {
			if e != nil {
				w.logf("configuration: %v", e)
			}
		}
	}
	now := w.now()
	work := false
	var wake time.Time
	due := func(t time.Time, longest time.Duration) bool {
		if dueAt(t, now, longest) {
			return true
		}
		if wake.IsZero() || t.Before(wake) {
			wake = t
		}
		return false
	}

	pending, errs := w.pending()
	for _, e := range errs {
		w.logf("spool: %v", e)
	}
	byName := map[string]Webhook{}
	for _, h := range hooks {
		byName[h.Name] = h
	}
	heads := map[string]*WebhookJob{}
	for _, j := range pending {
		if _, err := os.Stat(spoolPath(w.GitDir, "webhooks", "done", j.ID+".json")); err == nil {
			_ = os.Remove(spoolPath(w.GitDir, "webhooks", "pending", j.ID+".json")) // settled before a crash
			continue
		}
		work = true
		if heads[j.Hook] != nil {
			continue
		}
		heads[j.Hook] = j
	}
	for name, j := range heads {
		key := "hook:" + name
		if running[key] {
			continue
		}
		h, ok := byName[name]
		if !ok {
			if herr != nil {
				continue // the file is broken: keep the delivery until it is fixed
			}
			w.settleOrphan(j)
			continue
		}
		if !due(w.nextOf(j), h.maxBackoff()) {
			continue
		}
		running[key] = true
		go func() {
			defer func() { done <- key }()
			w.attemptHead(ctx, h, j.ID)
		}()
	}

	for _, r := range remotes {
		key := "mirror:" + r.Name
		st, err := ReadMirror(w.GitDir, r)
		if err != nil {
			w.logf("%v", err)
		}
		if !st.Behind() {
			continue
		}
		work = true
		if running[key] || !due(st.NextAttempt, seconds(r.BackoffMaxSeconds, DefaultMirrorBackoff)) {
			continue
		}
		running[key] = true
		go func() {
			defer func() { done <- key }()
			if _, err := SyncMirror(ctx, w.GitDir, r, w.Environ, false); err != nil {
				w.logf("%v", err)
			}
		}()
	}
	return work, wake
}

func (w *Worker) settleOrphan(j *WebhookJob) {
	_ = WithLock(hookLock(w.GitDir, j.Hook), func() error {
		now := w.now().UTC()
		j.State, j.LastError, j.Settled = StateFailed, "hook "+j.Hook+" is no longer in "+config.WebhooksFile, &now
		if err := saveJob(w.GitDir, j); err != nil {
			w.logf("%v", err)
		}
		return nil
	})
	w.logf("webhook %s: delivery %s failed: its hook is no longer configured", j.Hook, j.ID)
}

// attemptHead sends delivery id to h once, under h's lock, and records the
// outcome.
func (w *Worker) attemptHead(ctx context.Context, h Webhook, id string) {
	err := WithLock(hookLock(w.GitDir, h.Name), func() error {
		j, err := readJob(spoolPath(w.GitDir, "webhooks", "pending", id+".json"))
		if errors.Is(err, os.ErrNotExist) {
			return nil // settled meanwhile (redelivered by hand)
		}
		if err != nil {
			return err
		}
		if j.State != StatePending || !dueAt(w.nextOf(j), w.now(), h.maxBackoff()) {
			// Settled, or its retry not due, as this process last left it
			// but could not record (a full disk: spoolfull.go): record it
			// again, send nothing.
			return saveJob(w.GitDir, j)
		}
		h.Format = j.Format // the body was built for the format of its spooling
		status, aerr := w.Send(ctx, h, j.ID, j.Body)
		mono := w.now() // keeps the monotonic reading the retry is timed by
		now := mono.UTC()
		j.Attempts++
		j.LastAttempt, j.LastStatus = &now, status
		switch {
		case aerr == nil:
			j.State, j.LastError, j.Settled = StateDelivered, "", &now
			w.logf("webhook %s: delivered %s (attempt %d, %s)", h.Name, j.ID, j.Attempts, status)
		default:
			// Counted, not timed (schedule.go).
			j.LastError = clip(aerr.Error())
			if budget := h.AttemptBudget(); j.Attempts >= budget {
				j.State, j.Settled = StateFailed, &now
				w.logf("webhook %s: delivery %s failed after %d attempts (all it gets): %s", h.Name, j.ID, j.Attempts, j.LastError)
			} else {
				wait := Backoff(j.Attempts, h.firstBackoff(), h.maxBackoff())
				j.NextAttempt = now.Add(wait)
				w.schedule(j.ID, mono.Add(wait))
			}
		}
		if j.State != StatePending {
			w.schedule(j.ID, time.Time{})
		}
		return saveJob(w.GitDir, j)
	})
	if err != nil {
		w.logf("webhook %s: delivery %s: %v", h.Name, id, err)
	}
}

// SyncMirror pushes gitDir to mirror r once (a full push, PushMirror),
// holding r's sync lock so that syncs of one mirror never overlap, and
// records the outcome. With force false it does nothing when the mirror is
// not behind once the lock is held (a sync that ran meanwhile covered it).
// It returns the state after the sync.
func SyncMirror(ctx context.Context, gitDir string, r Remote, environ []string, force bool) (MirrorState, error) {
	var st MirrorState
	var perr error
	err := WithLock(mirrorSyncLock(gitDir, r.Name), func() error {
		cur, err := ReadMirror(gitDir, r)
		if err != nil {
			return err
		}
		if !force && !cur.Behind() {
			st = cur
			return nil
		}
		want := cur.Requested // what this sync will carry: everything recorded before it starts
		perr = PushMirror(ctx, gitDir, r, environ)
		now := clock.Now().UTC()
		st, err = updateMirror(gitDir, r, func(s *MirrorState) {
			s.Syncs++
			if perr == nil {
				s.Synced = max(s.Synced, want)
				s.Carried = cur.Refs // the refs as read before the push (mirrorrefs.go)
				s.LastSuccess, s.Failures = &now, 0
				return
			}
			s.LastError, s.LastErrorTime = clip(perr.Error()), &now
			s.Failures++
			s.NextAttempt = now.Add(Backoff(s.Failures, seconds(r.BackoffSeconds, DefaultBackoff), seconds(r.BackoffMaxSeconds, DefaultMirrorBackoff)))
		})
		return err
	})
	if err != nil {
		return st, fmt.Errorf("mirror %s: %w", r.Name, err)
	}
	return st, perr
}

// Redeliver sends delivery id once more, now, whatever its state, and
// records the attempt (delivered on a 2xx answer). It holds the hook's
// lock, so the worker does not send it at the same time.
func Redeliver(ctx context.Context, gitDir, id string, send Sender) (*WebhookJob, error) {
	j, err := FindDelivery(gitDir, id)
	if err != nil {
		return nil, err
	}
	hooks, err := LoadWebhooks(gitDir)
	if err != nil {
		return j, err
	}
	var h *Webhook
	for i := range hooks {
		if hooks[i].Name == j.Hook {
			h = &hooks[i]
		}
	}
	if h == nil {
		return j, fmt.Errorf("delivery %s is for hook %s, which is no longer in %s: add it back to redeliver", id, j.Hook, filepath.Join(gitDir, config.WebhooksFile))
	}
	var aerr error
	err = WithLock(hookLock(gitDir, h.Name), func() error {
		if j, err = FindDelivery(gitDir, id); err != nil {
			return err
		}
		var status string
		hf := *h
		hf.Format = j.Format
		status, aerr = send(ctx, hf, j.ID, j.Body)
		now := clock.Now().UTC()
		j.Attempts++
		j.LastAttempt, j.LastStatus = &now, status
		if aerr == nil {
			j.State, j.LastError, j.Settled = StateDelivered, "", &now
		} else {
			j.LastError = clip(aerr.Error())
			if j.State != StatePending {
				j.State = StateFailed
			}
		}
		return saveJob(gitDir, j)
	})
	if err != nil {
		return j, err
	}
	if aerr != nil {
		return j, fmt.Errorf("redelivering %s to %s: %w", id, h.URL, aerr)
	}
	return j, nil
}
