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
//     detached (not waited for); then mirrors and webhooks are spooled, not
//     sent: a change is recorded for each mirror and one delivery per
//     subscribed webhook is written to the spool (hooks/delivery/spool.go),
//     and the delivery worker (hooks/delivery/worker.go) is started
//     detached unless one runs. The hook sends nothing over the network, so
//     a slow or dead receiver never slows a push (docs/delivery.md).
//   - The push option "gitplus.no-notify" (git+ queue run --no-notify)
//     skips the webhooks of a push that moved no refs/hub/* ref, and only
//     when git+ itself set it (hooks/wake/pushopts.go: never from a
//     client's `git push -o`); mirrors and wake still run.
//   - An event ref that cannot be decoded (it should not pass the boundary)
//     is logged; its update is still delivered and mirrored, without events.
//   - Before anything else, the updates are checked against the
//     pre-receive's records (hooks/opstatus/unjudged.go): a protected ref
//     that moved unjudged raises the alarm, whether or not any after-push
//     configuration exists; with webhooks or wake rules, the alarm is an
//     event (UnjudgedEvent) of the ref's update.

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"

	"github.com/gitplus/gitplus/hooks/delivery"
	"github.com/gitplus/gitplus/hooks/opstatus"
	"github.com/gitplus/gitplus/hooks/wake"
	"github.com/gitplus/gitplus/hubrefs"
	"github.com/gitplus/gitplus/receive"
	"github.com/gitplus/gitplus/receive/clock"
	"github.com/gitplus/gitplus/receive/gitio"
)

// Options are what the post-receive chain runs with.
type Options struct {
	GitDir  string
	Stdin   io.Reader // the hook's input: "<old> <new> <ref>" lines
	Stderr  io.Writer // one "git+: ..." line per failure (nil: none)
	Environ []string  // the hook's environment (os.Environ())
	Binary  string    // what "git+" means in wake rules and runs the delivery worker (absolute path)
	// NoWorker spools without starting the delivery worker (tests).
	NoWorker bool
}

// Report is what a chain run did, for tests and callers.
type Report struct {
	Unjudged []opstatus.Unjudged // updates of protected refs git+'s pre-receive did not judge (hooks/opstatus/unjudged.go)
	Alarms   []string            // their log lines
	Updates  []wake.RefUpdate
	Woken    []string // ids of the rules started
	Mirrors  []string // names of the mirrors a change was recorded for
	Spooled  []string // ids of the webhook deliveries spooled
	Failures []string // every failure, as logged
}

// LogFile is the post-receive log, relative to the git directory.
const LogFile = "gitplus/log/post-receive.log"

