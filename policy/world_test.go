package policy

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/go-git/go-billy/v5/osfs"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/cache"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/storage/filesystem"

	"github.com/gitplus/gitplus/fixtures"
	"github.com/gitplus/gitplus/hubrefs"
	"github.com/gitplus/gitplus/hubrefs/sshsign"
)

const (
	repoID  = "01900000-0000-7000-8000-000000000001"
	otherID = "01900000-0000-7000-8000-0000000000ff"
	main    = "refs/heads/main"
)

// world is a small repository with a work tree (for git merge), a trust log
// with members, and helpers to write pull request events.
type world struct {
	t     testing.TB
	dir   string
	store *filesystem.Storage
	refs  map[string]plumbing.Hash
	keys  map[string]hubrefs.Signer
	clock int64
	c0    plumbing.Hash // main's tip
	n     int
}

var members = map[string][]string{
	"alice":  {"hub.pr", "source.push"},
	"bob":    {"hub.review"},
	"carol":  {"hub.review"},
	"ci":     {"hub.check:ci", "hub.check:lint"},
	"queuer": {"hub.queue"},
}

func newWorld(t testing.TB, rules string) *world {
	t.Helper()
	dir := t.TempDir()
	fixtures.Git(t, dir, "init", "-q", "-b", "main")
	w := &world{t: t, dir: dir, refs: map[string]plumbing.Hash{}, keys: map[string]hubrefs.Signer{}, clock: 1700000000}
	w.store = filesystem.NewStorage(osfs.New(filepath.Join(dir, ".git")), cache.NewObjectLRUDefault())
	w.c0 = w.commit(plumbing.ZeroHash, "README", "hello\n")
	w.refs[main] = w.c0
	kdir := t.TempDir()
	for _, name := range []string{"admin", "alice", "bob", "carol", "ci", "queuer", "mallory"} {
		k := fixtures.NewKey(t, kdir, name)
		w.keys[name] = sshsign.NewSigner(k.Signer)
	}
	w.event(hubrefs.TrustRef, "admin", hubrefs.RepoCreated{Base: w.base(hubrefs.TypeRepoCreated), Name: "demo",
		Admin: hubrefs.Admin{Name: "admin", Key: hubrefs.AuthorizedKey(w.keys["admin"].PublicKey())}})
	for _, name := range []string{"alice", "bob", "carol", "ci", "queuer"} {
		w.event(hubrefs.TrustRef, "admin", w.memberAdded(name, members[name]...))
	}
	if rules != "" {
		w.event(hubrefs.TrustRef, "admin", hubrefs.RulesSet{Base: w.base(hubrefs.TypeRulesSet), Rules: json.RawMessage(rules)})
	}
	return w
}

func (w *world) memberAdded(name string, caps ...string) hubrefs.MemberAdded {
	return hubrefs.MemberAdded{Base: w.base(hubrefs.TypeMemberAdded), Name: name, Key: hubrefs.AuthorizedKey(w.keys[name].PublicKey()), Caps: caps}
}

func (w *world) base(typ string) hubrefs.Base { return hubrefs.Base{Type: typ, Repo: repoID} }

func (w *world) write(name, content string) {
	w.t.Helper()
	p := filepath.Join(w.dir, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		w.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		w.t.Fatal(err)
	}
}

func (w *world) git(args ...string) string { w.t.Helper(); return fixtures.Git(w.t, w.dir, args...) }

func (w *world) head() plumbing.Hash { return plumbing.NewHash(w.git("rev-parse", "HEAD")) }

// commit makes a commit on top of from (zero: a root) setting top-level
// file name to content, written in-process (git is slow to spawn).
func (w *world) commit(from plumbing.Hash, name, content string) plumbing.Hash {
	w.t.Helper()
	var entries []object.TreeEntry
	var parents []plumbing.Hash
	if !from.IsZero() {
		c, err := object.GetCommit(w.store, from)
		if err != nil {
			w.t.Fatal(err)
		}
		tree, err := c.Tree()
		if err != nil {
			w.t.Fatal(err)
		}
		for _, e := range tree.Entries {
			if e.Name != name {
				entries = append(entries, e)
			}
		}
		parents = []plumbing.Hash{from}
	}
	blob := w.storeRaw(plumbing.BlobObject, []byte(content))
	entries = append(entries, object.TreeEntry{Name: name, Mode: filemode.Regular, Hash: blob})
	sort.Slice(entries, func(i, j int) bool { return entries[i].Name < entries[j].Name })
	tobj := w.store.NewEncodedObject()
	if err := (&object.Tree{Entries: entries}).Encode(tobj); err != nil {
		w.t.Fatal(err)
	}
	tree, err := w.store.SetEncodedObject(tobj)
	if err != nil {
		w.t.Fatal(err)
	}
	w.n++
	sig := object.Signature{Name: "Test", Email: "test@example.invalid", When: time.Unix(1700000000, 0).UTC()}
	cobj := w.store.NewEncodedObject()
	c := &object.Commit{Author: sig, Committer: sig, Message: fmt.Sprintf("change %d\n", w.n), TreeHash: tree, ParentHashes: parents}
	if err := c.Encode(cobj); err != nil {
		w.t.Fatal(err)
	}
	id, err := w.store.SetEncodedObject(cobj)
	if err != nil {
		w.t.Fatal(err)
	}
	return id
}

