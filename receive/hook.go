package receive

// Running the boundary inside pre-receive (docs/boundary.md).
//
// Decisions:
//   - Every "<old> <new> <ref>" line of standard input is read; blank lines
//     are skipped; any other malformed line fails the whole hook (fail
//     closed), naming the line.
//   - Refs are read from the main git directory (the quarantine holds objects
//     only); objects from the layered store the hook's environment describes.
//     Only the refs a judgement reads are read: refs/hub/trust and the refs
//     being updated, then each pull request ref when policy asks for it
//     (policy.Input.PRRefs), so the hook's cost grows neither with the
//     number of branches and tags nor with the pull requests ever opened.
//   - policy.Judge runs once for all updates. Any internal error (unreadable
//     refs, an object store that cannot be opened, a panic inside the
//     judgement) refuses every update with code "internal-error" and the
//     cause: the boundary fails closed.
//   - The fold cache lives under the git directory (see cache.go).

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/gitplus/gitplus/hubrefs"
	"github.com/gitplus/gitplus/mergetree"
	"github.com/gitplus/gitplus/policy"
	"github.com/gitplus/gitplus/receive/clock"
	"github.com/gitplus/gitplus/receive/gitio"
	"github.com/gitplus/gitplus/receive/termtext"
)

// CodeInternal is the refusal code of a push the hook could not judge (an
// I/O error, a bug): every update of that push is refused.
const CodeInternal = "internal-error"

// ErrHookInput reports a pre-receive or post-receive input line that is not
// "<old> <new> <ref>".
var ErrHookInput = errors.New("malformed hook input")

// maxHookLine bounds one input line (two ids and a ref name).
const maxHookLine = 64 << 10

// ParseHookInput reads every "<old> <new> <ref>" line git feeds a
// pre-receive or post-receive hook.
func ParseHookInput(r io.Reader) ([]policy.Update, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 4096), maxHookLine)
	var ups []policy.Update
	n := 0
	for sc.Scan() {
		n++
		line := strings.TrimRight(sc.Text(), "\r")
		if strings.TrimSpace(line) == "" {
			continue
		}
		f := strings.Split(line, " ")
		if len(f) != 3 || !isHex40(f[0]) || !isHex40(f[1]) || f[2] == "" {
			return nil, fmt.Errorf("hook input line %d %q: want \"<old> <new> <ref>\": %w", n, line, ErrHookInput)
		}
		ups = append(ups, policy.Update{Ref: f[2], Old: plumbing.NewHash(f[0]), New: plumbing.NewHash(f[1])})
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("reading hook input (line %d): %w: %w", n+1, ErrHookInput, err)
	}
	return ups, nil
}

