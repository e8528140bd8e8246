package install

// What `git+ hook check` warns about beyond the boundary itself
// (docs/operating.md "Checking the boundary: git+ hook check"): states in
// which the boundary holds but pushes will be refused for a reason the
// operator can fix, or in which it will silently stop holding.
//
// Decisions:
//   - Pusher identity: the rules require a known pusher
//     (requireKnownPusher true) while gitplus.pusher is unset, on a
//     repository git+ serve does not serve (gitplus.served, set by serve's
//     install): every plain push will be refused [unknown-pusher]. Signed
//     pushes still pass, so it is a warning, not a problem.
//   - gitolite's declaration: when gitolite's driver reaches git+ through a
//     repo-specific hook hNN-<code>, the repository's compiled gitolite
//     configuration (its gl-conf, what gitolite's triggers read) must still
//     name <code> in option hook.pre-receive (and hook.post-receive for
//     the post-receive). A link gitolite.conf no longer declares is stale:
//     it runs today, and the next run of gitolite's repo-specific-hooks
//     trigger that touches the repository's hooks deletes it. When the
//     repository has no gl-conf, nothing is said.
//   - Wake rules' keys: each rule whose command runs a git+ verb that
//     appends signed records needs its key (--key in the rule, else
//     gitplus.serverKey) to be a member's holding the capability:
//     `check run --name N` and `check worker --name N` need hub.check:N,
//     `queue run` hub.queue, `pr merge` hub.queue or source.push. The key
//     is read from KEY.pub, else from the public half of an OpenSSH private
//     key file (no secret is decoded). A rule without a key says so.

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/gitplus/gitplus/hooks/wake"
	"github.com/gitplus/gitplus/hubrefs"
	"github.com/gitplus/gitplus/hubrefs/trust"
	"github.com/gitplus/gitplus/receive"
	"github.com/gitplus/gitplus/receive/gitio"
)

// ServedKey is the git config key git+ serve sets in the repositories it
// serves: it identifies every pusher itself, so hook check does not ask
// for gitplus.pusher there.
const ServedKey = "gitplus.served"

// operatorWarnings adds the warnings above to c.
func (c *CheckReport) operatorWarnings() {
	cfg, _ := gitio.ReadConfig(filepath.Join(c.GitDir, "config"))
	st, err := receive.ReadTrust(c.GitDir)
	if err != nil {
		c.Warnings = append(c.Warnings, fmt.Sprintf("the trust log cannot be read, so the rules and wake rules were not checked: %v", err))
	}
	if st != nil && c.Pusher == "none" && cfg != nil && !cfg.Bool(ServedKey) {
		if v := st.Rules.RequireKnownPusher; v != nil && *v {
			host := "this host"
			set := "git config gitplus.pusher ssh-auth-info (sshd's key, with ExposeAuthInfo yes), or env:VAR naming the variable the host sets (env:GL_USER, env:REMOTE_USER)"
			if c.Gitolite {
				host = "gitolite"
				set = "git -C " + c.GitDir + " config gitplus.pusher ssh-auth-info (or env:GL_USER)"
			}
			c.Warnings = append(c.Warnings, fmt.Sprintf("the rules require a known pusher (requireKnownPusher) and gitplus.pusher is unset: every plain push through %s will be refused [unknown-pusher] (signed pushes still pass): set %s (docs/serving.md \"Identity from the host\")", host, set))
		}
	}
	if c.Gitolite {
		for _, r := range []Reach{c.PreReceive, c.PostReceive} {
			if w := gitoliteDeclared(c.GitDir, r); w != "" {
				c.Warnings = append(c.Warnings, w)
			}
		}
	}
	if st != nil {
		c.Warnings = append(c.Warnings, wakeKeyWarnings(c.GitDir, st)...)
	}
}

// gitoliteHook matches a companion gitolite's driver runs: hook.hNN-code.
var gitoliteHook = regexp.MustCompile(`^(pre-receive|post-receive)\.h[0-9]+-(.+)$`)

// gitoliteDeclared says, for a hook that reaches git+ through gitolite's
// driver, whether the repository's compiled configuration still declares
// the companion; "" when it does (or nothing can be told).
func gitoliteDeclared(gitDir string, r Reach) string {
	if r.Via != ViaGitolite {
		return ""
	}
	m := gitoliteHook.FindStringSubmatch(filepath.Base(r.Runs))
	if m == nil {
		return ""
	}
	hook, code := m[1], m[2]
	name, codes, ok := gitoliteOptions(gitDir, hook)
	if !ok {
		return ""
	}
	for _, c := range codes {
		if strings.ReplaceAll(c, "/", "_") == code {
			return ""
		}
	}
	what := "pushes will no longer be judged"
	if hook == "post-receive" {
		what = "mirrors, webhooks, wake rules and the unjudged-update alarm will stop"
	}
	now := "declares none"
	if len(codes) > 0 {
		now = "declares " + strings.Join(codes, " ")
	}
	return fmt.Sprintf("gitolite's configuration no longer names %s in option hook.%s for repo %s (it %s): %s is a stale link, which gitolite's next repo-specific-hooks run for this repository deletes, and then %s: put `option hook.%s = %s` back for repo %s in conf/gitolite.conf and push gitolite-admin (docs/operating.md \"Installing on gitolite\")",
		code, hook, name, now, r.Runs, what, hook, code, name)
}