// merge builds a candidate with plain git: checkout onto, merge --no-ff head.
func (w *world) merge(onto plumbing.Hash, heads ...plumbing.Hash) plumbing.Hash {
	w.t.Helper()
	w.git("checkout", "-q", "--detach", onto.String())
	args := []string{"-c", "merge.conflictstyle=merge", "merge", "-q", "--no-ff", "-m", "candidate"}
	for _, h := range heads {
		args = append(args, h.String())
	}
	w.git(args...)
	return w.head()
}

// eventOn writes an event with explicit parents, without moving a ref.
func (w *world) eventOn(parents []plumbing.Hash, who string, payload any) plumbing.Hash {
	w.t.Helper()
	w.clock++
	id, err := hubrefs.WriteEvent(w.store, payload, parents, who, time.Unix(w.clock, 0), w.keys[who])
	if err != nil {
		w.t.Fatal(err)
	}
	return id
}

// event appends to ref and moves it in w.refs.
func (w *world) event(ref, who string, payload any) plumbing.Hash {
	w.t.Helper()
	var parents []plumbing.Hash
	if tip, ok := w.refs[ref]; ok {
		parents = []plumbing.Hash{tip}
	}
	id := w.eventOn(parents, who, payload)
	w.refs[ref] = id
	return id
}

// craft stores a hand-made event commit; sign=false leaves it unsigned,
// tamper changes the signed bytes after signing.
func (w *world) craft(parents []plumbing.Hash, who, msg string, sign, tamper bool) plumbing.Hash {
	w.t.Helper()
	var head bytes.Buffer
	fmt.Fprintf(&head, "tree %s\n", hubrefs.EmptyTree)
	for _, p := range parents {
		fmt.Fprintf(&head, "parent %s\n", p)
	}
	w.clock++
	fmt.Fprintf(&head, "author %s <%s@hub.invalid> %d +0000\ncommitter %s <%s@hub.invalid> %d +0000\n", who, who, w.clock, who, who, w.clock)
	body := "\n" + msg
	raw := head.String()
	if sign {
		sig, err := w.keys[who].Sign([]byte(raw + body))
		if err != nil {
			w.t.Fatal(err)
		}
		raw += "gpgsig " + strings.ReplaceAll(strings.TrimRight(string(sig), "\n"), "\n", "\n ") + "\n"
	}
	if tamper {
		body += "\n" // outside the payload, inside the signed bytes
	}
	return w.storeRaw(plumbing.CommitObject, []byte(raw+body))
}

func (w *world) storeRaw(t plumbing.ObjectType, raw []byte) plumbing.Hash {
	w.t.Helper()
	obj := w.store.NewEncodedObject()
	obj.SetType(t)
	obj.SetSize(int64(len(raw)))
	wr, _ := obj.Writer()
	wr.Write(raw)
	wr.Close()
	id, err := w.store.SetEncodedObject(obj)
	if err != nil {
		w.t.Fatal(err)
	}
	return id
}

// signCommit re-signs a source commit as git commit -S would (gpg.format=ssh).
func (w *world) signCommit(id plumbing.Hash, who string) plumbing.Hash {
	w.t.Helper()
	_, raw, err := GoGitObjects(w.store).ReadObject(id)
	if err != nil {
		w.t.Fatal(err)
	}
	i := bytes.Index(raw, []byte("\n\n"))
	head, body := string(raw[:i+1]), string(raw[i+1:])
	sig, err := w.keys[who].Sign([]byte(head + body))
	if err != nil {
		w.t.Fatal(err)
	}
	return w.storeRaw(plumbing.CommitObject, []byte(head+"gpgsig "+strings.ReplaceAll(strings.TrimRight(string(sig), "\n"), "\n", "\n ")+"\n"+body))
}

// pr is one pull request under construction.
type prq struct {
	w    *world
	id   string
	ref  string
	head plumbing.Hash
}

