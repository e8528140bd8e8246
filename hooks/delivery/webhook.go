package delivery

// Webhooks (docs/delivery.md).
//
// One POST per push and subscriber (spooled by post-receive, sent by the
// delivery worker: see spool.go and worker.go), Content-Type
// application/json, body a Delivery:
//
//	{"delivery":"<32 hex>","repo":"<git dir name>","time":"<RFC 3339>",
//	 "updates":[{"ref":"refs/heads/main","old":"<hex>","new":"<hex>"}],
//	 "events":[{"ref":"refs/hub/pr/<id>","id":"<hex>","type":"pr.opened","payload":{...}}],
//	 "push_options":["..."]}
//
// Headers: X-GitPlus-Event: push, X-GitPlus-Delivery: <the spooled
// delivery's id, one per push and hook, the same on every attempt>,
// X-GitPlus-Signature: sha256=<hex HMAC-SHA256 of the body keyed with the
// hook's secret>. A 2xx answer is delivered; anything else (or no answer
// within timeout_seconds, default 5 s) is retried with exponential backoff
// over the hook's retry window, the same id and body each time, then kept
// as failed (docs/delivery.md). Redirects are not followed.

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"time"
)

// SignatureHeader carries the body's HMAC.
const SignatureHeader = "X-GitPlus-Signature"

// Delivery is the JSON document POSTed to webhooks.
type Delivery struct {
	Delivery    string          `json:"delivery"`
	Repo        string          `json:"repo"`
	Time        string          `json:"time"`
	Updates     []DeliveryRef   `json:"updates"`
	Events      []DeliveryEvent `json:"events"`
	PushOptions []string        `json:"push_options"`
}

// DeliveryRef is one ref update of the push.
type DeliveryRef struct {
	Ref string `json:"ref"`
	Old string `json:"old"`
	New string `json:"new"`
}

// DeliveryEvent is one new hub event of the push.
type DeliveryEvent struct {
	Ref     string          `json:"ref"`
	ID      string          `json:"id"`
	Type    string          `json:"type"`
	Payload json.RawMessage `json:"payload"`
}

// SpoolWebhooks spools the deliveries of push d to hooks, as post-receive
// does at now: to each hook that subscribes to d (wants) one delivery in
// git+'s format, or to a hook in GitHub's format one per branch update
// (spoolGitHub). It returns the ids spooled and the failures, one line each
// for the post-receive log; a failure skips one hook, never the others.
func SpoolWebhooks(gitDir string, hooks []Webhook, d *Delivery, now time.Time) (ids, fails []string) {
	body, err := json.Marshal(d)
	if err != nil {
		return nil, []string{fmt.Sprintf("encoding the webhook delivery: %v", err)}
	}
	ghCache := map[string]*GitHubPush{}
	for _, h := range hooks {
		if h.isGitHub() {
			gids, fs := spoolGitHub(context.Background(), gitDir, h, d, body, ghCache, now)
			ids, fails = append(ids, gids...), append(fails, fs...)
			continue
		}
		if !h.wants(d) {
			continue
		}
		j := &WebhookJob{ID: newJobID(now), Hook: h.Name, URL: h.URL, Created: now.UTC(), State: StatePending,
			NextAttempt: now.UTC(), Updates: d.Updates, Body: body}
		if err := spoolJob(gitDir, j); err != nil {
			fails = append(fails, fmt.Sprintf("spooling the delivery to webhook %s: %v", h.Name, err))
			continue
		}
		ids = append(ids, j.ID)
	}
	return ids, fails
}

// Sign returns the X-GitPlus-Signature value of body under secret.
func Sign(secret string, body []byte) string {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write(body)
	return "sha256=" + hex.EncodeToString(m.Sum(nil))
}

// VerifySignature checks an X-GitPlus-Signature value in constant time.
func VerifySignature(secret string, body []byte, header string) bool {
	return hmac.Equal([]byte(Sign(secret, body)), []byte(header))
}

// wants reports whether hook h subscribes to delivery d.
func (h Webhook) wants(d *Delivery) bool {
	if len(h.Events) == 0 {
		return true
	}
	for _, e := range h.Events {
		if e == "*" {
			return true
		}
		if e == "push" {
			for _, u := range d.Updates {
				if len(u.Ref) > 11 && u.Ref[:11] == "refs/heads/" {
					return true
				}
			}
		}
		for _, ev := range d.Events {
			if ev.Type == e {
				return true
			}
		}
	}
	return false
}

// Verifier says whether a delivery body, delivered with header (a
// request's Header.Get), is signed with secret: in git+'s
// X-GitPlus-Signature, else in GitHub's X-Hub-Signature-256
// (docs/delivery.md).
func Verifier(secret string) func(body []byte, header func(string) string) bool {
	return func(body []byte, header func(string) string) bool {
		sig := header(SignatureHeader)
		if sig == "" {
			sig = header(GitHubSignatureHeader)
		}
		return VerifySignature(secret, body, sig)
	}
}

// Sender sends one delivery attempt: POST body to h, signed (Sign), with
// header X-GitPlus-Delivery id, bounded by h's timeout; it returns the
// answer's status line ("" when there was none) and nil for a 2xx answer.
// The worker's and `git+ webhook redeliver`'s is Via(webhookpost.Post).
type Sender func(ctx context.Context, h Webhook, id string, body []byte) (string, error)

// Post sends one POST of body with headers to url, bounded by timeout, and
// returns as a Sender does. The HTTP one is webhookpost.Post, kept out of
// this package so that the post-receive hook, which sends nothing, does not
// link an HTTP client.
type Post func(ctx context.Context, url string, timeout time.Duration, headers map[string]string, body []byte) (string, error)

// Via is the Sender that sends each attempt through post: to h's URL,
// bounded by h's timeout, with Headers.
func Via(post Post) Sender {
	return func(ctx context.Context, h Webhook, id string, body []byte) (string, error) {
		return post(ctx, h.URL, h.Timeout(), Headers(h, id, body), body)
	}
}

// Headers are the headers of an attempt of delivery id to h: git+'s event,
// delivery and signature, or, for a delivery spooled in GitHub's format
// (h.Format "github"), GitHub's instead (docs/delivery.md).
func Headers(h Webhook, id string, body []byte) map[string]string {
	if h.Format == FormatGitHub {
		return map[string]string{
			GitHubEventHeader:       "push",
			GitHubDeliveryHeader:    id,
			GitHubSignatureHeader:   Sign(h.Secret, body),
			GitHubSignatureHeaderV1: SignSHA1(h.Secret, body),
		}
	}
	return map[string]string{
		"X-GitPlus-Event":    "push",
		"X-GitPlus-Delivery": id,
		SignatureHeader:      Sign(h.Secret, body),
	}
}

// Timeout is h's bound on one attempt.
func (h Webhook) Timeout() time.Duration { return seconds(h.TimeoutSeconds, DefaultWebhookTimeout) }

// Backoff is the wait after the n-th failed attempt (n ≥ 1): first, doubled
// each time, never over max.
func Backoff(n int, first, max time.Duration) time.Duration {
	d := first
	for i := 1; i < n && d < max; i++ {
		d *= 2
	}
	if d > max {
		d = max
	}
	return d
}
