package hooks

// The after-push chain run from post-receive (docs/operating.md).
//
// Decisions:
//   - The push has already happened: nothing here fails it. Every failure
//     (a configuration file that does not parse, a mirror or webhook that
//     fails or times out, a wake rule that cannot start) is appended to
//     <gitdir>/gitplus/log/post-receive.log and printed as one "git+: ..."
//     line on standard error (the pusher sees "remote: git+: ..."), and the
//     hook still exits 0. Only unreadable hook input is an error.
//   - Order: new events are decoded first (refs/hub/* updates, with
//     hubrefs.ReadNew and the default ceilings); wake rules are then started
//     detached (not waited for); mirrors and webhooks run concurrently under
//     one deadline (ChainDeadline, 30 s) on top of their own bounds, and the
//     hook waits for them.
//   - The push option "gitplus.no-notify" (git+ queue run --no-notify)
//     skips the webhooks; mirrors and wake still run.
//   - An event ref that cannot be decoded (it should not pass the boundary)
//     is logged; its update is still delivered and mirrored, without events.

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/gitplus/gitplus/hubrefs"
	"github.com/gitplus/gitplus/receive"
)

// NoNotifyOption is the push option that skips webhooks.
const NoNotifyOption = "gitplus.no-notify"

// Options are what the post-receive chain runs with.
type Options struct {
	GitDir  string
	Stdin   io.Reader // the hook's input: "<old> <new> <ref>" lines
	Stderr  io.Writer // one "git+: ..." line per failure (nil: none)
	Environ []string  // the hook's environment (os.Environ())
	Binary  string    // what "git+" means in wake rules (absolute path)
}

// Report is what a chain run did, for tests and callers.
type Report struct {
	Updates  []RefUpdate
	Woken    []string // ids of the rules started
	Mirrored []string // names of the mirrors that converged
	Notified []string // webhooks delivered
	Failures []string // every failure, as logged
}

// LogFile is the post-receive log, relative to the git directory.
const LogFile = "gitplus/log/post-receive.log"

