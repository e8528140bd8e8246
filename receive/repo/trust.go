package repo

// The writers of refs/hub/trust (members, rules) and its root (Init), and
// whoami: what a key may do here (docs/trust.md).

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/google/uuid"

	"github.com/gitplus/gitplus/hubrefs"
	"github.com/gitplus/gitplus/hubrefs/trust"
	"github.com/gitplus/gitplus/receive/clock"
	"github.com/gitplus/gitplus/receive/gitio"
)

// AppendTrust judges a trust event against the trust state (trust.Authorize,
// the boundary's rule) and appends it; nothing is written when it would be
// refused.
func (s *Signing) AppendTrust(payload any) (string, error) {
	ev, err := NewEvent(payload, s.Trust.Tip, s.Key, clock.Now())
	if err != nil {
		return "", err
	}
	if err := trust.Authorize(ev, s.Trust); err != nil {
		var ee *trust.EventError
		if errors.As(err, &ee) {
			err = ee.Err
		}
		return "", fmt.Errorf("%s refused, nothing written: %w", ev.Type, err)
	}
	id, err := s.Append(hubrefs.TrustRef, payload)
	if err != nil {
		return "", err
	}
	return id.String(), nil
}

// AddMember adds member name with a public key (an authorized_keys line,
// see ReadKeyArg) and capabilities.
func (s *Signing) AddMember(name, key string, caps []string) (string, error) {
	if _, ok := s.Trust.Members[name]; ok {
		return "", fmt.Errorf("member %q already exists in %s: use `git+ member change %s`", name, hubrefs.TrustRef, name)
	}
	return s.AppendTrust(hubrefs.MemberAdded{Base: s.base(hubrefs.TypeMemberAdded), Name: name, Key: key, Caps: caps})
}

// ChangeMember replaces member name's key ("" keeps it) and capabilities:
// edit gets those held now and returns the new set. It returns the event
// id and the capabilities before and after.
func (s *Signing) ChangeMember(name, key string, edit func(held []string) ([]string, error)) (id string, before, after []string, err error) {
	cur, ok := s.Trust.Members[name]
	if !ok {
		return "", nil, nil, fmt.Errorf("no member %q in %s (see `git+ member list`)", name, hubrefs.TrustRef)
	}
	if key == "" {
		key = cur.KeyLine
	}
	if after, err = edit(append([]string(nil), cur.Caps...)); err != nil {
		return "", nil, nil, err
	}
	id, err = s.AppendTrust(hubrefs.MemberAdded{Base: s.base(hubrefs.TypeMemberChanged), Name: name, Key: key, Caps: after})
	return id, cur.Caps, after, err
}

// RemoveMember removes member name; their approvals and checks stop
// counting.
func (s *Signing) RemoveMember(name string) (string, error) {
	if _, ok := s.Trust.Members[name]; !ok {
		return "", fmt.Errorf("no member %q in %s (see `git+ member list`)", name, hubrefs.TrustRef)
	}
	return s.AppendTrust(hubrefs.MemberRemoved{Base: s.base(hubrefs.TypeMemberRemoved), Name: name})
}

// SetRules replaces the rules with doc (compact JSON, checked with
// trust.ParseRulesStrict by the caller; src names it in messages). A
// document that does not name requireKnownPusher keeps the value in force
// (carried, docs/trust.md).
func (s *Signing) SetRules(doc []byte, src string) (id string, carried bool, err error) {
	doc, carried, err = trust.CarryRequireKnownPusher(doc, s.Trust.Rules)
	if err != nil {
		return "", false, fmt.Errorf("rules in %s: %w; nothing was written", src, err)
	}
	id, err = s.AppendTrust(hubrefs.RulesSet{Base: s.base(hubrefs.TypeRulesSet), Rules: doc})
	return id, carried, err
}

// InitialRules are the rules Init records after repo.created.
const InitialRules = `{"requireKnownPusher":true}`

// InitOptions says what Init creates.
type InitOptions struct {
	Dir   string // the repository: created bare when missing or empty
	Key   *Key   // the admin's key, which signs
	Admin string // the admin's member name ("": the key comment before any @, else admin)
	Name  string // the repository's name ("": Dir's base name without .git)
	// Open writes no requireKnownPusher rule.
	Open bool
	// InitialBranch is the branch HEAD names (default main); SetHead points
	// HEAD at it in an existing repository too.
	InitialBranch string
	SetHead       bool
}

// Initialised is what Init made.
type Initialised struct {
	RepoID, Name, Admin, GitDir string
	Event                       plumbing.Hash // repo.created
	Tip                         plumbing.Hash // refs/hub/trust
}

