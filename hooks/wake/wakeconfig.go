package wake

// hub/wake.json's rules (docs/operating.md "Wake rules"; hooks/config reads
// the file, wake.go runs them):
//
//	hub/wake.json      {"rules":[{"name":"queue","ref":"refs/hub/pr/*","on":["check.completed"],
//	                              "run":["git+","queue","run","--target","main"],
//	                              "key":"server","env":["HTTPS_PROXY"]}]}

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"path/filepath"
	"regexp"

	"github.com/gitplus/gitplus/hooks/config"
)

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

// LoadWake reads hub/wake.json (nil, nil when absent).
func LoadWake(gitDir string) ([]WakeRule, error) {
	var c WakeConfig
	if _, ok, err := config.ReadJSON(gitDir, config.WakeFile, &c); !ok {
		return nil, err
	}
	seen := map[string]int{}
	for i, r := range c.Rules {
		if err := r.check(); err != nil {
			return nil, fmt.Errorf("%s: rule %d: %v: %w", filepath.Join(gitDir, config.WakeFile), i, err, config.ErrConfig)
		}
		if j, dup := seen[r.ID()]; dup {
			return nil, fmt.Errorf("%s: rules %d and %d have the same id %s: give them different names: %w", filepath.Join(gitDir, config.WakeFile), j, i, r.ID(), config.ErrConfig)
		}
		seen[r.ID()] = i
	}
	return c.Rules, nil
}
