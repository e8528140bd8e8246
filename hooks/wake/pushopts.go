package wake

// Which push options the after-push chain honours, and from whom
// (docs/serving.md "Push options: which are honoured from whom").
//
// Decisions:
//   - git+'s own options, gitplus.no-notify and gitplus-wake=<id>, are
//     honoured only from the environment channel GITPLUS_PUSH_OPTIONS, which
//     git+ sets for its own pushes into "." (receive/gitio/pushenv.go): a
//     process on the server's machine (a wake rule's child, a queue pass or
//     a verb an operator runs there) that could write the refs directly.
//     Sent over the wire (git push -o, which hooks see as
//     GIT_PUSH_OPTION_*), they are a client's word and are ignored: `git+
//     hook install` turns receive.advertisePushOptions on, so every pusher
//     can send them.
//   - The same holds for GITPLUS_WAKE_RULE=<id> in the hook's environment:
//     the push was made, into this repository, by a process wake rule <id>
//     started (receive-pack inherits its pusher's environment), so it does
//     not wake rule <id>, whether that process pushed through git+ or with
//     a plain `git push .` (whose configured gitplus-wake tag travels on the
//     wire, where it counts for nothing).
//   - A push that came through git+ serve (GITPLUS_SERVED=1) has no
//     environment channel: serve passes neither variable to the git it
//     starts, and the chain ignores them for a served push anyway. Another
//     front end (sshd running git-receive-pack) must not let clients set
//     them either (sshd's AcceptEnv).
//   - gitplus.no-notify, even honoured, never costs an event its delivery:
//     a push that updated any refs/hub/* ref is delivered whole. It skips
//     only the webhook deliveries of pushes that moved branches or tags
//     alone (a server-side queue pass's candidate branches, say).
//   - Every option a push carried, from either channel, is still reported
//     in the delivery's "push_options" for the receiver to see.

import (
	"strings"

	"github.com/gitplus/gitplus/receive"
	"github.com/gitplus/gitplus/receive/gitio"
)

// OwnOptions are git+'s push options a push's after-push chain honours.
type OwnOptions struct {
	// NoNotify: gitplus.no-notify came through the environment channel.
	NoNotify bool
	// SkipWake: the wake rules named by gitplus-wake=<id> options that came
	// through the environment channel, and the rule of GITPLUS_WAKE_RULE.
	SkipWake map[string]bool
}

// HonouredOptions reads git+'s own push options from a hook's environment
// (before WithoutPusher strips it): only those of the environment channel of
// a push that did not come through git+ serve.
func HonouredOptions(environ []string) OwnOptions {
	env := envMap(environ)
	own := OwnOptions{SkipWake: map[string]bool{}}
	if env[receive.EnvServed] == "1" {
		return own
	}
	if v := env[gitio.EnvPushOptions]; v != "" {
		opts := strings.Split(v, "\n")
		own.SkipWake = SkippedRules(opts)
		for _, o := range opts {
			own.NoNotify = own.NoNotify || o == NoNotifyOption
		}
	}
	if id := env[WakeEnv]; id != "" {
		own.SkipWake[id] = true
	}
	return own
}

// Quietable reports whether an honoured gitplus.no-notify may skip the
// webhook deliveries of a push of ups: only when it moved no hub ref.
func Quietable(ups []RefUpdate) bool {
	for _, u := range ups {
		if strings.HasPrefix(u.Ref, "refs/hub/") {
			return false
		}
	}
	return true
}

// NoNotifyOption is the push option that skips the webhooks of a push of
// branches alone, honoured only from git+'s own pushes (pushopts.go).
const NoNotifyOption = "gitplus.no-notify"

// NoNotify is the push options of a verb's pushes that ask for no webhook
// (git+ queue run --no-notify), read through getenv (pass os.Getenv):
// NoNotifyOption and, when the verb runs for a wake rule, its WakeTag — git
// drops the configured options, the tag among them, once a push names its
// own.
func NoNotify(getenv func(string) string) []string {
	opts := []string{NoNotifyOption}
	if tag := WakeTag(getenv); tag != "" {
		opts = append(opts, tag)
	}
	return opts
}
