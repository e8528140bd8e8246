package delivery

// The delivery spool seen and driven by hand (docs/delivery.md): what
// `git+ webhook deliveries`, `git+ mirror status|sync` show and do, and the
// wait of a verb that pushed for its own deliveries.
//
// Decisions:
//   - A configuration file that does not load is listed first (text) or as
//     "config_errors" (JSON) with its file, line and column, after which the
//     verb prints what it could read and exits 1.
//   - SyncMirrors syncs in the calling process, holding each mirror's sync
//     lock (so it never overlaps the worker's sync of the same mirror).
//   - A verb that pushed (queue run, pr merge) waits for its own deliveries
//     at its end (AwaitPushes), bounded by $GITPLUS_DELIVERY_WAIT (a Go
//     duration; default DefaultAwait), only when the repository it pushed
//     to is on this machine; it reports what did not arrive and does not
//     fail for it.

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"

	"github.com/gitplus/gitplus/hooks/config"
	"github.com/gitplus/gitplus/hooks/wake"
)

// DeliveryView is one webhook delivery as `git+ webhook deliveries` shows it.
type DeliveryView struct {
	ID          string        `json:"id"`
	Hook        string        `json:"hook"`
	URL         string        `json:"url"`
	State       string        `json:"state"`
	Attempts    int           `json:"attempts"`
	LastStatus  string        `json:"last_status"`
	LastError   string        `json:"last_error"`
	Created     time.Time     `json:"created"`
	LastAttempt *time.Time    `json:"last_attempt"`
	NextAttempt *time.Time    `json:"next_attempt"`
	Settled     *time.Time    `json:"settled"`
	Updates     []DeliveryRef `json:"updates"`
}

// DeliveryStatus is every webhook delivery of a repository, and what of its
// configuration and spool did not load.
type DeliveryStatus struct {
	ConfigErrors []string       `json:"config_errors"`
	Deliveries   []DeliveryView `json:"deliveries"`
}

func errorLines(errs ...error) []string {
	out := []string{}
	for _, e := range errs {
		if e != nil {
			out = append(out, e.Error())
		}
	}
	return out
}

// Err is the error `git+ webhook deliveries` of gitDir ends with when its
// configuration or spool did not load, nil otherwise.
func (st DeliveryStatus) Err(gitDir string) error {
	return listedErrors(st.ConfigErrors, "the webhook configuration or spool", gitDir)
}

// listedErrors is the error a status of gitDir whose errs (what did not
// load of what) were listed ends with: nil when there are none.
func listedErrors(errs []string, what, gitDir string) error {
	if len(errs) == 0 {
		return nil
	}
	return fmt.Errorf("%s of %s has errors (listed above)", what, gitDir)
}

// ReadDeliveryStatus reads the webhook deliveries spooled in gitDir.
func ReadDeliveryStatus(gitDir string) DeliveryStatus {
	_, herr := LoadWebhooks(gitDir)
	jobs, rerrs := Deliveries(gitDir)
	st := DeliveryStatus{ConfigErrors: append(errorLines(herr), errorLines(rerrs...)...), Deliveries: []DeliveryView{}}
	for _, j := range jobs {
		v := DeliveryView{ID: j.ID, Hook: j.Hook, URL: j.URL, State: j.State, Attempts: j.Attempts, LastStatus: j.LastStatus,
			LastError: j.LastError, Created: j.Created, LastAttempt: j.LastAttempt, Settled: j.Settled, Updates: j.Updates}
		if j.State == StatePending {
			t := j.NextAttempt
			v.NextAttempt = &t
		}
		st.Deliveries = append(st.Deliveries, v)
	}
	return st
}

// WriteText prints st one line per delivery, as `git+ webhook deliveries`.
func (st DeliveryStatus) WriteText(out io.Writer, gitDir string) {
	for _, e := range st.ConfigErrors {
		fmt.Fprintf(out, "config error: %s\n", e)
	}
	if len(st.Deliveries) == 0 {
		fmt.Fprintf(out, "no webhook deliveries recorded in %s\n", gitDir)
	}
	for _, v := range st.Deliveries {
		refs := make([]string, 0, len(v.Updates))
		for _, u := range v.Updates {
			refs = append(refs, u.Ref)
		}
		fmt.Fprintf(out, "%s %s %s attempts=%d", v.ID, v.Hook, v.State, v.Attempts)
		if v.LastStatus != "" {
			fmt.Fprintf(out, " status=%q", v.LastStatus)
		}
		if v.LastError != "" {
			fmt.Fprintf(out, " error=%q", v.LastError)
		}
		if v.NextAttempt != nil && v.Attempts > 0 {
			fmt.Fprintf(out, " next=%s", v.NextAttempt.UTC().Format(time.RFC3339))
		}
		fmt.Fprintf(out, " refs=%s\n", strings.Join(refs, ","))
	}
}

// MirrorView is one mirror as `git+ mirror status` shows it.
type MirrorView struct {
	Name          string     `json:"name"`
	URL           string     `json:"url"`
	Behind        bool       `json:"behind"`
	RefsBehind    bool       `json:"refs_behind"` // the refs differ from what it last received (mirrorrefs.go)
	LastSuccess   *time.Time `json:"last_success"`
	LastError     string     `json:"last_error"`
	LastErrorTime *time.Time `json:"last_error_time"`
	Failures      int        `json:"failures"`
	Requested     int64      `json:"changes_recorded"`
	Synced        int64      `json:"changes_synced"`
	NextAttempt   *time.Time `json:"next_attempt"`
}