func isHex40(s string) bool {
	if len(s) != 40 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

// Objects adapts a Store to policy.Objects: ReadObject is ReadRaw with a
// missing object reported as mergetree.ErrMissingObject.
type Objects struct {
	*Store
}

var _ policy.Objects = Objects{}

// ReadObject implements mergetree.Store.
func (o Objects) ReadObject(h plumbing.Hash) (plumbing.ObjectType, []byte, error) {
	t, data, err := o.ReadRaw(h)
	if err != nil {
		if errors.Is(err, plumbing.ErrObjectNotFound) {
			return plumbing.InvalidObject, nil, fmt.Errorf("%w: %s: %w", mergetree.ErrMissingObject, h, err)
		}
		return plumbing.InvalidObject, nil, err
	}
	return t, data, nil
}

// WriteObject implements mergetree.ObjectWriter: a loose object in the main
// object directory (refused inside the receive quarantine).
func (o Objects) WriteObject(t plumbing.ObjectType, content []byte) (plumbing.Hash, error) {
	return o.WriteRaw(t, content)
}

// JudgePush judges updates pushed into the repository at gitDir, with the
// object store seen through env (the hook's quarantine). It returns one
// verdict per update, in order. An error means the push could not be judged
// at all; RefuseAll turns it into verdicts. There is no push, so who
// pushes is not judged (requireKnownPusher applies to real pushes only).
func JudgePush(gitDir string, env QuarantineEnv, updates []policy.Update) (verdicts []policy.Verdict, err error) {
	return judgePush(gitDir, env, PushEnv{Offline: true}, updates, true)
}

// judgePush is JudgePush; closeStore false leaves the object store's packs
// mapped, for a process that exits right after (RunPreReceive): unmapping
// them costs a TLB shoot-down on every CPU the process ran on, and exit
// unmaps everything anyway.
func judgePush(gitDir string, env QuarantineEnv, push PushEnv, updates []policy.Update, closeStore bool) (verdicts []policy.Verdict, err error) {
	abs, err := filepath.Abs(gitDir)
	if err != nil {
		return nil, fmt.Errorf("git directory %s: %w", gitDir, err)
	}
	judged, err := resolveUpdates(abs, updates)
	if err != nil {
		return nil, err
	}
	names := make([]string, 0, len(updates)+1)
	names = append(names, hubrefs.TrustRef)
	for _, u := range judged {
		names = append(names, u.Ref)
	}
	refSrc, err := gitio.OpenRefs(abs)
	if err != nil {
		return nil, err
	}
	if closeStore {
		defer refSrc.Close()
	}
	refs, err := refSrc.Read(nil, names)
	if err != nil {
		return nil, fmt.Errorf("reading the refs of %s: %w", abs, err)
	}
	// The repository's config file, read at most once and only when needed
	// (hostident.go): for a repository without a trust log, and for a push
	// that carries no identity of git+ serve's.
	var cfg gitio.Config
	cfgRead := false
	config := func() (gitio.Config, error) {
		if !cfgRead {
			if cfg, err = gitio.ReadConfig(filepath.Join(abs, "config")); err != nil {
				return nil, fmt.Errorf("the repository's config: %w", err)
			}
			cfgRead = true
		}
		return cfg, nil
	}
	if tip := refs[hubrefs.TrustRef]; tip.IsZero() && !push.Offline {
		// A host-wide hook meets repositories git+ never initialised:
		// those pass untouched; one git+ initialised fails closed without
		// its trust log (policy: no-trust).
		c, err := config()
		if err != nil {
			return nil, err
		}
		if !c.Bool(ConfigInitialized) {
			verdicts = make([]policy.Verdict, len(updates))
			for i, u := range updates {
				verdicts[i] = policy.Verdict{Update: u}
			}
			return verdicts, nil
		}
	}
	var host hostIdentity
	if !push.Offline && !push.Served && push.SSHKey == "" && push.TokenKey == "" {
		c, err := config()
		if err == nil {
			host, err = readHostIdentity(c, push.Host)
		}
		if r := (*pushRefusal)(nil); errors.As(err, &r) {
			return refuseEvery(updates, r), nil
		} else if err != nil {
			return nil, err
		}
	}
	store, err := OpenStore(abs, env)
	if err != nil {
		return nil, fmt.Errorf("opening the object store of %s: %w", abs, err)
	}
	if closeStore {
		defer store.Close()
	}
	defer func() {
		if r := recover(); r != nil {
			verdicts, err = nil, fmt.Errorf("the judgement failed: %v", r)
			if push.Cert != "" {
				push.forgetCert(abs, Objects{store})
			}
		}
	}()
	cache := NewDirCache(abs)
	pusher, err := push.pusher(abs, Objects{store}, updates, memberIn(store, refs[hubrefs.TrustRef], cache))
	if r := (*pushRefusal)(nil); errors.As(err, &r) {
		return refuseEvery(updates, r), nil
	} else if err != nil {
		return nil, err
	}
	if pusher.Key == nil {
		pusher.Host = host.pusher
	}
	clk, err := serverClock(push, judged, config)
	if r := (*pushRefusal)(nil); errors.As(err, &r) {
		return refuseEvery(updates, r), nil
	} else if err != nil {
		return nil, err
	}
	verdicts = policy.Judge(policy.Input{
		Clock:        clk,
		Pusher:       pusher,
		Served:       push.Served,
		HostIdentity: host.configured,
		HostNote:     host.note,
		Offline:      push.Offline,
		Objects:      Objects{store},
		Refs:         refs,
		Updates:      judged,
		Cache:        cache,
		PRRefs:       refSrc,
	})
	if len(verdicts) != len(updates) {
		return nil, fmt.Errorf("the judgement returned %d verdicts for %d updates", len(verdicts), len(updates))
	}
	if push.Cert != "" && slices.ContainsFunc(verdicts, func(v policy.Verdict) bool { return v.Code != "" }) {
		// Refused: nothing of the push takes effect, so its certificate
		// was not used (certrecord.go).
		push.forgetCert(abs, Objects{store})
	}
	for i, u := range updates {
		if judged[i].Ref != u.Ref && verdicts[i].Code != "" {
			verdicts[i].Reason = fmt.Sprintf("%s is a symbolic ref to %s, judged as that ref: %s", u.Ref, judged[i].Ref, verdicts[i].Reason)
		}
		verdicts[i].Update = u
	}
	return verdicts, nil
}

// memberIn says whether a key is a member's in the trust at trustTip, read
// through the fold cache (policy.Judge then finds the state there): only a
// member's push certificate is recorded as used (certrecord.go). A trust
// that cannot be read has no members; the judgement refuses the push then.
func memberIn(store *Store, trustTip plumbing.Hash, cache policy.Cache) func(hubrefs.PublicKey) bool {
	return func(key hubrefs.PublicKey) bool {
		if trustTip.IsZero() {
			return false
		}
		st, err := (&policy.Reader{Objects: store, Cache: cache}).Trust(trustTip)
		if err != nil {
			return false
		}
		_, ok := st.MemberByKey(key)
		return ok
	}
}

// refuseEvery refuses every update for the push's identity.
func refuseEvery(updates []policy.Update, r *pushRefusal) []policy.Verdict {
	verdicts := make([]policy.Verdict, len(updates))
	for i, u := range updates {
		verdicts[i] = policy.Verdict{Update: u, Code: r.code, Reason: r.reason}
	}
	return verdicts
}

// resolveUpdates returns updates with every ref that is a symbolic ref in
// the repository replaced by the ref it resolves to: git writes an update
// of a symbolic ref through to its target, so the target is what moves and
// what must be judged (docs/boundary.md). A push cannot create or change a
// symbolic ref, so the repository's refs are all there is to resolve.
func resolveUpdates(gitDir string, updates []policy.Update) ([]policy.Update, error) {
	out := make([]policy.Update, len(updates))
	for i, u := range updates {
		out[i] = u
		if !strings.HasPrefix(u.Ref, "refs/") {
			continue // policy refuses it by name
		}
		target, err := SymbolicTarget(gitDir, u.Ref)
		if err != nil {
			return nil, fmt.Errorf("resolving %s: %w", u.Ref, err)
		}
		out[i].Ref = target
	}
	return out, nil
}

// RefuseAll refuses every update with CodeInternal and err as the reason.
func RefuseAll(updates []policy.Update, err error) []policy.Verdict {
	vs := make([]policy.Verdict, len(updates))
	for i, u := range updates {
		vs[i] = policy.Verdict{Update: u, Code: CodeInternal,
			Reason: fmt.Sprintf("%v; the push was not judged, so nothing is accepted: retry, and report it to the repository's administrator if it persists", err)}
	}
	return vs
}

// RefusalLine is the line the hook prints for a refused update:
// "git+: refused <ref>: [<code>] <reason>".
func RefusalLine(v policy.Verdict) string {
	reason := strings.Join(strings.Fields(v.Reason), " ") // one line
	return fmt.Sprintf("git+: refused %s: [%s] %s", v.Update.Ref, v.Code, reason)
}

// PreReceive is the whole pre-receive hook: it reads stdin, judges every
// update and writes one RefusalLine per refused update to stderr. It
// returns the number of refused updates; any non-zero count (or a failure to
// read the input, reported on stderr and counted as one) must make the hook
// exit non-zero.
// The quarantine and the pusher (pusher.go) are read from environ.
func PreReceive(gitDir string, environ []string, stdin io.Reader, stderr io.Writer) int {
	push := PushFromEnviron(environ)
	push.Now = clock.Server()
	n, _ := preReceive(gitDir, QuarantineFromEnviron(environ), push, stdin, stderr, true)
	return n
}

// preReceive is PreReceive; it also returns the code of the first refusal.
func preReceive(gitDir string, env QuarantineEnv, push PushEnv, stdin io.Reader, w io.Writer, closeStore bool) (int, string) {
	// The reasons name what pushers wrote (refs, check names, fields of
	// events); they reach a terminal through git's sideband: escaped
	// (docs/cli.md, "Text on a terminal"), once when stderr already is.
	stderr := termtext.NewWriter(w)
	defer stderr.Flush()
	updates, err := ParseHookInput(stdin)
	if err != nil {
		fmt.Fprintf(stderr, "git+: refused the whole push: [%s] %v\n", CodeInternal, err)
		return 1, CodeInternal
	}
	if len(updates) == 0 {
		return 0, ""
	}
	verdicts, err := judgePush(gitDir, env, push, updates, closeStore)
	if err != nil {
		verdicts = RefuseAll(updates, err)
	}
	refused, code := 0, ""
	for _, v := range verdicts {
		if v.Code != "" {
			if refused == 0 {
				code = v.Code
			}
			refused++
			fmt.Fprintln(stderr, RefusalLine(v))
		}
	}
	if refused == 0 {
		recordJudged(gitDir, updates) // judged.go
	}
	return refused, code
}
