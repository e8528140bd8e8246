package queuerun

import (
	"context"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/json"
	"encoding/pem"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"

	"github.com/gitplus/gitplus/hubrefs/pr"
	"github.com/gitplus/gitplus/hubrefs/queue"
	"github.com/gitplus/gitplus/hubrefs/trust"
	"github.com/gitplus/gitplus/receive"
	"github.com/gitplus/gitplus/receive/repo"
)

// memoRepo is a repository with a queue on main (one approval and check
// ci required, checkTimeout 10m) holding three approved pull requests.
type memoRepo struct {
	t          *testing.T
	gitDir     string
	alice, bob *repo.Key
	r          *repo.Repo
	prs        []string
	base       time.Time
}

func newMemoRepo(t *testing.T) *memoRepo {
	for k, v := range map[string]string{"GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.DevNull,
		"GIT_AUTHOR_NAME": "A", "GIT_AUTHOR_EMAIL": "a@example.invalid",
		"GIT_COMMITTER_NAME": "A", "GIT_COMMITTER_EMAIL": "a@example.invalid"} {
		t.Setenv(k, v)
	}
	dir := t.TempDir()
	m := &memoRepo{t: t, alice: memoKeyFile(t, dir, "alice"), bob: memoKeyFile(t, dir, "bob"), base: time.Now().Truncate(time.Second)}
	in, err := repo.Init(repo.InitOptions{Dir: filepath.Join(dir, "app.git"), Key: m.alice, Open: true})
	if err != nil {
		t.Fatal(err)
	}
	m.gitDir = in.GitDir
	if m.r, err = repo.Open(in.GitDir, ""); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.r.Close() })
	admin := m.signing(m.alice)
	if _, err := admin.AddMember("bob", m.bob.Authorized(), []string{trust.CapReview}); err != nil {
		t.Fatal(err)
	}
	rules := `{"protected":{"refs/heads/main":{"requiredApprovals":1,"requiredChecks":["ci"],"queueCandidates":true,"checkTimeout":"10m"}}}`
	if _, _, err := admin.SetRules([]byte(rules), "test"); err != nil {
		t.Fatal(err)
	}
	work := filepath.Join(dir, "work")
	memoGit(t, dir, "clone", "-q", in.GitDir, work)
	memoCommit(t, work, "base.txt")
	memoGit(t, work, "push", "-q", "origin", "HEAD:refs/heads/main")
	for _, b := range []string{"b1", "b2", "b3"} {
		memoGit(t, work, "switch", "-q", "-c", b, "main")
		memoCommit(t, work, b+".txt")
		memoGit(t, work, "push", "-q", "origin", b)
	}
	admin = m.signing(m.alice)
	if _, _, err := admin.OpenQueue("main"); err != nil {
		t.Fatal(err)
	}
	for _, b := range []string{"b1", "b2", "b3"} {
		p, _, _, err := admin.OpenPR(repo.OpenPR{Base: "main", Head: b, Title: b})
		if err != nil {
			t.Fatal(err)
		}
		m.review(p.ID)
		if _, err := admin.EnterQueue(p.ID, "", ""); err != nil {
			t.Fatal(err)
		}
		m.prs = append(m.prs, p.ID)
	}
	return m
}

func (m *memoRepo) signing(k *repo.Key) *repo.Signing {
	s, err := repo.OpenSigning(m.r, k)
	if err != nil {
		m.t.Fatal(err)
	}
	return s
}

func (m *memoRepo) review(id string) {
	p, err := m.signing(m.bob).PR(id)
	if err != nil {
		m.t.Fatal(err)
	}
	if _, err := p.Review(pr.Approve, ""); err != nil {
		m.t.Fatal(err)
	}
}

// check records a check run of alice (the admin holds every capability).
func (m *memoRepo) check(id, name, rev string) {
	p, err := m.signing(m.alice).PR(id)
	if err != nil {
		m.t.Fatal(err)
	}
	if _, err := p.Check(repo.Check{Name: name, Rev: rev, Conclusion: pr.Success}); err != nil {
		m.t.Fatal(err)
	}
}

// pass runs a pass at base+at; it returns the report as JSON and whether
// the round was ended from the memo (the crash point "memo") or read
// ("read").
func (m *memoRepo) pass(at time.Duration, edit ...func(*Options)) (rep *Report, js string, memo bool) {
	m.t.Helper()
	var points []string
	o := Options{GitDir: m.gitDir, Signer: m.alice.Signer, Name: "alice", Target: "refs/heads/main",
		Now: func() time.Time { return m.base.Add(at) },
		At:  func(p string) error { points = append(points, p); return nil }}
	for _, e := range edit {
		e(&o)
	}
	rep, err := Run(context.Background(), o)
	if err != nil {
		m.t.Fatalf("pass at %v: %v", at, err)
	}
	memo = slices.Contains(points, "memo")
	if memo == slices.Contains(points, "read") {
		m.t.Fatalf("pass at %v: crash points %v: want exactly one of memo and read", at, points)
	}
	j, err := json.Marshal(rep)
	if err != nil {
		m.t.Fatal(err)
	}
	return rep, string(j), memo
}

