// Package webhookpost sends webhook deliveries over HTTP (docs/delivery.md):
// the delivery.Post the delivery worker and `git+ webhook redeliver` send
// through (delivery.Via), which decides the headers. Redirects are not
// followed.
package webhookpost

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"time"
)

var client = &http.Client{
	CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
}

// Post POSTs body, a JSON document, with headers to url, bounded by
// timeout: the answer's status line ("" when there was none), and an error
// naming url and the status for an answer that is not 2xx.
func Post(ctx context.Context, url string, timeout time.Duration, headers map[string]string, body []byte) (string, error) {
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