// PostReceive runs the after-push chain for the updates git feeds the
// post-receive hook on o.Stdin. It returns an error only when the input cannot
// be read.
func PostReceive(ctx context.Context, o Options) (*Report, error) {
	ups, err := receive.ParseHookInput(o.Stdin)
	if err != nil {
		return nil, fmt.Errorf("reading the post-receive input: %w", err)
	}
	rep := &Report{}
	remotes, rerr := LoadRemotes(o.GitDir)
	webhooks, werr := LoadWebhooks(o.GitDir)
	rules, kerr := LoadWake(o.GitDir)
	var fails []string
	for _, e := range []error{rerr, werr, kerr} {
		if e != nil {
			fails = append(fails, e.Error())
		}
	}
	defer func() { rep.Failures = fails; logChain(o, rep) }()
	if len(remotes)+len(webhooks)+len(rules) == 0 {
		for _, u := range ups {
			rep.Updates = append(rep.Updates, RefUpdate{Ref: u.Ref, Old: u.Old.String(), New: u.New.String()})
		}
		return rep, nil
	}
	opts := PushOptions(o.Environ)
	d := &Delivery{Delivery: randomID(), Repo: repoName(o.GitDir), Time: time.Now().UTC().Format(time.RFC3339),
		Updates: []DeliveryRef{}, Events: []DeliveryEvent{}, PushOptions: append([]string{}, opts...)}
	needEvents := len(webhooks)+len(rules) > 0
	var store *receive.Store
	for _, u := range ups {
		ru := RefUpdate{Ref: u.Ref, Old: u.Old.String(), New: u.New.String()}
		d.Updates = append(d.Updates, DeliveryRef{Ref: u.Ref, Old: ru.Old, New: ru.New})
		if needEvents && strings.HasPrefix(u.Ref, "refs/hub/") && !u.New.IsZero() {
			if store == nil {
				if store, err = receive.OpenStore(o.GitDir, receive.QuarantineEnv{}); err != nil {
					fails = append(fails, fmt.Sprintf("opening the object store of %s to read new events: %v", o.GitDir, err))
					needEvents = false
				}
			}
			if store != nil {
				evs, err := hubrefs.ReadNew(store, u.Old, u.New, hubrefs.Ceilings{})
				if err != nil {
					fails = append(fails, fmt.Sprintf("reading the new events of %s (%s..%s): %v", u.Ref, u.Old, u.New, err))
				}
				for _, ev := range evs {
					ru.Types = append(ru.Types, ev.Type)
					ru.Events = append(ru.Events, WakeEvent{ID: ev.ID.String(), Type: ev.Type, Payload: ev.Payload})
					d.Events = append(d.Events, DeliveryEvent{Ref: u.Ref, ID: ev.ID.String(), Type: ev.Type, Payload: ev.Payload})
				}
			}
		}
		rep.Updates = append(rep.Updates, ru)
	}
	if store != nil {
		store.Close()
	}

	// Wake first: detached, not waited for.
	for _, r := range Match(rules, rep.Updates, SkippedRules(opts)) {
		runs := []WakeRule{r}
		if r.PerEvent() {
			runs = nil
			refs, evs := MatchEvents(r, rep.Updates)
			for i, ev := range evs {
				x, err := r.Expand(refs[i], ev)
				if err != nil {
					fails = append(fails, fmt.Sprintf("wake rule %s: %v", r.ID(), err))
					continue
				}
				runs = append(runs, x)
			}
		}
		for _, x := range runs {
			if _, err := StartWake(o.GitDir, o.Binary, x, o.Environ); err != nil {
				fails = append(fails, err.Error())
				continue
			}
			rep.Woken = append(rep.Woken, r.ID())
		}
	}

	// Mirrors and webhooks: concurrent, bounded.
	ctx, cancel := context.WithTimeout(ctx, ChainDeadline)
	defer cancel()
	var mu sync.Mutex
	var wg sync.WaitGroup
	for _, r := range remotes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			err := PushMirror(ctx, o.GitDir, r, o.Environ)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				fails = append(fails, err.Error())
			} else {
				rep.Mirrored = append(rep.Mirrored, r.Name)
			}
		}()
	}
	noNotify := false
	for _, opt := range opts {
		noNotify = noNotify || opt == NoNotifyOption
	}
	if len(webhooks) > 0 && !noNotify {
		body, err := json.Marshal(d)
		if err != nil {
			fails = append(fails, fmt.Sprintf("encoding the webhook delivery: %v", err))
		} else {
			for _, h := range webhooks {
				if !h.wants(d) {
					continue
				}
				wg.Add(1)
				go func() {
					defer wg.Done()
					err := Deliver(ctx, h, d.Delivery, body)
					mu.Lock()
					defer mu.Unlock()
					if err != nil {
						fails = append(fails, err.Error())
					} else {
						rep.Notified = append(rep.Notified, h.Name)
					}
				}()
			}
		}
	}
	wg.Wait()
	return rep, nil
}

// logChain appends the outcome to the log and the failures to stderr.
func logChain(o Options, rep *Report) {
	if len(rep.Woken)+len(rep.Mirrored)+len(rep.Notified)+len(rep.Failures) == 0 {
		return
	}
	now := time.Now().UTC().Format(time.RFC3339)
	var b strings.Builder
	refs := make([]string, 0, len(rep.Updates))
	for _, u := range rep.Updates {
		refs = append(refs, u.Ref)
	}
	fmt.Fprintf(&b, "%s push %s: woke %v, mirrored %v, notified %v\n", now, strings.Join(refs, " "), rep.Woken, rep.Mirrored, rep.Notified)
	for _, f := range rep.Failures {
		fmt.Fprintf(&b, "%s   failed: %s\n", now, f)
		if o.Stderr != nil {
			fmt.Fprintf(o.Stderr, "git+: post-receive: %s (the push stands; see %s)\n", f, filepath.Join(o.GitDir, LogFile))
		}
	}
	f, err := openLog(filepath.Join(o.GitDir, LogFile))
	if err != nil {
		if o.Stderr != nil {
			fmt.Fprintf(o.Stderr, "git+: post-receive: %v\n", err)
		}
		return
	}
	defer f.Close()
	_, _ = f.WriteString(b.String())
}

func randomID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

func repoName(gitDir string) string {
	abs, err := filepath.Abs(gitDir)
	if err != nil {
		abs = gitDir
	}
	return filepath.Base(abs)
}