var (
	glRepoName = regexp.MustCompile(`%one_repo = \(\s*'((?:[^'\\]|\\.)*)'`)
	glOption   = regexp.MustCompile(`'gitolite-options\.hook\.([a-z-]+)(?:\.[^']*)?',\s*'((?:[^'\\]|\\.)*)'`)
)

// gitoliteOptions reads the repo-specific hooks the repository's gl-conf
// (gitolite's compiled configuration for it) declares for hook: the
// repository's gitolite name and the codes, in order. ok is false when
// there is no gl-conf to read.
func gitoliteOptions(gitDir, hook string) (name string, codes []string, ok bool) {
	data, err := os.ReadFile(filepath.Join(gitDir, "gl-conf"))
	if err != nil {
		return "", nil, false
	}
	name = strings.TrimSuffix(filepath.Base(gitDir), ".git")
	if m := glRepoName.FindSubmatch(data); m != nil {
		name = unquotePerl(string(m[1]))
	}
	for _, m := range glOption.FindAllSubmatch(data, -1) {
		if string(m[1]) == hook {
			codes = append(codes, strings.Fields(unquotePerl(string(m[2])))...)
		}
	}
	return name, codes, true
}

func unquotePerl(s string) string {
	return strings.NewReplacer(`\\`, `\`, `\'`, `'`).Replace(s)
}

// wakeNeed is what one wake rule's git+ verb needs of its key.
type wakeNeed struct {
	verb string   // "check run", "queue run", ...
	any  []string // capabilities, any one of which suffices
	key  string   // --key in the rule ("" : the server key)
}

// gitPlusAt is the index of the word of a wake rule's argv that runs git+
// (named git+ or ending in /git+, after env and its assignments, say), -1
// when none does.
func gitPlusAt(argv []string) int {
	for i, a := range argv {
		if a == "git+" || filepath.Base(a) == "git+" {
			return i
		}
	}
	return -1
}

// WakeRuleKey reports whether a wake rule's command runs git+ and, if it
// does, the key file it names with --key ("" when it names none, so it
// signs only with the key the rule hands it: "key": "server").
func WakeRuleKey(argv []string) (key string, runsGitPlus bool) {
	i := gitPlusAt(argv)
	if i < 0 {
		return "", false
	}
	n, _ := wakeNeeds(argv)
	if n.key == "" { // a verb wakeNeeds does not judge may still name a key
		for j := i + 1; j < len(argv) && argv[j] != "--"; j++ {
			if v, ok := strings.CutPrefix(argv[j], "--key="); ok {
				return v, true
			}
			if argv[j] == "--key" && j+1 < len(argv) {
				return argv[j+1], true
			}
		}
	}
	return n.key, true
}

// wakeNeeds reads a wake rule's argv: the git+ verb it runs (the first
// word named git+ or ending in /git+, after env and its assignments, say)
// and what that verb needs.
func wakeNeeds(argv []string) (wakeNeed, bool) {
	i := gitPlusAt(argv)
	if i < 0 {
		return wakeNeed{}, false
	}
	var n wakeNeed
	var words []string
	var name []string
	for j := i + 1; j < len(argv); j++ {
		a := argv[j]
		if a == "--" {
			break
		}
		flag, val, hasVal := strings.Cut(a, "=")
		switch flag {
		case "--key", "--repo", "--remote", "--name", "--rev", "--pr", "--target", "--queue":
			if !hasVal && j+1 < len(argv) {
				val = argv[j+1]
				j++
			}
			switch flag {
			case "--key":
				n.key = val
			case "--name":
				name = append(name, val)
			}
			continue
		}
		if !strings.HasPrefix(a, "-") && len(words) < 2 {
			words = append(words, a)
		}
	}
	n.verb = strings.Join(words, " ")
	switch n.verb {
	case "check run", "check worker":
		if len(name) == 0 {
			return wakeNeed{}, false
		}
		for _, nm := range name {
			n.any = append(n.any, trust.CapCheckPrefix+nm)
		}
		if n.verb == "check worker" && len(name) > 1 {
			return n, true // every name is needed: checked one by one below
		}
	case "queue run":
		n.any = []string{trust.CapQueue}
	case "pr merge":
		n.any = []string{trust.CapQueue, trust.CapSourcePush}
	default:
		return wakeNeed{}, false
	}
	return n, true
}

// wakeKeyWarnings checks every wake rule's key against what its verb needs.
func wakeKeyWarnings(gitDir string, st *trust.State) []string {
	rules, err := wake.LoadWake(gitDir)
	if err != nil || len(rules) == 0 {
		return nil
	}
	server := wake.ServerKey(gitDir)
	var out []string
	for _, r := range rules {
		n, ok := wakeNeeds(r.Run)
		if !ok {
			continue
		}
		keyFile, whence := server, "gitplus.serverKey"
		if n.key != "" {
			keyFile, whence = n.key, "its --key"
			if !filepath.IsAbs(keyFile) {
				keyFile = filepath.Join(gitDir, keyFile)
			}
		}
		if keyFile == "" {
			out = append(out, fmt.Sprintf("wake rule %s runs git+ %s with no key of the server's (gitplus.serverKey is unset): it signs with whatever key the push's environment holds, usually none, and fails: set gitplus.serverKey to the key of a member holding %s (docs/serving.md \"The server's own pushes\")",
				r.ID(), n.verb, strings.Join(n.any, " or ")))
			continue
		}
		pub, err := publicKeyOf(keyFile)
		if err != nil {
			out = append(out, fmt.Sprintf("wake rule %s runs git+ %s signing with %s (%s), which cannot be read: %v", r.ID(), n.verb, keyFile, whence, err))
			continue
		}
		m, ok := st.MemberByKey(pub)
		if !ok {
			out = append(out, fmt.Sprintf("wake rule %s runs git+ %s signing with %s (%s, %s), which is no member's key: every record it appends will be refused: git+ member add NAME --key %s.pub --cap %s",
				r.ID(), n.verb, keyFile, whence, hubrefs.Fingerprint(pub), keyFile, n.any[0]))
			continue
		}
		var missing []string
		if n.verb == "check worker" && len(n.any) > 1 {
			for _, c := range n.any {
				if !m.Has(c) {
					missing = append(missing, c)
				}
			}
		} else if !hasAny(m, n.any) {
			missing = []string{strings.Join(n.any, " or ")}
		}
		if len(missing) > 0 {
			out = append(out, fmt.Sprintf("wake rule %s runs git+ %s signing as member %s (%s), who lacks %s: its records will be refused and the queue waits for them forever: git+ member change %s --add-cap %s",
				r.ID(), n.verb, m.Name, whence, strings.Join(missing, ", "), m.Name, strings.Split(missing[0], " ")[0]))
		}
	}
	return out
}

func hasAny(m *trust.Member, caps []string) bool {
	for _, c := range caps {
		if m.Has(c) {
			return true
		}
	}
	return false
}

// publicKeyOf reads the public half of the SSH key at keyFile: KEY.pub,
// else the public key an OpenSSH private key file carries in clear.
func publicKeyOf(keyFile string) (hubrefs.PublicKey, error) {
	if data, err := os.ReadFile(keyFile + ".pub"); err == nil {
		return hubrefs.ParseAuthorizedKey(strings.TrimSpace(string(data)))
	}
	data, err := os.ReadFile(keyFile)
	if err != nil {
		return nil, err
	}
	return opensshPublic(data)
}

// opensshPublic is the first public key of an "openssh-key-v1" private key
// file: magic, cipher, kdf, kdf options, key count, then the public keys,
// all before the (possibly encrypted) private part.
func opensshPublic(pem []byte) (hubrefs.PublicKey, error) {
	const begin, end = "-----BEGIN OPENSSH PRIVATE KEY-----", "-----END OPENSSH PRIVATE KEY-----"
	s := string(pem)
	i := strings.Index(s, begin)
	j := -1
	if i >= 0 {
		if k := strings.Index(s[i+len(begin):], end); k >= 0 {
			j = i + len(begin) + k
		}
	}
	if j < 0 {
		return nil, fmt.Errorf("not an OpenSSH private key file (and no .pub beside it)")
	}
	raw, err := base64.StdEncoding.DecodeString(strings.Join(strings.Fields(s[i+len(begin):j]), ""))
	if err != nil {
		return nil, fmt.Errorf("decoding the OpenSSH private key file: %w", err)
	}
	magic := []byte("openssh-key-v1\x00")
	if !bytes.HasPrefix(raw, magic) {
		return nil, fmt.Errorf("not an openssh-key-v1 private key file")
	}
	b := raw[len(magic):]
	str := func() ([]byte, bool) {
		if len(b) < 4 {
			return nil, false
		}
		n := binary.BigEndian.Uint32(b)
		if uint64(len(b)-4) < uint64(n) {
			return nil, false
		}
		v := b[4 : 4+n]
		b = b[4+n:]
		return v, true
	}
	for k := 0; k < 3; k++ { // cipher, kdf, kdf options
		if _, ok := str(); !ok {
			return nil, fmt.Errorf("truncated OpenSSH private key file")
		}
	}
	if len(b) < 4 || binary.BigEndian.Uint32(b) < 1 {
		return nil, fmt.Errorf("OpenSSH private key file without keys")
	}
	b = b[4:]
	wire, ok := str()
	if !ok {
		return nil, fmt.Errorf("truncated OpenSSH private key file")
	}
	return hubrefs.ParsePublicKey(wire)
}