// TestIdleMemo: an idle pass over the refs, options and build of the last
// idle pass, at a time in its clock range, ends from the memo with the
// report the pass it remembers made; a damaged or foreign entry, a moved
// pull request, a new trust tip, other options and a checkTimeout crossing
// each make the pass read and plan in full (docs/scale.md, "The idle pass
// memo").
func TestIdleMemo(t *testing.T) {
	m := newMemoRepo(t)
	if rep, _, _ := m.pass(0); len(rep.Published) != 3 || rep.Pushes != 1 {
		t.Fatalf("first pass: published %d in %d pushes, want 3 in 1", len(rep.Published), rep.Pushes)
	}
	rep, idle, memo := m.pass(time.Minute)
	if memo || rep.Pushes != 0 || len(rep.Waiting) != 3 || rep.Rounds != 1 {
		t.Fatalf("second pass: memo %v, %d pushes, %d waiting, %d rounds; want read, 0, 3, 1: %s", memo, rep.Pushes, len(rep.Waiting), rep.Rounds, idle)
	}
	hit := func(what string, at time.Duration) {
		t.Helper()
		if _, js, memo := m.pass(at); !memo || js != idle {
			t.Fatalf("%s: memo %v, report\n%s\nwant from the memo\n%s", what, memo, js, idle)
		}
	}
	miss := func(what string, at time.Duration) {
		t.Helper()
		if _, js, memo := m.pass(at); memo || js != idle {
			t.Fatalf("%s: memo %v, report\n%s\nwant read, as\n%s", what, memo, js, idle)
		}
	}
	hit("the same refs a minute later", 2*time.Minute)

	// Damaged and foreign entries are misses; the pass writes the entry
	// again.
	cache := receive.NewDirCache(m.gitDir)
	key := memoKey("refs/heads/main", "")
	entry, ok := cache.Get(key)
	if !ok {
		t.Fatal("no memo entry after an idle pass")
	}
	file := filepath.Join(m.gitDir, "gitplus", "foldcache", key.String())
	if err := os.WriteFile(file, []byte("damaged"), 0o644); err != nil {
		t.Fatal(err)
	}
	miss("a file that fails its checksum", 3*time.Minute)
	hit("after the entry was written again", 3*time.Minute)
	cache.Put(key, entry[:len(entry)-3])
	miss("a truncated entry", 3*time.Minute)
	other := sha256.Sum256([]byte("another state"))
	cache.Put(key, append(append(append([]byte(nil), memoMagic...), other[:]...), entry[len(memoMagic)+32:]...))
	miss("an entry of another digest", 3*time.Minute)
	cache.Put(key, append([]byte("gpqm\x02"), entry[len(memoMagic):]...))
	miss("an entry of another version", 3*time.Minute)
	hit("after the entry was written again", 4*time.Minute)

	// Another build is another digest; no build information, no memo.
	own := buildID
	t.Cleanup(func() { buildID = own })
	buildID = func() []byte { return []byte("another build") }
	miss("another build", 3*time.Minute)
	hit("the same other build", 3*time.Minute)
	buildID = func() []byte { return nil }
	miss("no build information", 3*time.Minute)
	miss("no build information again", 3*time.Minute)
	buildID = own
	miss("back to this build", 3*time.Minute)
	hit("this build again", 3*time.Minute)

	// Other options are another digest.
	if _, js, memo := m.pass(4*time.Minute, func(o *Options) { o.Depth = 1 }); memo || js == idle {
		t.Fatalf("--depth 1: memo %v, report %s", memo, js)
	}
	miss("back to the default depth", 4*time.Minute)

	// A pull request that cannot be read: the pass warns and is not
	// memoised (the cause may pass); once the ref is gone, the refs are
	// those of the memo again.
	bogus := "refs/hub/pr/01a23d00-0000-7000-8000-000000000000"
	memoGit(t, m.gitDir, "update-ref", bogus, "refs/heads/main")
	for i := 0; i < 2; i++ {
		if rep, js, memo := m.pass(4 * time.Minute); memo || len(rep.Warnings) == 0 {
			t.Fatalf("with an unreadable pull request, pass %d: memo %v: %s", i, memo, js)
		}
	}
	memoGit(t, m.gitDir, "update-ref", "-d", bogus)
	hit("the unreadable pull request gone", 4*time.Minute)

	// A pull request ref that moved: read again (a check nobody requires
	// changes no plan).
	m.check(m.prs[2], "lint", "")
	miss("a pull request ref moved", 5*time.Minute)
	hit("the same refs again", 5*time.Minute)

	// The timeout of the first candidate's check (10m after the first
	// pass): read, evicted.
	hit("just before the checkTimeout", 10*time.Minute-time.Second)
	rep, js, memo := m.pass(10 * time.Minute)
	if memo || len(rep.Evicted) != 1 || rep.Evicted[0].PR != m.prs[0] {
		t.Fatalf("at the checkTimeout: memo %v, evicted %+v: %s", memo, rep.Evicted, js)
	}
	rep, idle, memo = m.pass(11 * time.Minute)
	if memo || rep.Pushes != 0 {
		t.Fatalf("after the eviction: memo %v, %d pushes: %s", memo, rep.Pushes, idle)
	}
	hit("idle after the eviction", 12*time.Minute)

	// A new trust tip: bob may no longer review, so no approval counts.
	admin := m.signing(m.alice)
	if _, _, _, err := admin.ChangeMember("bob", "", func([]string) ([]string, error) { return []string{trust.CapPR}, nil }); err != nil {
		t.Fatal(err)
	}
	rep, js, memo = m.pass(12 * time.Minute)
	if memo || js == idle {
		t.Fatalf("after bob lost hub.review: memo %v, report unchanged: %s", memo, js)
	}
	for _, w := range rep.Waiting {
		if !strings.Contains(w.Reason, "approv") {
			t.Fatalf("after bob lost hub.review: %s waits for %q", w.PR, w.Reason)
		}
	}
	// Back: the planner sees the approvals again, the same candidates stand,
	// and a green check lands the first of them.
	if _, _, _, err := m.signing(m.alice).ChangeMember("bob", "", func([]string) ([]string, error) { return []string{trust.CapReview}, nil }); err != nil {
		t.Fatal(err)
	}
	rep, idle, _ = m.pass(13 * time.Minute)
	if len(rep.Chain) == 0 {
		t.Fatalf("no chain after bob got hub.review back: %s", idle)
	}
	_, idle, _ = m.pass(13 * time.Minute)
	hit("idle with the approvals back", 14*time.Minute)
	m.check(rep.Chain[0].PR, "ci", rep.Chain[0].Commit)
	if rep, js, memo := m.pass(15 * time.Minute); memo || len(rep.Landed) != 1 {
		t.Fatalf("after ci passed on the first step: memo %v, landed %+v: %s", memo, rep.Landed, js)
	}
}

