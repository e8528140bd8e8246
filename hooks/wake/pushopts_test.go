package wake

import (
	"slices"
	"testing"
)

// --no-notify's options: gitplus.no-notify, and the wake tag of a verb a
// wake rule runs (git drops the configured tag once a push names options).
func TestNoNotify(t *testing.T) {
	env := map[string]string{}
	getenv := func(k string) string { return env[k] }
	if got := NoNotify(getenv); !slices.Equal(got, []string{NoNotifyOption}) {
		t.Fatalf("outside a wake rule: %q", got)
	}
	env[WakeEnv] = "ci"
	if got := NoNotify(getenv); !slices.Equal(got, []string{NoNotifyOption, WakeOptionPrefix + "ci"}) {
		t.Fatalf("in wake rule ci: %q", got)
	}
}
