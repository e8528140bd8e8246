package receive

// The server's clock for the bound on record times (docs/events.md,
// "Record times and clocks").
//
// Decisions:
//   - The pre-receive hook passes the server's clock (clock.Server, read
//     when the hook starts: PushEnv.Now) and the bound to policy
//     (policy.Input.Clock) for a push that updates a hub ref. A push
//     judged offline (git+ verify --ref) judges no times.
//   - The bound is the repository's git config gitplus.clockSkew, a Go
//     duration, default 5 minutes (clock.DefaultSkew); "off" or "0" turns
//     it off (a replica that must take records written before git+ bounded
//     times). A value that is not a duration refuses every update of the
//     push with clock-skew, naming the setting, until corrected; a push
//     that updates no hub ref does not read it.

import (
	"fmt"
	"strings"
	"time"

	"github.com/gitplus/gitplus/policy"
	"github.com/gitplus/gitplus/receive/clock"
	"github.com/gitplus/gitplus/receive/gitio"
)

// ConfigClockSkew is the git config key of the bound.
const ConfigClockSkew = "gitplus.clockskew"

// clockSkew reads the bound from c: clock.DefaultSkew when unset, 0 when
// turned off.
func clockSkew(c gitio.Config) (time.Duration, error) {
	v, ok := c.Get(ConfigClockSkew)
	v = strings.TrimSpace(v)
	if !ok || v == "" {
		return clock.DefaultSkew, nil
	}
	switch strings.ToLower(v) {
	case "off", "false", "no", "0":
		return 0, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d < 0 {
		return 0, &pushRefusal{code: policy.CodeClockSkew, reason: fmt.Sprintf("the repository's git config gitplus.clockSkew = %q is not a duration (such as 5m) or off; correct it (git config gitplus.clockSkew 5m)", v)}
	}
	return d, nil
}

// updatesHub reports whether any update is of a hub ref.
func updatesHub(updates []policy.Update) bool {
	for _, u := range updates {
		if strings.HasPrefix(u.Ref, "refs/hub/") {
			return true
		}
	}
	return false
}

// serverClock is the judgement's Input.Clock for push: nil when the push
// is judged offline, carries no clock, updates no hub ref, or the bound is
// off.
func serverClock(push PushEnv, updates []policy.Update, config func() (gitio.Config, error)) (*policy.Clock, error) {
	if push.Offline || push.Now.IsZero() || !updatesHub(updates) {
		return nil, nil
	}
	c, err := config()
	if err != nil {
		return nil, err
	}
	skew, err := clockSkew(c)
	if err != nil || skew <= 0 {
		return nil, err
	}
	return &policy.Clock{Now: push.Now.Unix(), Skew: skew}, nil
}
