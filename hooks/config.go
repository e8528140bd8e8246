package hooks

// The after-push chain's configuration (docs/operating.md). Three optional JSON
// files in the bare repository's git directory, never in pushed content:
//
//	hub/remotes.json   {"remotes":[{"name":"m1","url":"/srv/mirror.git","timeout_seconds":20,
//	                                 "backoff_seconds":1,"backoff_max_seconds":300}]}
//	hub/webhooks.json  {"hooks":[{"url":"https://ci.example/hook","secret":"s3cret",
//	                              "events":["*"],"timeout_seconds":5,"attempts":0,
//	                              "retry_window_seconds":1800,"backoff_seconds":1,
//	                              "backoff_max_seconds":60,"format":"gitplus","repo_url":""}]}
//	hub/wake.json      {"rules":[{"name":"queue","ref":"refs/hub/pr/*","on":["check.completed"],
//	                              "run":["git+","queue","run","--target","main"],
//	                              "key":"server","env":["HTTPS_PROXY"]}]}
//
// Unknown fields are refused (a misspelt "timeout_secnds" would otherwise be
// silently ignored), and so is a webhook URL that is not http(s) with a host
// or a mirror URL that git could take for an option; the error names the
// file, line and column. A file that does not parse is logged and that part
// of the chain is skipped, the rest still runs. Zero timeouts, windows and
// backoffs mean the defaults below; attempts 0 means no cap but the window
// (docs/delivery.md).

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"
	"time"
)

// Configuration files, relative to the git directory.
const (
	RemotesFile  = "hub/remotes.json"
	WebhooksFile = "hub/webhooks.json"
	WakeFile     = "hub/wake.json"
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

// ErrConfig reports a configuration file that cannot be used.
var ErrConfig = errors.New("bad after-push configuration")

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

// WakeRule runs Run when a push updates a ref matching Ref (path.Match
// syntax) with a new event whose type is in On ("*" in On: any update of a
// matching ref, events or not). Run[0] "git+" means this binary.
type WakeRule struct {
	Name string   `json:"name,omitempty"`
	Ref  string   `json:"ref"`
	On   []string `json:"on"`
	Run  []string `json:"run"`
	// Key "server" gives the command the server's signing key (wakeenv.go);
	// absent, it has none.
	Key string `json:"key,omitempty"`
	// Env names variables of the hook's environment the command also gets.
	Env []string `json:"env,omitempty"`
}

// WakeConfig is hub/wake.json.
type WakeConfig struct {
	Rules []WakeRule `json:"rules"`
}

var ruleNameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)

// ID names the rule in logs, in GITPLUS_WAKE_RULE and in the gitplus-wake
// push option: its name, else "r" and the first 12 hex digits of the SHA-256
// of its ref, on and run (stable while the rule is unchanged).
func (r WakeRule) ID() string {
	if r.Name != "" {
		return r.Name
	}
	b, _ := json.Marshal([]any{r.Ref, r.On, r.Run})
	s := sha256.Sum256(b)
	return "r" + hex.EncodeToString(s[:6])
}

func (r WakeRule) check() error {
	if r.Name != "" && !ruleNameRE.MatchString(r.Name) {
		return fmt.Errorf("rule name %q: use letters, digits, '.', '_', '-' (at most 64)", r.Name)
	}
	if r.Ref == "" {
		return errors.New(`rule without "ref" (a glob such as "refs/hub/pr/*")`)
	}
	if _, err := path.Match(r.Ref, "refs/x"); err != nil {
		return fmt.Errorf("rule ref %q is not a valid glob: %v", r.Ref, err)
	}
	if len(r.On) == 0 {
		return fmt.Errorf(`rule %q without "on" (event types, or "*")`, r.Ref)
	}
	if err := r.checkWakeEnv(); err != nil {
		return err
	}
	if len(r.Run) == 0 || r.Run[0] == "" {
		return fmt.Errorf(`rule %q without "run" (an argv such as ["git+","queue","run","--target","main"])`, r.Ref)
	}
	return nil
}

// readJSON decodes gitDir/name strictly into v and returns the file's bytes.
// A missing file returns (nil, false, nil); a file that does not decode
// returns an error naming the file, line and column.
func readJSON(gitDir, name string, v any) ([]byte, bool, error) {
	p := filepath.Join(gitDir, name)
	data, err := os.ReadFile(p)
	if errors.Is(err, os.ErrNotExist) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("reading %s: %w", p, err)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	err = dec.Decode(v)
	extraAt := int64(-1)
	if err == nil {
		var extra any
		extraAt = dec.InputOffset()
		if dec.Decode(&extra) != io.EOF {
			err = errors.New("more than one JSON value")
		}
	}
	if err != nil {
		off := dec.InputOffset()
		end, located := jsonErrorEnd(err)
		switch {
		case extraAt >= 0:
			off = extraAt + int64(len(data[extraAt:])-len(bytes.TrimLeft(data[extraAt:], " \t\r\n")))
		case located:
			off = end - 1 // the offset counts the byte at fault
			var se *json.SyntaxError
			if at, closer, ok := trailingComma(data, end); ok && errors.As(err, &se) {
				off, err = at, fmt.Errorf("a trailing comma before %q (JSON allows none; delete it): %w", closer, err)
			}
		default:
			if f, ok := strings.CutPrefix(err.Error(), "json: unknown field "); ok {
				if i := keyOffset(data, f); i >= 0 {
					off = int64(i)
				}
				err = fmt.Errorf("%w (%s)", err, fieldsHelp(v))
			}
		}
		return nil, false, fmt.Errorf("%s: %v (fix the file; the shapes are in docs/delivery.md): %w", position(p, data, off), err, ErrConfig)
	}
	return data, true, nil
}

