package delivery

// The after-push chain's configuration of deliveries (docs/operating.md).
// Two of its three optional JSON files in the bare repository's git
// directory, never in pushed content (hub/wake.json is hooks/wake's,
// wakeconfig.go; hooks/config reads all three):
//
//	hub/remotes.json   {"remotes":[{"name":"m1","url":"/srv/mirror.git","timeout_seconds":20,
//	                                 "backoff_seconds":1,"backoff_max_seconds":300}]}
//	hub/webhooks.json  {"hooks":[{"url":"https://ci.example/hook","secret":"s3cret",
//	                              "events":["*"],"timeout_seconds":5,"attempts":0,
//	                              "retry_window_seconds":1800,"backoff_seconds":1,
//	                              "backoff_max_seconds":60,"format":"gitplus","repo_url":""}]}
//
// Unknown fields are refused (a misspelt "timeout_secnds" would otherwise be
// silently ignored), and so is a webhook URL that is not http(s) with a host
// or a mirror URL that git could take for an option; the error names the
// file, line and column. A file that does not parse is logged and that part
// of the chain is skipped, the rest still runs. Zero timeouts, windows and
// backoffs mean the defaults below; attempts 0 means no cap but the window
// (docs/delivery.md).

import (
	"fmt"
	"net/url"
	"path/filepath"
	"strings"
	"time"

	"github.com/gitplus/gitplus/hooks/config"
)

// Defaults of the chain's bounds.
const (
	DefaultMirrorTimeout  = 20 * time.Second // one mirror: both of its pushes
	DefaultWebhookTimeout = 5 * time.Second  // one delivery attempt
	DefaultRetryWindow    = 30 * time.Minute // a webhook delivery gets the attempts its backoff schedule fits in this (35 by default), then fails
	DefaultBackoff        = time.Second      // first wait before a retry (doubles each time)
	DefaultWebhookBackoff = time.Minute      // longest wait between two webhook attempts
	DefaultMirrorBackoff  = 5 * time.Minute  // longest wait between two syncs of a failing mirror
)

// Remote is one mirror.
type Remote struct {
	Name           string  `json:"name"`
	URL            string  `json:"url"`
	TimeoutSeconds float64 `json:"timeout_seconds,omitempty"`
	// Retry backoff of a failing mirror: the first wait, doubled up to the
	// maximum. A failing mirror is retried until it syncs.
	BackoffSeconds    float64 `json:"backoff_seconds,omitempty"`
	BackoffMaxSeconds float64 `json:"backoff_max_seconds,omitempty"`
}

// RemotesConfig is hub/remotes.json.
type RemotesConfig struct {
	Remotes []Remote `json:"remotes"`
}

// Webhook is one subscriber. Events lists event types (or "*", the default
// when empty, for every push; "push" for any refs/heads update): a push is
// delivered when one of its new events, or its branch updates for "push",
// match.
type Webhook struct {
	Name           string   `json:"name,omitempty"`
	URL            string   `json:"url"`
	Secret         string   `json:"secret"`
	Events         []string `json:"events,omitempty"`
	TimeoutSeconds float64  `json:"timeout_seconds,omitempty"`
	Attempts       int      `json:"attempts,omitempty"` // cap on attempts per delivery; 0: the window alone bounds them
	// A delivery is retried with exponential backoff (first wait, doubled up
	// to the maximum) as many times as that schedule starts attempts within
	// RetryWindowSeconds — a count, not a deadline (schedule.go) — then kept
	// as failed.
	RetryWindowSeconds float64 `json:"retry_window_seconds,omitempty"`
	BackoffSeconds     float64 `json:"backoff_seconds,omitempty"`
	BackoffMaxSeconds  float64 `json:"backoff_max_seconds,omitempty"`
	// Format is "gitplus" (the default) or "github" (github.go); RepoURL,
	// for the github format, is the repository's url in its payloads.
	Format  string `json:"format,omitempty"`
	RepoURL string `json:"repo_url,omitempty"`
}

// WebhooksConfig is hub/webhooks.json.
type WebhooksConfig struct {
	Hooks []Webhook `json:"hooks"`
}

