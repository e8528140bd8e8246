package receive

import (
	"errors"
	"testing"
	"time"

	"github.com/gitplus/gitplus/policy"
	"github.com/gitplus/gitplus/receive/gitio"
)

// TestClockSkewConfig: gitplus.clockSkew is a duration (default 5m), off
// turns the bound off, anything else refuses with clock-skew; the hook
// passes the server's clock only for a push to a hub ref, not offline.
func TestClockSkewConfig(t *testing.T) {
	for _, tc := range []struct {
		value string
		set   bool
		want  time.Duration
		bad   bool
	}{
		{set: false, want: 5 * time.Minute},
		{value: "", set: true, want: 5 * time.Minute},
		{value: "10m", set: true, want: 10 * time.Minute},
		{value: "off", set: true, want: 0},
		{value: "0", set: true, want: 0},
		{value: "5 minutes", set: true, bad: true},
		{value: "-1m", set: true, bad: true},
	} {
		var c gitio.Config
		if tc.set {
			c = gitio.Config{{Key: ConfigClockSkew, Value: tc.value}}
		}
		got, err := clockSkew(c)
		var r *pushRefusal
		if tc.bad != errors.As(err, &r) || (tc.bad && r.code != policy.CodeClockSkew) || got != tc.want {
			t.Errorf("gitplus.clockSkew %q (set %v): %v, %v; want %v, refused %v", tc.value, tc.set, got, err, tc.want, tc.bad)
		}
	}
	cfg := func() (gitio.Config, error) { return nil, nil }
	now := time.Unix(1_800_000_000, 0)
	hub := []policy.Update{{Ref: "refs/hub/pr/x"}}
	branch := []policy.Update{{Ref: "refs/heads/main"}}
	if c, _ := serverClock(PushEnv{Now: now}, hub, cfg); c == nil || c.Now != now.Unix() || c.Skew != 5*time.Minute {
		t.Errorf("a push to a hub ref: clock %+v", c)
	}
	for name, p := range map[string]struct {
		env PushEnv
		ups []policy.Update
	}{"offline": {PushEnv{Now: now, Offline: true}, hub}, "no clock": {PushEnv{}, hub}, "branches only": {PushEnv{Now: now}, branch}} {
		if c, _ := serverClock(p.env, p.ups, cfg); c != nil {
			t.Errorf("%s: clock %+v, want none", name, c)
		}
	}
}
