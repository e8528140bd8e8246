package delivery

import (
	"context"
	"fmt"
	"math/rand"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/gitplus/gitplus/fixtures"
	"github.com/gitplus/gitplus/hooks/config"
)

// TestAttemptBudget: a webhook gets the attempts its backoff schedule
// starts within the retry window (35 with the defaults), capped by its
// attempts; the count is the attempts the earlier, timed rule made when
// every attempt was instant and the clock right (a model of it, over random
// configurations).
func TestAttemptBudget(t *testing.T) {
	if n := (Webhook{}).AttemptBudget(); n != 35 {
		t.Fatalf("defaults: %d attempts, want 35", n)
	}
	if n := (Webhook{Attempts: 3}).AttemptBudget(); n != 3 {
		t.Fatalf("attempts 3: %d", n)
	}
	if n := (Webhook{Attempts: 100, RetryWindowSeconds: 1, BackoffSeconds: 1}).AttemptBudget(); n != 2 {
		t.Fatalf("window 1s, backoff 1s: %d attempts, want 2 (at 0 s and 1 s)", n)
	}
	if n := (Webhook{RetryWindowSeconds: 1e9, BackoffSeconds: 1e-6, BackoffMaxSeconds: 1e-6}).AttemptBudget(); n != maxBudget {
		t.Fatalf("a huge window: %d attempts, want the cap %d", n, maxBudget)
	}
	// The timed rule: after failed attempt n at time at, the next is at
	// at+Backoff(n), and the delivery fails when that is past the window.
	timed := func(window, first, longest time.Duration) int {
		at := time.Duration(0)
		for n := 1; ; n++ {
			next := at + Backoff(n, first, longest)
			if next > window {
				return n
			}
			at = next
		}
	}
	rng := rand.New(rand.NewSource(1))
	for i := 0; i < 2000; i++ {
		first := time.Duration(1+rng.Int63n(5000)) * time.Millisecond
		longest := first * time.Duration(1+rng.Intn(100))
		window := time.Duration(rng.Int63n(int64(2 * time.Hour)))
		if got, want := windowAttempts(window, first, longest), timed(window, first, longest); got != want {
			t.Fatalf("window %v, backoff %v up to %v: %d attempts, the timed rule made %d", window, first, longest, got, want)
		}
	}
}

// TestWorkerClockSkew (docs/delivery.md, "Clocks"): a receiver down for its
// first three attempts gets the delivery on the fourth, whatever the clocks
// of the process that spooled it and of the worker: a worker three days
// ahead, a delivery spooled three days behind or ahead, a worker behind.
func TestWorkerClockSkew(t *testing.T) {
	const day = 24 * time.Hour
	for _, tc := range []struct {
		name            string
		spooled, worker time.Duration // clock offsets
	}{
		{"worker three days ahead", 0, 3 * day},
		{"spooled three days behind", -3 * day, 0},
		{"spooled three days ahead", 3 * day, 0},
		{"worker three days behind", 0, -3 * day},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			var mu sync.Mutex
			calls := 0
			srv := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
				mu.Lock()
				defer mu.Unlock()
				calls++
				if calls <= 3 {
					http.Error(rw, "down", http.StatusServiceUnavailable)
				}
			}))
			defer srv.Close()
			fixtures.WriteFile(t, dir, config.WebhooksFile, fmt.Sprintf(`{"hooks":[{"name":"h","url":%q,"secret":"k","backoff_seconds":0.02,"backoff_max_seconds":0.05,"retry_window_seconds":2}]}`, srv.URL))
			at := time.Now().Add(tc.spooled).UTC()
			j := &WebhookJob{ID: newJobID(time.Now()), Hook: "h", URL: srv.URL, Created: at, NextAttempt: at, State: StatePending, Body: []byte(`{}`)}
			if err := spoolJob(dir, j); err != nil {
				t.Fatal(err)
			}
			w := &Worker{GitDir: dir, Tick: 10 * time.Millisecond, Send: testSend, Now: func() time.Time { return time.Now().Add(tc.worker) }}
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			if err := w.Run(ctx); err != nil {
				t.Fatalf("worker: %v (the delivery was never due)", err)
			}
			got, err := FindDelivery(dir, j.ID)
			if err != nil {
				t.Fatal(err)
			}
			if got.State != StateDelivered || got.Attempts != 4 {
				t.Fatalf("%s after %d attempts (%s), want delivered on the 4th", got.State, got.Attempts, got.LastError)
			}
		})
	}
}

// TestDueAt: a recorded next attempt is due once past, or when it lies
// further ahead than any schedule asks (written by a clock that was ahead).
func TestDueAt(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	for _, tc := range []struct {
		next time.Time
		due  bool
	}{
		{now.Add(-time.Hour), true},
		{now, true},
		{now.Add(30 * time.Second), false},
		{now.Add(time.Minute), false},
		{now.Add(time.Minute + time.Second), true},
		{now.Add(72 * time.Hour), true},
	} {
		if got := dueAt(tc.next, now, time.Minute); got != tc.due {
			t.Errorf("next %v after now, longest wait 1m: due %v, want %v", tc.next.Sub(now), got, tc.due)
		}
	}
}