// TestMemoCodec: an entry decodes to the report it was made from, for the
// digest it names only, and every truncation of it is refused.
func TestMemoCodec(t *testing.T) {
	rep := NewReport("refs/heads/main")
	rep.Queue, rep.Tip, rep.Idle, rep.TargetRed, rep.Rounds = "q", strings.Repeat("1", 40), "idle", "red", 1
	rep.Chain = []queue.Step{{PR: "a", Head: "h", Parent: "p", Commit: "c", Verdict: queue.Pending, Missing: []string{"ci"}, Failed: []string{"x", "y"}, GroupEnd: "g", GroupSize: 2}}
	rep.Waiting = []queue.Wait{{PR: "a", Head: "h", Reason: "checks pending"}, {PR: "b", Head: "i", Reason: "beyond"}}
	rep.Warnings = []string{"w"}
	d := sha256.Sum256([]byte("state"))
	b := encodeMemo(d, queue.ClockRange{From: -5, Until: 7}, rep)
	e, ok := decodeMemo(b, d, false)
	if !ok || e.from != -5 || e.until != 7 {
		t.Fatalf("decode: %v [%d, %d)", ok, e.from, e.until)
	}
	e.rep.Target, e.rep.Rounds = rep.Target, rep.Rounds
	want, _ := json.Marshal(rep)
	got, _ := json.Marshal(&e.rep)
	if string(got) != string(want) {
		t.Fatalf("decoded\n%s\nwant\n%s", got, want)
	}
	copied, _ := decodeMemo(b, d, false)
	if o, ok := decodeMemo(append([]byte(nil), b...), d, true); !ok || !reflect.DeepEqual(o, copied) {
		t.Fatalf("decoded in place: %v %+v, want %+v", ok, o, copied)
	}
	if _, ok := decodeMemo(b, sha256.Sum256([]byte("other")), false); ok {
		t.Fatal("an entry decoded for another digest")
	}
	for n := 0; n < len(b); n++ {
		if _, ok := decodeMemo(b[:n], d, false); ok {
			t.Fatalf("a truncation to %d of %d bytes decoded", n, len(b))
		}
	}
	if _, ok := decodeMemo(append(b[:len(b):len(b)], 0), d, false); ok {
		t.Fatal("an entry with a trailing byte decoded")
	}
}

func memoKeyFile(t *testing.T, dir, name string) *repo.Key {
	_, priv, err := ed25519.GenerateKey(nil)
	if err != nil {
		t.Fatal(err)
	}
	block, err := ssh.MarshalPrivateKey(priv, name)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, name+".key")
	if err := os.WriteFile(path, pem.EncodeToMemory(block), 0o600); err != nil {
		t.Fatal(err)
	}
	k, err := repo.LoadKey(path)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func memoCommit(t *testing.T, dir, file string) {
	if err := os.WriteFile(filepath.Join(dir, file), []byte(file+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	memoGit(t, dir, "add", file)
	memoGit(t, dir, "commit", "-q", "-m", "add "+file)
}

func memoGit(t *testing.T, dir string, args ...string) {
	if out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).CombinedOutput(); err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}