func (w *world) open(head plumbing.Hash) *prq {
	w.t.Helper()
	w.n++
	id := fmt.Sprintf("01900000-0000-7000-8000-%012x", w.n)
	p := &prq{w: w, id: id, ref: hubrefs.PRRefPrefix + id, head: head}
	w.event(p.ref, "alice", hubrefs.PROpened{Base: w.base(hubrefs.TypePROpened), ID: id, BaseRef: main, Head: head.String(), Title: "change " + id})
	return p
}

func (p *prq) approve(who string) *prq {
	p.w.event(p.ref, who, hubrefs.Review{Base: p.w.base(hubrefs.TypeReviewSubmit), Head: p.head.String(), BaseRef: main, Verdict: "approve"})
	return p
}

func (p *prq) check(name string, rev plumbing.Hash, conclusion string) *prq {
	return p.checkRan(name, rev, conclusion, "")
}

// checkRan records a check whose command ran as sandbox says
// ("landlock-7", "env-only", "off", "" unsaid).
func (p *prq) checkRan(name string, rev plumbing.Hash, conclusion, sandbox string) *prq {
	p.w.event(p.ref, "ci", hubrefs.Check{Base: p.w.base(hubrefs.TypeCheckCompleted), Name: name, Head: rev.String(), Conclusion: conclusion, Sandbox: sandbox})
	return p
}

func (p *prq) close() *prq {
	p.w.event(p.ref, "alice", hubrefs.Base{Type: hubrefs.TypePRClosed, Repo: repoID})
	return p
}

// ready opens an approved pull request with a green ci at its head.
func (w *world) ready(head plumbing.Hash) *prq {
	return w.open(head).approve("bob").check("ci", head, "success")
}

// judge judges us without a fold cache, and again with a cache twice (the
// first call fills it, the second reads the logs and the pull request index
// from it), and fails the test unless all three agree.
func (w *world) judge(us ...Update) []Verdict {
	w.t.Helper()
	plain := Judge(Input{Objects: GoGitObjects(w.store), Refs: w.refs, Updates: us})
	c := &mapCache{m: map[plumbing.Hash][]byte{}}
	for _, pass := range []string{"cold", "warm"} {
		got := Judge(Input{Objects: GoGitObjects(w.store), Refs: w.refs, Updates: us, Cache: c})
		if !reflect.DeepEqual(got, plain) {
			w.t.Fatalf("with a %s fold cache the verdicts differ:\n%+v\nwithout:\n%+v", pass, got, plain)
		}
	}
	// With the refs of pull requests read on demand: from the warm index
	// (only the refs it names), and with no index (every ref).
	for _, pass := range []string{"warm", "cold"} {
		if pass == "cold" {
			c = &mapCache{m: map[plumbing.Hash][]byte{}}
		}
		got := Judge(Input{Objects: GoGitObjects(w.store), Refs: w.refsWithoutPRs(us), Updates: us, Cache: c, PRRefs: &refSource{m: w.refs}})
		if !reflect.DeepEqual(got, plain) {
			w.t.Fatalf("with pull request refs read on demand and a %s fold cache the verdicts differ:\n%+v\nwithout:\n%+v", pass, got, plain)
		}
	}
	return plain
}

// refsWithoutPRs are w's refs as a caller that reads pull request refs on
// demand passes them: no pull request ref but those updated.
func (w *world) refsWithoutPRs(us []Update) map[string]plumbing.Hash {
	refs := map[string]plumbing.Hash{}
	for name, id := range w.refs {
		if !strings.HasPrefix(name, hubrefs.PRRefPrefix) {
			refs[name] = id
		}
	}
	for _, u := range us {
		if id, ok := w.refs[u.Ref]; ok {
			refs[u.Ref] = id
		}
	}
	return refs
}

// refSource is a policy.RefSource over a map, counting what it is asked.
type refSource struct {
	m          map[string]plumbing.Hash
	refs, alls int
}

func (r *refSource) Ref(name string) (plumbing.Hash, error) {
	r.refs++
	return r.m[name], nil
}

func (r *refSource) Under(prefix string) (map[string]plumbing.Hash, error) {
	r.alls++
	out := map[string]plumbing.Hash{}
	for name, id := range r.m {
		if strings.HasPrefix(name, prefix) {
			out[name] = id
		}
	}
	return out, nil
}

func (w *world) judge1(u Update) Verdict {
	w.t.Helper()
	v := w.judge(u)
	if len(v) != 1 {
		w.t.Fatalf("%d verdicts for one update", len(v))
	}
	return v[0]
}
