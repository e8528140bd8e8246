package hooks

// Webhooks (DESIGN.md §9).
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
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
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

var webhookClient = &http.Client{
	CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
}

// Attempt POSTs body to h once, signed, with header X-GitPlus-Delivery id,
// bounded by h's timeout. It returns the answer's status line ("" when there
// was none) and nil for a 2xx answer.
func Attempt(ctx context.Context, h Webhook, id string, body []byte) (string, error) {
	return postOnce(ctx, h.URL, seconds(h.TimeoutSeconds, DefaultWebhookTimeout), id, Sign(h.Secret, body), body)
}

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

func postOnce(ctx context.Context, url string, timeout time.Duration, delivery, sig string, body []byte) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return "", err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "git+ delivery")
	req.Header.Set("X-GitPlus-Event", "push")
	req.Header.Set("X-GitPlus-Delivery", delivery)
	req.Header.Set(SignatureHeader, sig)
	resp, err := webhookClient.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	if resp.StatusCode/100 != 2 {
		return resp.Status, fmt.Errorf("%s answered %s", url, resp.Status)
	}
	return resp.Status, nil
}