// checkWebhookURL accepts absolute http and https URLs with a host.
func checkWebhookURL(u string) error {
	x, err := url.Parse(u)
	if err != nil {
		return fmt.Errorf("url %q: %v", u, err)
	}
	if x.Scheme != "http" && x.Scheme != "https" || x.Host == "" {
		return fmt.Errorf("url %q is not an http:// or https:// URL with a host", u)
	}
	return nil
}

// checkMirrorURL refuses what git would read as an option or cannot carry
// on one command line.
func checkMirrorURL(u string) error {
	if strings.HasPrefix(u, "-") {
		return fmt.Errorf("url %q starts with '-' (git would take it for an option)", u)
	}
	if strings.ContainsFunc(u, func(r rune) bool { return r < ' ' || r == 0x7f }) {
		return fmt.Errorf("url %q holds a control character", u)
	}
	return nil
}

// LoadRemotes reads hub/remotes.json (nil, nil when absent).
func LoadRemotes(gitDir string) ([]Remote, error) {
	var c RemotesConfig
	data, ok, err := config.ReadJSON(gitDir, config.RemotesFile, &c)
	if !ok {
		return nil, err
	}
	p := filepath.Join(gitDir, config.RemotesFile)
	seen := map[string]bool{}
	for i, r := range c.Remotes {
		if r.URL == "" {
			return nil, fmt.Errorf("%s: remote %d (%q) has no url: %w", config.At(p, data, config.ValueOffset(data, r.Name)), i, r.Name, config.ErrConfig)
		}
		if err := checkMirrorURL(r.URL); err != nil {
			return nil, fmt.Errorf("%s: remote %d: %v: %w", config.At(p, data, config.ValueOffset(data, r.URL)), i, err, config.ErrConfig)
		}
		name, err := uniqueName(seen, r.Name, r.URL, "remotes", p, data)
		if err != nil {
			return nil, err
		}
		c.Remotes[i].Name = name
	}
	return c.Remotes, nil
}

// LoadWebhooks reads hub/webhooks.json (nil, nil when absent).
func LoadWebhooks(gitDir string) ([]Webhook, error) {
	var c WebhooksConfig
	data, ok, err := config.ReadJSON(gitDir, config.WebhooksFile, &c)
	if !ok {
		return nil, err
	}
	p := filepath.Join(gitDir, config.WebhooksFile)
	seen := map[string]bool{}
	for i, h := range c.Hooks {
		if h.URL == "" {
			return nil, fmt.Errorf("%s: hook %d has no url: %w", config.At(p, data, config.ValueOffset(data, h.Name)), i, config.ErrConfig)
		}
		if err := checkWebhookURL(h.URL); err != nil {
			return nil, fmt.Errorf("%s: hook %d: %v: %w", config.At(p, data, config.ValueOffset(data, h.URL)), i, err, config.ErrConfig)
		}
		if h.Secret == "" {
			return nil, fmt.Errorf("%s: hook %s has no secret (deliveries are always signed): %w", config.At(p, data, config.ValueOffset(data, h.URL)), h.URL, config.ErrConfig)
		}
		if h.Format != "" && h.Format != FormatGitPlus && h.Format != FormatGitHub {
			return nil, fmt.Errorf("%s: hook %s: format %q is not %q or %q: %w", config.At(p, data, config.ValueOffset(data, h.Format)), h.URL, h.Format, FormatGitPlus, FormatGitHub, config.ErrConfig)
		}
		name, err := uniqueName(seen, h.Name, h.URL, "hooks", p, data)
		if err != nil {
			return nil, err
		}
		c.Hooks[i].Name = name
	}
	return c.Hooks, nil
}

// uniqueName is the name an entry of the file p (data) goes by — its name,
// else its url — once no earlier entry (seen) goes by it; what ("remotes",
// "hooks") names the entries in the error.
func uniqueName(seen map[string]bool, name, url, what, p string, data []byte) (string, error) {
	if name == "" {
		name = url
	}
	if seen[name] {
		return "", fmt.Errorf("%s: two %s are named %q: give them different names: %w", config.At(p, data, config.ValueOffset(data, name)), what, name, config.ErrConfig)
	}
	seen[name] = true
	return name, nil
}

func seconds(s float64, def time.Duration) time.Duration {
	if s <= 0 {
		return def
	}
	return time.Duration(s * float64(time.Second))
}
