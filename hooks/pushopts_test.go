package hooks

import (
	"fmt"
	"strings"
	"testing"

	"github.com/gitplus/gitplus/fixtures"
	"github.com/gitplus/gitplus/hooks/config"
	"github.com/gitplus/gitplus/hooks/wake"
)

// git+'s options count only from the environment channel of a push that
// did not come through serve; gitplus.no-notify never skips a push of hub
// refs.
func TestPostReceiveHonouredOptions(t *testing.T) {
	const branch = "refs/heads/main"
	const hub = "refs/hub/trust"
	wire := func(opts ...string) []string {
		env := []string{fmt.Sprintf("GIT_PUSH_OPTION_COUNT=%d", len(opts))}
		for i, o := range opts {
			env = append(env, fmt.Sprintf("GIT_PUSH_OPTION_%d=%s", i, o))
		}
		return env
	}
	local := func(opts ...string) []string { return []string{"GITPLUS_PUSH_OPTIONS=" + strings.Join(opts, "\n")} }
	served := func(env []string) []string { return append(env, "GITPLUS_SERVED=1") }
	for _, c := range []struct {
		name      string
		env       []string
		refs      []string
		spooled   bool
		wokeRules string
	}{
		{"nothing", nil, []string{branch}, true, "[w other]"},
		{"local no-notify, branches", local(wake.NoNotifyOption), []string{branch}, false, "[w other]"},
		{"local no-notify, a hub ref too", local(wake.NoNotifyOption), []string{branch, hub}, true, "[w other]"},
		{"local wake tag", local(wake.WakeOptionPrefix + "w"), []string{branch}, true, "[other]"},
		{"wire no-notify and wake tag", wire(wake.NoNotifyOption, wake.WakeOptionPrefix+"w"), []string{branch}, true, "[w other]"},
		{"a wake child's plain git push", append(wire(wake.WakeOptionPrefix+"w"), wake.WakeEnv+"=w"), []string{branch}, true, "[other]"},
		{"served, wake rule variable", served([]string{wake.WakeEnv + "=w"}), []string{branch}, true, "[w other]"},
		{"served, environment channel", served(local(wake.NoNotifyOption, wake.WakeOptionPrefix+"w")), []string{branch}, true, "[w other]"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			fixtures.WriteFile(t, dir, config.WebhooksFile, `{"hooks":[{"name":"h","url":"http://127.0.0.1:1/","secret":"s"}]}`)
			fixtures.WriteFile(t, dir, config.WakeFile, `{"rules":[{"name":"w","ref":"refs/heads/*","on":["*"],"run":["true"]},`+
				`{"name":"other","ref":"refs/heads/*","on":["*"],"run":["true"]}]}`)
			var in strings.Builder
			for _, r := range c.refs {
				fmt.Fprintf(&in, "%s %s %s\n", strings.Repeat("0", 40), strings.Repeat("1", 40), r)
			}
			rep, err := PostReceive(Options{GitDir: dir, Stdin: strings.NewReader(in.String()), Environ: c.env, NoWorker: true})
			if err != nil {
				t.Fatal(err)
			}
			if got := len(rep.Spooled) > 0; got != c.spooled {
				t.Errorf("spooled %v, want a delivery: %v", rep.Spooled, c.spooled)
			}
			if got := fmt.Sprint(rep.Woken); got != c.wokeRules {
				t.Errorf("woke %s, want %s", got, c.wokeRules)
			}
		})
	}
}
