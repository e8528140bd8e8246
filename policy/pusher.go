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
//   - Identity from another host (Pusher.Host, docs/serving.md "Identity
//     from the host"): the host's user name maps to the member of that
//     name (the I/O layer has applied the operator's gitplus.pusherMap),
//     and the keys sshd authenticated to the member holding one of them.
//     A host identity that maps to no member is unknown-pusher, naming the
//     host user and the `git+ member add` line. Input.HostIdentity (the
//     operator named a source) makes requireKnownPusher default to on.
//   - The advice of an unknown-pusher or missing-capability refusal names
//     the ways that exist on the push's transport: serve's three for a push
//     through git+ serve, else a signed push and the operator's
//     gitplus.pusher setting.
//   - The member is looked up in the trust state current at the push, so
//     removing a member or a capability refuses that member's next push.

import (
	"fmt"
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
	// Host is the identity another host established (Key nil): see
	// HostPusher.
	Host *HostPusher
}

// HostPusher is who a host other than git+ serve says pushes: the gitplus.pusher
// source that named it, and either the host's user name (and the member
// name it maps to) or the keys its SSH server authenticated.
type HostPusher struct {
	Source string // the gitplus.pusher value: "env:GL_USER", "ssh-auth-info", ...
	User   string // the host's user name; "" for ssh-auth-info
	Member string // the member name User maps to
	Keys   []hubrefs.PublicKey
}

// describe names the host identity for messages.
func (h *HostPusher) describe() string {
	if h.User != "" {
		if h.Member != h.User {
			return fmt.Sprintf("host user %q (%s, mapped to member %q by gitplus.pusherMap)", h.User, h.Source, h.Member)
		}
		return fmt.Sprintf("host user %q (%s)", h.User, h.Source)
	}
	fps := make([]string, len(h.Keys))
	for i, k := range h.Keys {
		fps[i] = hubrefs.Fingerprint(k)
	}
	return fmt.Sprintf("the SSH key %s (%s)", strings.Join(fps, ", "), h.Source)
}

// HowToIdentify is the advice a refusal for want of identity carries on a
// push through git+ serve.
const HowToIdentify = "identify yourself in one of three ways: push over SSH with a member's key (git+ serve --ssh), " +
	"push over HTTP with a member token as the password (git+ member token issue NAME), " +
	"or sign the push (git push --signed, with gpg.format=ssh and user.signingkey a member's key)"

// HowToIdentifyElsewhere is the advice on a push that did not come through
// git+ serve (a host such as gitolite or git http-backend, or a push by
// path).
const HowToIdentifyElsewhere = "identify yourself by signing the push (git push --signed, with gpg.format=ssh and user.signingkey a member's key); " +
	"or, where a host authenticates its users (gitolite, git http-backend, GitLab, Gitea), its operator names that identity " +
	"in the repository's git config gitplus.pusher (docs/serving.md \"Identity from the host\")"

// howToIdentify is the advice that fits the push's transport.
func (j *judge) howToIdentify() string {
	if j.in.Served {
		return HowToIdentify
	}
	return HowToIdentifyElsewhere
}

// requireKnownPusher reports whether the rules in force require a known
// pusher for this push.
func (j *judge) requireKnownPusher() bool {
	if v := j.rules.RequireKnownPusher; v != nil {
		return *v
	}
	return j.in.Served || j.in.HostIdentity
}

// pusher judges who pushes u (a ref outside refs/hub/*).
func (j *judge) pusher(u Update) error {
	if j.in.Offline || !j.requireKnownPusher() {
		return nil
	}
	p := j.in.Pusher
	if p.Key == nil && p.Host == nil {
		why := "the push carries no identity"
		if j.in.HostNote != "" {
			why += " (" + j.in.HostNote + ")"
		}
		return refuse(CodeUnknownPusher, "%s: this repository requires a known pusher and %s; %s", u.Ref, why, j.howToIdentify())
	}
	how := p.Via
	if how == "" {
		how = "the push"
	}
	var m *trust.Member
	var ok bool
	if p.Key != nil {
		m, ok = j.trust.MemberByKey(p.Key)
		if !ok {
			return refuse(CodeNotMember, "%s: the pusher's key %s (from %s) is not a member's key in %s; ask an admin to add it (git+ member add)", u.Ref, hubrefs.Fingerprint(p.Key), how, hubrefs.TrustRef)
		}
	} else {
		h := p.Host
		how = h.describe()
		m, ok = j.hostMember(h)
		if !ok {
			name, keyArg := h.Member, "KEY.pub"
			if name == "" {
				name = "NAME"
			}
			if len(h.Keys) > 0 {
				keyArg = "'" + hubrefs.AuthorizedKey(h.Keys[0]) + "'"
			}
			return refuse(CodeUnknownPusher, "%s: the host says %s pushes, who is no member of this repository; ask an admin to add them: git+ member add %s --key %s --cap source.push", u.Ref, how, name, keyArg)
		}
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

// hostMember is the member a host identity names: by name, or the member
// holding the first of the authenticated keys that is a member's.
func (j *judge) hostMember(h *HostPusher) (*trust.Member, bool) {
	if j.trust == nil {
		return nil, false
	}
	if h.User != "" {
		m, ok := j.trust.Members[h.Member]
		return m, ok && m != nil
	}
	for _, k := range h.Keys {
		if m, ok := j.trust.MemberByKey(k); ok {
			return m, true
		}
	}
	return nil, false
}
