// Package webhookpost sends webhook deliveries over HTTP (docs/delivery.md):
// the hooks.Sender the delivery worker and `git+ webhook redeliver` use.
// Redirects are not followed.
package webhookpost

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/gitplus/gitplus/hooks/delivery"
)

// Attempt is the HTTP hooks.Sender: one POST of body to h.
// A delivery spooled in GitHub's format (h.Format "github") carries
// GitHub's headers instead of git+'s (docs/delivery.md).
func Attempt(ctx context.Context, h delivery.Webhook, id string, body []byte) (string, error) {
	headers := map[string]string{
		"X-GitPlus-Event":        "push",
		"X-GitPlus-Delivery":     id,
		delivery.SignatureHeader: delivery.Sign(h.Secret, body),
	}
	if h.Format == delivery.FormatGitHub {
		headers = map[string]string{
			delivery.GitHubEventHeader:       "push",
			delivery.GitHubDeliveryHeader:    id,
			delivery.GitHubSignatureHeader:   delivery.Sign(h.Secret, body),
			delivery.GitHubSignatureHeaderV1: delivery.SignSHA1(h.Secret, body),
		}
	}
	return postOnce(ctx, h.URL, h.Timeout(), headers, body)
}

var client = &http.Client{
	CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
}

func postOnce(ctx context.Context, url string, timeout time.Duration, headers map[string]string, body []byte) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return "", err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "git+ delivery")
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := client.Do(req)
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