// PostReceive runs the after-push chain for the updates git feeds the
// post-receive hook on o.Stdin. It returns an error only when the input cannot
// be read.
func PostReceive(o Options) (*Report, error) {
	own := wake.HonouredOptions(o.Environ) // read before WithoutPusher drops GITPLUS_SERVED
	remote := wake.RemotePusher(o.Environ)
	who := wake.HostPusher(o.Environ) // for the alarm (hooks/opstatus/unjudged.go), before the identity is dropped
	o.Environ = wake.WithoutPusher(o.Environ)
	ups, err := receive.ParseHookInput(o.Stdin)
	if err != nil {
		return nil, fmt.Errorf("reading the post-receive input: %w", err)
	}
	rep := &Report{}
	// The alarm first (hooks/opstatus/unjudged.go): did git+'s pre-receive judge this push?
	unjudged, uerr := opstatus.FindUnjudged(o.GitDir, ups, who, time.Now())
	rep.Unjudged = unjudged
	remotes, rerr := delivery.LoadRemotes(o.GitDir)
	webhooks, werr := delivery.LoadWebhooks(o.GitDir)
	rules, kerr := wake.LoadWake(o.GitDir)
	var fails []string
	for _, e := range []error{uerr, rerr, werr, kerr} {
		if e != nil {
			fails = append(fails, e.Error())
		}
	}
	if len(unjudged) > 0 {
		rep.Alarms = opstatus.RaiseUnjudged(o.GitDir, o.Stderr, unjudged)
	}
	defer func() { rep.Failures = fails; logChain(o, rep, remote) }()
	if len(remotes)+len(webhooks)+len(rules) == 0 {
		for _, u := range ups {
			rep.Updates = append(rep.Updates, wake.RefUpdate{Ref: u.Ref, Old: u.Old.String(), New: u.New.String()})
		}
		return rep, nil
	}
	opts := wake.PushOptions(o.Environ)
	d := &delivery.Delivery{Delivery: randomID(), Repo: repoName(o.GitDir), Time: time.Now().UTC().Format(time.RFC3339),
		Updates: []delivery.DeliveryRef{}, Events: []delivery.DeliveryEvent{}, PushOptions: append([]string{}, opts...)}
	needEvents := len(webhooks)+len(rules) > 0
	var store *gitio.Store
	for _, u := range ups {
		ru := wake.RefUpdate{Ref: u.Ref, Old: u.Old.String(), New: u.New.String()}
		d.Updates = append(d.Updates, delivery.DeliveryRef{Ref: u.Ref, Old: ru.Old, New: ru.New})
		if needEvents && strings.HasPrefix(u.Ref, "refs/hub/") && !u.New.IsZero() {
			if store == nil {
				if store, err = gitio.OpenStore(o.GitDir, gitio.QuarantineEnv{}); err != nil {
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
					ru.Events = append(ru.Events, wake.WakeEvent{ID: ev.ID.String(), Type: ev.Type, Payload: ev.Payload})
					d.Events = append(d.Events, delivery.DeliveryEvent{Ref: u.Ref, ID: ev.ID.String(), Type: ev.Type, Payload: ev.Payload})
				}
			}
		}
		for _, a := range unjudged {
			if a.Ref != u.Ref {
				continue
			}
			// The alarm travels as an event of the push: webhooks
			// subscribed to it (or to "*") and wake rules "on" it get it.
			payload, _ := json.Marshal(a)
			ru.Types = append(ru.Types, opstatus.UnjudgedEvent)
			ru.Events = append(ru.Events, wake.WakeEvent{Type: opstatus.UnjudgedEvent, Payload: payload})
			d.Events = append(d.Events, delivery.DeliveryEvent{Ref: u.Ref, Type: opstatus.UnjudgedEvent, Payload: payload})
		}
		rep.Updates = append(rep.Updates, ru)
	}
	if store != nil {
		store.Close()
	}

	// Wake first: detached, not waited for.
	for _, r := range wake.Match(rules, rep.Updates, own.SkipWake) {
		runs := []wake.WakeRule{r}
		if r.PerEvent() {
			runs = nil
			refs, evs := wake.MatchEvents(r, rep.Updates)
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
			if _, err := wake.StartWake(o.GitDir, o.Binary, x, o.Environ); err != nil {
				fails = append(fails, err.Error())
				continue
			}
			rep.Woken = append(rep.Woken, r.ID())
		}
	}

	// Mirrors and webhooks: spooled, then handed to the worker; nothing is
	// sent from here, so no receiver can slow the push down. Their times
	// are git+'s clock (hooks/delivery/schedule.go).
	now := clock.Now()
	for _, r := range remotes {
		if err := delivery.RequestMirror(o.GitDir, r, now); err != nil {
			fails = append(fails, fmt.Sprintf("recording a change for mirror %s: %v", r.Name, err))
			continue
		}
		rep.Mirrors = append(rep.Mirrors, r.Name)
	}
	if len(webhooks) > 0 && !(own.NoNotify && wake.Quietable(rep.Updates)) {
		ids, fs := delivery.SpoolWebhooks(o.GitDir, webhooks, d, now)
		rep.Spooled, fails = append(rep.Spooled, ids...), append(fails, fs...)
	}
	// With any mirror configured the worker starts even when no change could
	// be recorded (a full disk): it syncs a mirror whose refs differ from
	// what it last carried (hooks/delivery/mirrorrefs.go).
	if len(remotes)+len(rep.Spooled) > 0 && !o.NoWorker {
		if err := delivery.StartWorker(o.GitDir, o.Binary, o.Environ); err != nil {
			fails = append(fails, err.Error())
		}
	}
	return rep, nil
}

// logChain appends the outcome to the log and the failures to stderr: in
// full to a pusher by path, who can read the server's files anyway; in one
// short line to a remote pusher (remote).
func logChain(o Options, rep *Report, remote bool) {
	if len(rep.Woken)+len(rep.Mirrors)+len(rep.Spooled)+len(rep.Failures)+len(rep.Alarms) == 0 {
		return
	}
	now := time.Now().UTC().Format(time.RFC3339)
	var b strings.Builder
	refs := make([]string, 0, len(rep.Updates))
	for _, u := range rep.Updates {
		refs = append(refs, u.Ref)
	}
	fmt.Fprintf(&b, "%s push %s: woke %v, mirrors to sync %v, deliveries spooled %v\n", now, strings.Join(refs, " "), rep.Woken, rep.Mirrors, rep.Spooled)
	for _, a := range rep.Alarms {
		fmt.Fprintf(&b, "%s   %s\n", now, a)
	}
	for _, f := range rep.Failures {
		fmt.Fprintf(&b, "%s   failed: %s\n", now, f)
		if !remote && o.Stderr != nil {
			fmt.Fprintf(o.Stderr, "git+: post-receive: %s (the push stands; see %s)\n", f, filepath.Join(o.GitDir, LogFile))
		}
	}
	if n := len(rep.Failures); n > 0 && remote && o.Stderr != nil {
		// The pusher hears that something failed, not the server's paths
		// or configuration: the failures themselves are the operator's, in
		// the log (docs/delivery.md "Configuration errors").
		fmt.Fprintf(o.Stderr, "git+: post-receive: %d after-push step(s) failed (mirrors, webhooks or wake rules); the push stands. The server's operator finds why in the repository's %s\n", n, LogFile)
	}
	f, err := wake.OpenLog(filepath.Join(o.GitDir, LogFile))
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
