package policy

import (
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/gitplus/gitplus/fixtures"
	"github.com/gitplus/gitplus/hubrefs"
	"github.com/gitplus/gitplus/hubrefs/queue"
	"github.com/gitplus/gitplus/hubrefs/sshsign"
)

// TestPusher: who may push what when the rules (or the transport) require
// a known pusher, and that protected branches keep their content rules.
func TestPusher(t *testing.T) {
	const (
		rulesOn  = `{"requireKnownPusher":true}`
		rulesOff = `{"requireKnownPusher":false}`
		ffOn     = `{"requireKnownPusher":true,"protected":{"refs/heads/main":{"requirePullRequest":false}}}`
		prOn     = `{"requireKnownPusher":true,"protected":{"refs/heads/main":{}}}`
	)
	type tc struct {
		name   string
		rules  string
		served bool
		who    string // key of the pusher; "" none
		update func(w *world) Update
		want   string // refusal code; "" accepted
	}
	feature := func(w *world) Update {
		return Update{Ref: "refs/heads/feature", New: w.commit(w.c0, "f", "feature\n")}
	}
	deleteFeature := func(w *world) Update {
		c := w.commit(w.c0, "f", "feature\n")
		w.refs["refs/heads/feature"] = c
		return Update{Ref: "refs/heads/feature", Old: c}
	}
	tag := func(w *world) Update { return Update{Ref: "refs/tags/v1", New: w.c0} }
	ffMain := func(w *world) Update { return Update{Ref: main, Old: w.c0, New: w.commit(w.c0, "m", "main\n")} }
	candidate := func(w *world) Update {
		return Update{Ref: queue.BranchPrefix + "main/0190f000-0000-7000-8000-000000000000", New: w.commit(w.c0, "q", "candidate\n")}
	}
	hubEvent := func(w *world) Update {
		old := w.refs[hubrefs.TrustRef]
		id := w.eventOn([]plumbing.Hash{old}, "admin", w.memberAdded("mallory", "hub.pr"))
		return Update{Ref: hubrefs.TrustRef, Old: old, New: id}
	}
	for _, c := range []tc{
		{"unset, local: anyone", "", false, "", feature, ""},
		{"unset, served: nobody identified", "", true, "", feature, CodeUnknownPusher},
		{"unset, served: member with source.push", "", true, "alice", feature, ""},
		{"explicit false beats served", rulesOff, true, "", feature, ""},
		{"explicit true beats local", rulesOn, false, "", feature, CodeUnknownPusher},
		{"non-member", rulesOn, false, "mallory", feature, CodeNotMember},
		{"member without source.push", rulesOn, false, "bob", feature, CodeMissingCapability},
		{"admin implies source.push", rulesOn, false, "admin", feature, ""},
		{"delete without source.push", rulesOn, false, "bob", deleteFeature, CodeMissingCapability},
		{"delete with source.push", rulesOn, false, "alice", deleteFeature, ""},
		{"delete anonymous", rulesOn, false, "", deleteFeature, CodeUnknownPusher},
		{"tag needs source.tag, not source.push", rulesOn, false, "alice", tag, CodeMissingCapability},
		{"tag with source.tag", rulesOn, false, "tagger", tag, ""},
		{"tagger may not push branches", rulesOn, false, "tagger", feature, CodeMissingCapability},
		{"protected fast-forward by source.push", ffOn, false, "alice", ffMain, ""},
		{"protected fast-forward by hub.queue", ffOn, false, "queuer", ffMain, ""},
		{"protected fast-forward by a reviewer", ffOn, false, "bob", ffMain, CodeMissingCapability},
		{"protected fast-forward anonymous", ffOn, false, "", ffMain, CodeUnknownPusher},
		{"queue candidate branch by hub.queue", rulesOn, false, "queuer", candidate, ""},
		{"queue candidate branch by source.push", rulesOn, false, "alice", candidate, ""},
		{"queue candidate branch by a reviewer", rulesOn, false, "bob", candidate, CodeMissingCapability},
		{"queue candidate branch anonymous", rulesOn, false, "", candidate, CodeUnknownPusher},
		{"hub.queue may not push other branches", rulesOn, false, "queuer", feature, CodeMissingCapability},
		{"identity never replaces content rules", prOn, false, "admin", ffMain, CodeNotAPRHead},
		{"hub refs need no pusher", rulesOn, true, "", hubEvent, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			w := newWorld(t, c.rules)
			w.keys["tagger"] = sshsign.NewSigner(fixtures.NewKey(t, t.TempDir(), "tagger").Signer)
			w.event(hubrefs.TrustRef, "admin", w.memberAdded("tagger", "source.tag"))
			u := c.update(w)
			var p Pusher
			if c.who != "" {
				p = Pusher{Key: w.keys[c.who].PublicKey(), Via: "ssh"}
			}
			v := Judge(Input{Objects: GoGitObjects(w.store), Refs: w.refs, Updates: []Update{u}, Pusher: p, Served: c.served})
			if v[0].Code != c.want {
				t.Fatalf("verdict [%s] %s, want [%s]", v[0].Code, v[0].Reason, c.want)
			}
		})
	}
}