// keyOffset is the offset of the first object key spelt quoted (a JSON
// string with its quotes) in data, or -1.
func keyOffset(data []byte, quoted string) int {
	for i := 0; ; {
		j := bytes.Index(data[i:], []byte(quoted))
		if j < 0 {
			return -1
		}
		k := i + j + len(quoted)
		rest := bytes.TrimLeft(data[k:], " \t\r\n")
		if len(rest) > 0 && rest[0] == ':' {
			return i + j
		}
		i = k
	}
}

// valueOffset is the offset of the JSON string value s in data, or 0.
func valueOffset(data []byte, s string) int64 {
	q, _ := json.Marshal(s)
	if i := bytes.Index(data, q); i >= 0 {
		return int64(i)
	}
	return 0
}

// position renders "file:line:column" for byte offset off of data (the
// offset of the first byte at fault, lines and columns from 1).
func position(p string, data []byte, off int64) string {
	line, col := lineCol(data, off)
	return fmt.Sprintf("%s:%d:%d", p, line, col)
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
	data, ok, err := readJSON(gitDir, RemotesFile, &c)
	if !ok {
		return nil, err
	}
	p := filepath.Join(gitDir, RemotesFile)
	seen := map[string]bool{}
	for i, r := range c.Remotes {
		if r.URL == "" {
			return nil, fmt.Errorf("%s: remote %d (%q) has no url: %w", position(p, data, valueOffset(data, r.Name)), i, r.Name, ErrConfig)
		}
		if err := checkMirrorURL(r.URL); err != nil {
			return nil, fmt.Errorf("%s: remote %d: %v: %w", position(p, data, valueOffset(data, r.URL)), i, err, ErrConfig)
		}
		name := r.Name
		if name == "" {
			name = r.URL
		}
		if seen[name] {
			return nil, fmt.Errorf("%s: two remotes are named %q: give them different names: %w", position(p, data, valueOffset(data, name)), name, ErrConfig)
		}
		seen[name] = true
		if r.Name == "" {
			c.Remotes[i].Name = r.URL
		}
	}
	return c.Remotes, nil
}

// LoadWebhooks reads hub/webhooks.json (nil, nil when absent).
func LoadWebhooks(gitDir string) ([]Webhook, error) {
	var c WebhooksConfig
	data, ok, err := readJSON(gitDir, WebhooksFile, &c)
	if !ok {
		return nil, err
	}
	p := filepath.Join(gitDir, WebhooksFile)
	seen := map[string]bool{}
	for i, h := range c.Hooks {
		if h.URL == "" {
			return nil, fmt.Errorf("%s: hook %d has no url: %w", position(p, data, valueOffset(data, h.Name)), i, ErrConfig)
		}
		if err := checkWebhookURL(h.URL); err != nil {
			return nil, fmt.Errorf("%s: hook %d: %v: %w", position(p, data, valueOffset(data, h.URL)), i, err, ErrConfig)
		}
		if h.Secret == "" {
			return nil, fmt.Errorf("%s: hook %s has no secret (deliveries are always signed): %w", position(p, data, valueOffset(data, h.URL)), h.URL, ErrConfig)
		}
		if h.Format != "" && h.Format != FormatGitPlus && h.Format != FormatGitHub {
			return nil, fmt.Errorf("%s: hook %s: format %q is not %q or %q: %w", position(p, data, valueOffset(data, h.Format)), h.URL, h.Format, FormatGitPlus, FormatGitHub, ErrConfig)
		}
		name := h.Name
		if name == "" {
			name = h.URL
		}
		if seen[name] {
			return nil, fmt.Errorf("%s: two hooks are named %q: give them different names: %w", position(p, data, valueOffset(data, name)), name, ErrConfig)
		}
		seen[name] = true
		if h.Name == "" {
			c.Hooks[i].Name = h.URL
		}
	}
	return c.Hooks, nil
}

// LoadWake reads hub/wake.json (nil, nil when absent).
func LoadWake(gitDir string) ([]WakeRule, error) {
	var c WakeConfig
	if _, ok, err := readJSON(gitDir, WakeFile, &c); !ok {
		return nil, err
	}
	seen := map[string]int{}
	for i, r := range c.Rules {
		if err := r.check(); err != nil {
			return nil, fmt.Errorf("%s: rule %d: %v: %w", filepath.Join(gitDir, WakeFile), i, err, ErrConfig)
		}
		if j, dup := seen[r.ID()]; dup {
			return nil, fmt.Errorf("%s: rules %d and %d have the same id %s: give them different names: %w", filepath.Join(gitDir, WakeFile), j, i, r.ID(), ErrConfig)
		}
		seen[r.ID()] = i
	}
	return c.Rules, nil
}

func seconds(s float64, def time.Duration) time.Duration {
	if s <= 0 {
		return def
	}
	return time.Duration(s * float64(time.Second))
}
