package policy

// Who pushes (docs/serving.md "The hook and the pusher").
//
// The hook's I/O layer (package receive) establishes the pusher from the
// environment git runs the hook in — the SSH key git+ serve authenticated,
// the member a token belongs to, or the signer of a verified push
// certificate — and hands it over as Input.Pusher. Judging it is pure:
//
//   - The rules' top-level requireKnownPusher decides whether identity is
//     enforced. Absent, it follows Input.Served: on for a push that arrived
//     through git+ serve, off for a push straight into the directory (whoever
//     can write the directory can write the refs anyway).
//   - When enforced, every update outside refs/hub/* needs a pusher whose
//     key is a current member's: tags (refs/tags/*) need source.tag; a
//     protected branch needs source.push or hub.queue (the capabilities
//     that may record pr.merged) on top of its content rules, which still
//     apply in full; a queue candidate branch (refs/heads/queue/..., which
//     only the merge queue runner writes) needs hub.queue or source.push;
//     every other ref needs source.push.
//   - Hub refs are governed by their events' own signatures, never by who
//     carried them.
//   - The member is looked up in the trust state current at the push, so
//     removing a member or a capability refuses that member's next push.

import (
	"strings"

	"github.com/gitplus/gitplus/hubrefs"
	"github.com/gitplus/gitplus/hubrefs/queue"
	"github.com/gitplus/gitplus/hubrefs/trust"
)

// CodeUnknownPusher refuses an update the rules require a known pusher for
// when the push carries no identity.
const CodeUnknownPusher = "unknown-pusher"

// Pusher is who sent a push. A nil Key means the push carries no identity.
type Pusher struct {
	Key hubrefs.PublicKey
	// Via says how the key was established, for messages: "ssh" (the key
	// the SSH server authenticated), "token" (the member an HTTP token
	// belongs to) or "push-cert" (the signer of a push certificate).
	Via string
}

// HowToIdentify is the advice a refusal for want of identity carries.
const HowToIdentify = "identify yourself in one of three ways: push over SSH with a member's key (git+ serve --ssh), " +
	"push over HTTP with a member token as the password (git+ member token issue NAME), " +
	"or sign the push (git push --signed, with gpg.format=ssh and user.signingkey a member's key)"

// requireKnownPusher reports whether the rules in force require a known
// pusher for this push.
func (j *judge) requireKnownPusher() bool {
	if v := j.rules.RequireKnownPusher; v != nil {
		return *v
	}
	return j.in.Served
}

// pusher judges who pushes u (a ref outside refs/hub/*).
func (j *judge) pusher(u Update) error {
	if j.in.Offline || !j.requireKnownPusher() {
		return nil
	}
	p := j.in.Pusher
	if p.Key == nil {
		return refuse(CodeUnknownPusher, "%s: this repository requires a known pusher and the push carries no identity; %s", u.Ref, HowToIdentify)
	}
	how := p.Via
	if how == "" {
		how = "the push"
	}
	m, ok := j.trust.MemberByKey(p.Key)
	if !ok {
		return refuse(CodeNotMember, "%s: the pusher's key %s (from %s) is not a member's key in %s; ask an admin to add it (git+ member add)", u.Ref, hubrefs.Fingerprint(p.Key), how, hubrefs.TrustRef)
	}
	need := []string{trust.CapSourcePush}
	if strings.HasPrefix(u.Ref, "refs/tags/") {
		need = []string{trust.CapSourceTag}
	} else if _, protected := j.rules.For(u.Ref); protected || strings.HasPrefix(u.Ref, queue.BranchPrefix) {
		need = []string{trust.CapSourcePush, trust.CapQueue}
	}
	for _, c := range need {
		if m.Has(c) {
			return nil
		}
	}
	return refuse(CodeMissingCapability, "%s: the pusher %q (from %s) does not hold %s; ask an admin to grant it (git+ member change %s --add-cap %s)", u.Ref, m.Name, how, strings.Join(need, " or "), m.Name, need[0])
}