// TestPusherRevocation: removing a member, or its capability, refuses its
// next push (the trust at the push is what counts).
func TestPusherRevocation(t *testing.T) {
	w := newWorld(t, `{"requireKnownPusher":true}`)
	u := Update{Ref: "refs/heads/feature", New: w.commit(w.c0, "f", "x\n")}
	judge := func() string {
		return Judge(Input{Objects: GoGitObjects(w.store), Refs: w.refs, Updates: []Update{u}, Pusher: Pusher{Key: w.keys["alice"].PublicKey(), Via: "token"}})[0].Code
	}
	if got := judge(); got != "" {
		t.Fatalf("alice with source.push: [%s]", got)
	}
	w.event(hubrefs.TrustRef, "admin", hubrefs.MemberAdded{Base: w.base(hubrefs.TypeMemberChanged), Name: "alice",
		Key: hubrefs.AuthorizedKey(w.keys["alice"].PublicKey()), Caps: []string{"hub.pr"}})
	if got := judge(); got != CodeMissingCapability {
		t.Fatalf("alice without source.push: [%s], want %s", got, CodeMissingCapability)
	}
	w.event(hubrefs.TrustRef, "admin", hubrefs.MemberRemoved{Base: w.base(hubrefs.TypeMemberRemoved), Name: "alice"})
	if got := judge(); got != CodeNotMember {
		t.Fatalf("alice removed: [%s], want %s", got, CodeNotMember)
	}
}

// TestHostPusher: an identity another host established (docs/serving.md
// "Identity from the host") maps to a member by name or by key, an
// unmapped one is unknown-pusher naming the host user and the member add
// line, naming a source turns requireKnownPusher on by default, and the
// advice fits the transport.
func TestHostPusher(t *testing.T) {
	type tc struct {
		name       string
		rules      string
		host       *HostPusher
		configured bool
		served     bool
		want       string
		says       []string
	}
	for _, c := range []tc{
		{name: "name of a member with source.push", host: &HostPusher{Source: "env:GL_USER", User: "alice", Member: "alice"}, configured: true},
		{name: "mapped name", host: &HostPusher{Source: "env:REMOTE_USER", User: "alice@example.com", Member: "alice"}, configured: true},
		{name: "unknown host user", host: &HostPusher{Source: "env:GL_USER", User: "dave", Member: "dave"}, configured: true,
			want: CodeUnknownPusher, says: []string{`host user "dave" (env:GL_USER)`, "git+ member add dave"}},
		{name: "member without source.push", host: &HostPusher{Source: "env:GL_USER", User: "bob", Member: "bob"}, configured: true,
			want: CodeMissingCapability, says: []string{"--add-cap source.push"}},
		{name: "ssh-auth-info key of a member", host: &HostPusher{Source: "ssh-auth-info"}, configured: true},
		{name: "no host identity, source named: required by default", configured: true, want: CodeUnknownPusher, says: []string{"gitplus.pusher", "git push --signed"}},
		{name: "no source named, not served: open by default", want: ""},
		{name: "explicit false beats a named source", rules: `{"requireKnownPusher":false}`, configured: true, want: ""},
		{name: "served advice names serve's three ways", served: true, want: CodeUnknownPusher, says: []string{"git+ serve --ssh", "member token issue"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			w := newWorld(t, c.rules)
			u := Update{Ref: "refs/heads/feature", New: w.commit(w.c0, "f", "feature\n")}
			p := Pusher{Host: c.host}
			if c.host != nil && c.host.Source == "ssh-auth-info" {
				// a stranger's key first: the member's counts
				c.host.Keys = []hubrefs.PublicKey{w.keys["mallory"].PublicKey(), w.keys["alice"].PublicKey()}
			}
			v := Judge(Input{Objects: GoGitObjects(w.store), Refs: w.refs, Updates: []Update{u}, Pusher: p, Served: c.served, HostIdentity: c.configured})
			if v[0].Code != c.want {
				t.Fatalf("verdict [%s] %s, want [%s]", v[0].Code, v[0].Reason, c.want)
			}
			for _, s := range c.says {
				if !strings.Contains(v[0].Reason, s) {
					t.Errorf("the reason does not say %q: %s", s, v[0].Reason)
				}
			}
		})
	}
	t.Run("unknown key names the key to add", func(t *testing.T) {
		w := newWorld(t, "")
		k := sshsign.NewSigner(fixtures.NewKey(t, t.TempDir(), "stranger").Signer).PublicKey()
		u := Update{Ref: "refs/heads/feature", New: w.commit(w.c0, "f", "feature\n")}
		v := Judge(Input{Objects: GoGitObjects(w.store), Refs: w.refs, Updates: []Update{u}, HostIdentity: true,
			Pusher: Pusher{Host: &HostPusher{Source: "ssh-auth-info", Keys: []hubrefs.PublicKey{k}}}})
		if v[0].Code != CodeUnknownPusher || !strings.Contains(v[0].Reason, hubrefs.AuthorizedKey(k)) || !strings.Contains(v[0].Reason, hubrefs.Fingerprint(k)) {
			t.Fatalf("verdict [%s] %s", v[0].Code, v[0].Reason)
		}
	})
}