// Init creates the bare repository if needed and writes the root of
// refs/hub/trust (repo.created, and the initial rules unless o.Open), the
// one ref git+ writes directly (docs/architecture.md). It refuses a
// repository that already has refs/hub/trust.
func Init(o InitOptions) (*Initialised, error) {
	abs, err := filepath.Abs(o.Dir)
	if err != nil {
		return nil, fmt.Errorf("init %s: %w", o.Dir, err)
	}
	admin := o.Admin
	if admin == "" {
		admin = DefaultAdminName(o.Key.Comment)
	}
	if err := trust.ValidName(admin); err != nil {
		return nil, fmt.Errorf("admin name %q: %w (pass --admin NAME)", admin, err)
	}
	name := o.Name
	if name == "" {
		name = strings.TrimSuffix(filepath.Base(abs), ".git")
		if name == "" || name == "." || name == string(filepath.Separator) {
			name = "repo"
		}
	}
	exists, err := dirHasContent(abs)
	if err != nil {
		return nil, fmt.Errorf("init %s: %w", abs, err)
	}
	if o.InitialBranch == "" {
		o.InitialBranch = "main"
	}
	headRef, err := BranchRef(o.InitialBranch)
	if err != nil || !strings.HasPrefix(headRef, "refs/heads/") {
		return nil, usage("--initial-branch %q: name a branch (main, trunk): %v", o.InitialBranch, err)
	}
	if !exists {
		if _, err := Git("", "init", "--quiet", "--bare", "--initial-branch", strings.TrimPrefix(headRef, "refs/heads/"), abs); err != nil {
			return nil, fmt.Errorf("creating the bare repository %s: %w", abs, err)
		}
	}
	gitDir, _, err := FindGitDir(abs)
	if errors.Is(err, gitio.ErrDubiousOwnership) {
		return nil, fmt.Errorf("init %s: %w", abs, err)
	}
	if err != nil {
		return nil, fmt.Errorf("init %s: it exists and is not a git repository (choose an empty or new directory): %w", abs, err)
	}
	if exists && o.SetHead {
		if _, err := Git(gitDir, "symbolic-ref", "HEAD", headRef); err != nil {
			return nil, fmt.Errorf("pointing HEAD of %s at %s: %w", gitDir, headRef, err)
		}
	}
	r, err := OpenLocal(gitDir)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	if tip, err := r.Ref(hubrefs.TrustRef); err != nil {
		return nil, err
	} else if !tip.IsZero() {
		return nil, fmt.Errorf("%s already has %s (at %s): the repository is initialised; see `git+ whoami` and `git+ member list`", gitDir, hubrefs.TrustRef, tip)
	}
	id, err := uuid.NewV7()
	if err != nil {
		return nil, fmt.Errorf("generating a RepoID: %w", err)
	}
	payload := hubrefs.RepoCreated{
		Base:  hubrefs.Base{Type: hubrefs.TypeRepoCreated, Repo: id.String()},
		Name:  name,
		Admin: hubrefs.Admin{Name: admin, Key: hubrefs.AuthorizedKey(o.Key.Signer.PublicKey())},
	}
	evID, err := hubrefs.WriteEvent(r.store, payload, nil, admin, clock.Now(), o.Key.Signer)
	if err != nil {
		return nil, fmt.Errorf("writing repo.created into %s: %w", gitDir, err)
	}
	ev, err := hubrefs.ReadEvent(r.store, evID, hubrefs.DefaultCeilings)
	if err != nil {
		return nil, fmt.Errorf("reading back repo.created %s in %s: %w", evID, gitDir, err)
	}
	if err := trust.Authorize(ev, nil); err != nil {
		return nil, fmt.Errorf("repo.created refused: %w", err)
	}
	tip := evID
	if !o.Open {
		// A repository made by git+ requires a known pusher however it is
		// pushed to (docs/serving.md "Who must be known").
		if tip, err = r.initRules(ev, evID, admin, o.Key); err != nil {
			return nil, err
		}
	}
	// Zero old value: update-ref refuses if another init won the race.
	if err := gitio.SwapRef(context.Background(), gitDir, hubrefs.TrustRef, plumbing.ZeroHash, tip, nil); err != nil {
		return nil, fmt.Errorf("setting %s in %s: %w", hubrefs.TrustRef, gitDir, err)
	}
	// The mark a host-wide hook tells git+'s repositories by
	// (docs/operating.md "A hook for every repository").
	if _, err := Git(gitDir, "config", "gitplus.initialized", "true"); err != nil {
		return nil, fmt.Errorf("marking %s as git+'s (gitplus.initialized): %w", gitDir, err)
	}
	return &Initialised{RepoID: id.String(), Name: name, Admin: admin, GitDir: gitDir, Event: evID, Tip: tip}, nil
}

