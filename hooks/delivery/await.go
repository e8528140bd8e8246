package delivery

// Waiting for a verb's own deliveries (docs/delivery.md): `queue run` and
// `pr merge` push, post-receive spools, the worker delivers; the verb then
// waits, bounded, at its very end — after every ref it moved and every
// record it appended, never inside a push or a queue pass's critical window
// — and reports what did not arrive.

import (
	"context"
	"fmt"
	"path/filepath"
	"time"

	"github.com/gitplus/gitplus/hooks/config"
)

// DefaultAwait bounds how long a verb waits for its deliveries: above a
// mirror's own push bound (DefaultMirrorTimeout) and a webhook's first
// retries, so a healthy receiver is always waited for and a black hole
// costs one bounded wait.
const DefaultAwait = 60 * time.Second

// AwaitSpec says which deliveries are a verb's own.
type AwaitSpec struct {
	// Since: the webhook deliveries recorded at or after it (the verb's
	// start); mirrors that recorded a change since then must carry every
	// change recorded before the wait starts.
	Since time.Time
	// Refs, when not empty, narrows the webhook deliveries to those whose
	// push updated one of these refs to the given new value.
	Refs []DeliveryRef
	// Binary starts a worker when deliveries wait and none runs ("": none).
	Binary  string
	Environ []string
}

// Undelivered is one delivery a verb waited for in vain.
type Undelivered struct {
	Kind  string `json:"kind"` // "webhook", "mirror" or "config"
	Name  string `json:"name"` // the hook or mirror, or the file
	ID    string `json:"id,omitempty"`
	State string `json:"state"` // pending, failed, behind, bad
	Error string `json:"error,omitempty"`
}

func (u Undelivered) String() string {
	s := u.Kind + " " + u.Name
	if u.ID != "" {
		s += " delivery " + u.ID
	}
	s += ": " + u.State
	if u.Error != "" {
		s += " (" + u.Error + ")"
	}
	return s
}

func (s AwaitSpec) wants(j *WebhookJob) bool {
	if j.Created.Before(s.Since) {
		return false
	}
	if len(s.Refs) == 0 {
		return true
	}
	for _, r := range s.Refs {
		for _, u := range j.Updates {
			if u.Ref == r.Ref && (r.New == "" || u.New == r.New) {
				return true
			}
		}
	}
	return false
}

// AwaitDeliveries waits until the deliveries spec names are settled and
// every configured mirror carries the changes recorded when the wait
// started, or bound passes (DefaultAwait when 0), polling the spool. It
// returns what was not delivered: webhook deliveries still pending or
// failed, mirrors still behind, and configuration files that do not load.
func AwaitDeliveries(ctx context.Context, gitDir string, spec AwaitSpec, bound time.Duration) []Undelivered {
	if bound <= 0 {
		bound = DefaultAwait
	}
	ctx, cancel := context.WithTimeout(ctx, bound)
	defer cancel()
	var out []Undelivered
	remotes, rerr := LoadRemotes(gitDir)
	_, herr := LoadWebhooks(gitDir)
	for _, e := range []struct {
		err  error
		file string
	}{{rerr, config.RemotesFile}, {herr, config.WebhooksFile}} {
		if e.err != nil {
			out = append(out, Undelivered{Kind: "config", Name: filepath.Join(gitDir, e.file), State: "bad", Error: e.err.Error()})
		}
	}
	targets := map[string]int64{}
	for _, r := range remotes {
		st, _ := ReadMirror(gitDir, r)
		if st.LastRequested != nil && !st.LastRequested.Before(spec.Since) {
			targets[r.Name] = st.Requested
		}
	}
	started := false
	for {
		var left []Undelivered
		jobs, _ := DeliveriesSince(gitDir, spec.Since)
		for _, j := range jobs {
			if !spec.wants(j) || j.State == StateDelivered {
				continue
			}
			left = append(left, Undelivered{Kind: "webhook", Name: j.Hook, ID: j.ID, State: j.State, Error: j.LastError})
		}
		pendingLeft := false
		for _, u := range left {
			pendingLeft = pendingLeft || u.State == StatePending
		}
		for _, r := range remotes {
			st, _ := ReadMirror(gitDir, r)
			if t, ok := targets[r.Name]; ok && st.Synced < t {
				left = append(left, Undelivered{Kind: "mirror", Name: r.Name, State: "behind", Error: st.LastError})
				pendingLeft = true
			}
		}
		if !pendingLeft {
			return append(out, left...)
		}
		if !started && spec.Binary != "" {
			started = true
			_ = StartWorker(gitDir, spec.Binary, spec.Environ)
		}
		select {
		case <-ctx.Done():
			for i := range left {
				if left[i].Error == "" {
					left[i].Error = fmt.Sprintf("not settled within %s", bound)
				}
			}
			return append(out, left...)
		case <-time.After(50 * time.Millisecond):
		}
	}
}
