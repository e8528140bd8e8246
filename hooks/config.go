package hooks

// The after-push chain's configuration (docs/operating.md). Three optional JSON
// files in the bare repository's git directory, never in pushed content:
//
//	hub/remotes.json   {"remotes":[{"name":"m1","url":"/srv/mirror.git","timeout_seconds":20}]}
//	hub/webhooks.json  {"hooks":[{"url":"https://ci.example/hook","secret":"s3cret",
//	                              "events":["*"],"timeout_seconds":5,"attempts":3}]}
//	hub/wake.json      {"rules":[{"name":"queue","ref":"refs/hub/pr/*","on":["check.completed"],
//	                              "run":["git+","queue","run","--target","main"]}]}
//
// Unknown fields are refused (a misspelt "timeout_secnds" would otherwise be
// silently ignored); a file that does not parse is logged and that part of
// the chain is skipped, the rest still runs. Zero timeouts and attempts mean
// the defaults below.

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"regexp"
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
	DefaultAttempts       = 3                // delivery attempts per webhook
	ChainDeadline         = 30 * time.Second // mirrors and webhooks together
)

// ErrConfig reports a configuration file that cannot be used.
var ErrConfig = errors.New("bad after-push configuration")

// Remote is one mirror.
type Remote struct {
	Name           string  `json:"name"`
	URL            string  `json:"url"`
	TimeoutSeconds float64 `json:"timeout_seconds,omitempty"`
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
	Attempts       int      `json:"attempts,omitempty"`
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
	if len(r.Run) == 0 || r.Run[0] == "" {
		return fmt.Errorf(`rule %q without "run" (an argv such as ["git+","queue","run","--target","main"])`, r.Ref)
	}
	return nil
}

// readJSON decodes gitDir/name strictly into v. A missing file returns
// (false, nil).
func readJSON(gitDir, name string, v any) (bool, error) {
	p := filepath.Join(gitDir, name)
	data, err := os.ReadFile(p)
	if errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("reading %s: %w", p, err)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		err = LocateJSONError(data, err) // line and column of a syntax or type error
		return false, fmt.Errorf("%s: %v (fix the file; the shapes are in `go doc hooks`): %w", p, err, ErrConfig)
	}
	return true, nil
}

// LoadRemotes reads hub/remotes.json (nil, nil when absent).
func LoadRemotes(gitDir string) ([]Remote, error) {
	var c RemotesConfig
	if ok, err := readJSON(gitDir, RemotesFile, &c); !ok {
		return nil, err
	}
	for i, r := range c.Remotes {
		if r.URL == "" {
			return nil, fmt.Errorf("%s: remote %d (%q) has no url: %w", filepath.Join(gitDir, RemotesFile), i, r.Name, ErrConfig)
		}
		if r.Name == "" {
			c.Remotes[i].Name = r.URL
		}
	}
	return c.Remotes, nil
}

// LoadWebhooks reads hub/webhooks.json (nil, nil when absent).
func LoadWebhooks(gitDir string) ([]Webhook, error) {
	var c WebhooksConfig
	if ok, err := readJSON(gitDir, WebhooksFile, &c); !ok {
		return nil, err
	}
	for i, h := range c.Hooks {
		if h.URL == "" {
			return nil, fmt.Errorf("%s: hook %d has no url: %w", filepath.Join(gitDir, WebhooksFile), i, ErrConfig)
		}
		if h.Secret == "" {
			return nil, fmt.Errorf("%s: hook %s has no secret (deliveries are always signed): %w", filepath.Join(gitDir, WebhooksFile), h.URL, ErrConfig)
		}
		if h.Name == "" {
			c.Hooks[i].Name = h.URL
		}
	}
	return c.Hooks, nil
}

// LoadWake reads hub/wake.json (nil, nil when absent).
func LoadWake(gitDir string) ([]WakeRule, error) {
	var c WakeConfig
	if ok, err := readJSON(gitDir, WakeFile, &c); !ok {
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