// initRules writes the initial rules.set on top of repo.created (root,
// stored as rootID) and returns its id, checked by the trust fold.
func (r *Repo) initRules(root hubrefs.Event, rootID plumbing.Hash, admin string, key *Key) (plumbing.Hash, error) {
	st, err := trust.Fold([]hubrefs.Event{root})
	if err != nil {
		return plumbing.ZeroHash, fmt.Errorf("folding repo.created %s: %w", rootID, err)
	}
	payload := hubrefs.RulesSet{Base: hubrefs.Base{Type: hubrefs.TypeRulesSet, Repo: st.RepoID}, Rules: []byte(InitialRules)}
	id, err := hubrefs.WriteEvent(r.store, payload, []plumbing.Hash{rootID}, admin, clock.Now(), key.Signer)
	if err != nil {
		return plumbing.ZeroHash, fmt.Errorf("writing the initial rules.set into %s: %w", r.GitDir, err)
	}
	ev, err := hubrefs.ReadEvent(r.store, id, hubrefs.DefaultCeilings)
	if err != nil {
		return plumbing.ZeroHash, fmt.Errorf("reading back rules.set %s in %s: %w", id, r.GitDir, err)
	}
	if err := trust.Authorize(ev, st); err != nil {
		return plumbing.ZeroHash, fmt.Errorf("the initial rules.set refused: %w", err)
	}
	return id, nil
}

// DefaultAdminName takes the key comment's part before '@' when it is a
// valid member name, else "admin".
func DefaultAdminName(comment string) string {
	n, _, _ := strings.Cut(strings.TrimSpace(comment), "@")
	if trust.ValidName(n) == nil {
		return n
	}
	return "admin"
}

// dirHasContent reports whether dir exists and is not an empty directory.
func dirHasContent(dir string) (bool, error) {
	entries, err := os.ReadDir(dir)
	if os.IsNotExist(err) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return len(entries) > 0, nil
}

// Identity is whoami: a key, the member holding it and what it may do.
type Identity struct {
	Fingerprint string       `json:"fingerprint"`
	Key         string       `json:"key"`
	Source      string       `json:"source"`
	Member      string       `json:"member,omitempty"`
	Caps        []string     `json:"caps"`
	Branch      *BranchPower `json:"branch,omitempty"`
}

// BranchPower is a branch's protection (the rules for it, docs/trust.md) and
// what a key may do there. Decisions: MayPush is source.push (a direct
// push or `git+ pr merge` of an approved head; the boundary still judges the
// landing), MayQueue is hub.queue (`git+ queue run`); on an unprotected
// branch any push is accepted by the boundary (transport authentication is
// the server's), so MayPush is true there.
type BranchPower struct {
	Ref                    string   `json:"ref"`
	Protected              bool     `json:"protected"`
	RequirePullRequest     bool     `json:"requirePullRequest"`
	RequiredApprovals      int      `json:"requiredApprovals"`
	RequiredChecks         []string `json:"requiredChecks"`
	RequireResolvedThreads bool     `json:"requireResolvedThreads"`
	RequireProvenance      bool     `json:"requireProvenance"`
	QueueCandidates        bool     `json:"queueCandidates"`
	QueueDepth             int      `json:"queueDepth"`
	MayPush                bool     `json:"mayPush"`
	MayQueue               bool     `json:"mayQueue"`
}

// Whoami says who k is in t and, with branch (a name or a ref; "" for
// none), what it may do on that branch.
func Whoami(t *trust.State, k *Key, branch string) (*Identity, error) {
	pub := k.Signer.PublicKey()
	out := &Identity{Fingerprint: Fingerprint(pub), Key: hubrefs.AuthorizedKey(pub), Source: k.Source, Caps: []string{}}
	has := func(string) bool { return false }
	if m, ok := t.MemberByKey(pub); ok {
		out.Member, has = m.Name, m.Has
		out.Caps = append(out.Caps, m.Caps...)
	}
	if branch == "" {
		return out, nil
	}
	ref, err := BranchRef(branch)
	if err != nil {
		return nil, usage("--branch: %v", err)
	}
	b, protected := t.Rules.For(ref)
	wb := &BranchPower{Ref: ref, Protected: protected, RequiredChecks: []string{}, MayPush: true}
	if protected {
		wb.RequirePullRequest, wb.RequiredApprovals = b.RequirePullRequest, b.RequiredApprovals
		wb.RequiredChecks = append(wb.RequiredChecks, b.RequiredChecks...)
		wb.RequireResolvedThreads, wb.RequireProvenance = b.RequireResolvedThreads, b.RequireProvenance
		wb.QueueCandidates, wb.QueueDepth = b.QueueCandidates, b.QueueDepth
		wb.MayPush = has(trust.CapSourcePush)
		wb.MayQueue = has(trust.CapQueue) && b.QueueCandidates && !b.RequireProvenance
	}
	out.Branch = wb
	return out, nil
}