// MirrorStatus is every mirror of a repository, whether its delivery
// worker runs, and what of its configuration did not load.
type MirrorStatus struct {
	ConfigErrors  []string     `json:"config_errors"`
	Mirrors       []MirrorView `json:"mirrors"`
	WorkerRunning bool         `json:"worker_running"`
	remotesOK     bool         // remotes.json loaded (or is absent)
}

// Err is the error `git+ mirror status` of gitDir ends with when its
// configuration did not load, nil otherwise.
func (st MirrorStatus) Err(gitDir string) error {
	return listedErrors(st.ConfigErrors, "the mirror configuration", gitDir)
}

// ReadMirrorStatus reads the mirrors of gitDir and their state.
func ReadMirrorStatus(gitDir string) MirrorStatus {
	remotes, rerr := LoadRemotes(gitDir)
	st := MirrorStatus{ConfigErrors: errorLines(rerr), Mirrors: []MirrorView{}, remotesOK: rerr == nil}
	for _, r := range remotes {
		ms, err := ReadMirror(gitDir, r)
		if err != nil {
			st.ConfigErrors = append(st.ConfigErrors, err.Error())
		}
		v := MirrorView{Name: r.Name, URL: r.URL, Behind: ms.Behind(), RefsBehind: ms.RefsBehind(), LastSuccess: ms.LastSuccess, LastError: ms.LastError,
			LastErrorTime: ms.LastErrorTime, Failures: ms.Failures, Requested: ms.Requested, Synced: ms.Synced}
		if ms.Behind() {
			t := ms.NextAttempt
			v.NextAttempt = &t
		}
		st.Mirrors = append(st.Mirrors, v)
	}
	st.WorkerRunning = WorkerRunning(gitDir)
	return st
}

// WriteText prints st one line per mirror, as `git+ mirror status`.
func (st MirrorStatus) WriteText(out io.Writer, gitDir string) {
	for _, e := range st.ConfigErrors {
		fmt.Fprintf(out, "config error: %s\n", e)
	}
	if len(st.Mirrors) == 0 && st.remotesOK {
		fmt.Fprintf(out, "no mirrors in %s\n", filepath.Join(gitDir, config.RemotesFile))
	}
	for _, v := range st.Mirrors {
		state := "in step"
		switch {
		case v.Requested > v.Synced:
			state = fmt.Sprintf("behind (%d changes not synced)", v.Requested-v.Synced)
		case v.Behind:
			state = "behind (its refs differ from those it last received)"
		}
		fmt.Fprintf(out, "%s %s: %s", v.Name, v.URL, state)
		if v.LastSuccess != nil {
			fmt.Fprintf(out, "; last success %s", v.LastSuccess.UTC().Format(time.RFC3339))
		}
		if v.LastError != "" {
			fmt.Fprintf(out, "; last error %s: %s", v.LastErrorTime.UTC().Format(time.RFC3339), v.LastError)
		}
		fmt.Fprintln(out)
	}
	for _, v := range st.Mirrors {
		if v.Behind && !st.WorkerRunning {
			fmt.Fprintln(out, "no delivery worker runs: the next push starts one; `git+ hook deliver` or `git+ mirror sync` syncs now")
			break
		}
	}
}

// SyncMirrors pushes everything to every mirror of gitDir, or only to the
// one called name, now, in this process: one "synced NAME (URL)" line on
// out per mirror that synced, one "git+: ..." line on errOut per failure.
// It fails when the configuration does not load, name is no mirror, or any
// mirror failed.
func SyncMirrors(ctx context.Context, gitDir, name string, environ []string, out, errOut io.Writer) error {
	remotes, err := LoadRemotes(gitDir)
	if err != nil {
		return err
	}
	var picked []Remote
	var names []string
	for _, r := range remotes {
		names = append(names, r.Name)
		if name == "" || r.Name == name {
			picked = append(picked, r)
		}
	}
	if len(picked) == 0 {
		if name != "" {
			return fmt.Errorf("no mirror %q in %s (mirrors: %s)", name, filepath.Join(gitDir, config.RemotesFile), strings.Join(names, ", "))
		}
		fmt.Fprintf(out, "no mirrors in %s: nothing to do\n", filepath.Join(gitDir, config.RemotesFile))
		return nil
	}
	failed := 0
	for _, r := range picked {
		if _, err := SyncMirror(ctx, gitDir, r, environ, true); err != nil {
			failed++
			fmt.Fprintf(errOut, "git+: %v\n", err)
			continue
		}
		fmt.Fprintf(out, "synced %s (%s)\n", r.Name, r.URL)
	}
	if failed > 0 {
		return fmt.Errorf("%d of %d mirrors failed to sync (see `git+ mirror status`)", failed, len(picked))
	}
	return nil
}

// AwaitPushes waits, bounded, for the deliveries of the pushes a verb made
// since it started to the repository whose git directory is dir, when that
// repository is on this machine (dir "" otherwise: repo.Repo.ServerGitDir
// says where a remote lives), and returns what did not arrive, one line
// each.
func AwaitPushes(dir string, since time.Time, environ []string) []string {
	if dir == "" {
		return nil
	}
	bound := DefaultAwait
	if v := getenv(environ, "GITPLUS_DELIVERY_WAIT"); v != "" {
		if d, err := time.ParseDuration(v); err == nil {
			bound = d
		}
	}
	bin, _ := wake.Executable()
	var out []string
	for _, u := range AwaitDeliveries(context.Background(), dir, AwaitSpec{Since: since, Binary: bin, Environ: environ}, bound) {
		out = append(out, u.String())
	}
	return out
}

func getenv(environ []string, name string) string {
	v := ""
	for _, kv := range environ {
		if k, val, ok := strings.Cut(kv, "="); ok && k == name {
			v = val
		}
	}
	return v
}
