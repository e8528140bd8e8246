package repo_test

import (
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/gitplus/gitplus/hubrefs"
	"github.com/gitplus/gitplus/hubrefs/queue"
	"github.com/gitplus/gitplus/policy"
	"github.com/gitplus/gitplus/receive"
	"github.com/gitplus/gitplus/receive/repo"
)

// coldQueue folds the queue at tip from its log without the fold cache.
func coldQueue(r *repo.Repo, tip plumbing.Hash) (*queue.State, error) {
	ts, err := r.Trust()
	if err != nil {
		return nil, err
	}
	rd := &policy.Reader{Objects: r.Objects(), Ceilings: repo.EventCeilings(ts)}
	return rd.Queue(ts.Tip, ts, tip)
}

// TestQueueStateCacheProcesses: queue reads through the fold cache's queue
// states agree with folding the whole log while other processes read the
// queue (writing and dropping states) and one damages, truncates and
// removes cache files at random, as the queue grows by queue enter and
// leave (each judged on a clone of the state read). A state file damaged
// on disk is not believed.
func TestQueueStateCacheProcesses(t *testing.T) {
	if dir := os.Getenv("GITPLUS_QSTATE_CHILD"); dir != "" {
		queueStateChild(t, dir, os.Getenv("GITPLUS_QSTATE_ROLE"))
		return
	}
	dir := t.TempDir()
	alice := newKey(dir, "alice")
	in, r := initRepo(t, dir, alice)
	work := filepath.Join(dir, "work")
	git(dir, "clone", "-q", in.GitDir, work)
	commit(work, "a", "a\n")
	git(work, "push", "-q", "origin", "HEAD:refs/heads/main")
	admin := signing(t, r, alice)
	var prs []string
	for i := 0; i < 4; i++ {
		git(work, "switch", "-q", "-c", fmt.Sprint("f", i), "main")
		commit(work, "f", fmt.Sprint(i))
		git(work, "push", "-q", "origin", fmt.Sprint("f", i))
		p, _, _, err := admin.OpenPR(repo.OpenPR{Base: "main", Head: fmt.Sprint("f", i), Title: "t"})
		if err != nil {
			t.Fatal(err)
		}
		prs = append(prs, p.ID)
	}
	qid, _, err := admin.OpenQueue("main")
	if err != nil {
		t.Fatal(err)
	}
	qref := hubrefs.QueueRefPrefix + qid
	agree := func(what string) *queue.State {
		t.Helper()
		ts, err := r.Trust()
		if err != nil {
			t.Fatal(err)
		}
		tip, err := r.Ref(qref)
		if err != nil {
			t.Fatal(err)
		}
		q, err := r.QueueLog(qid, ts)
		if err != nil {
			t.Fatal(err)
		}
		want, err := coldQueue(r, tip)
		if err != nil {
			t.Fatal(err)
		}
		if q.State.Tip != tip || !q.State.Equal(want) {
			t.Fatalf("%s: the queue read through the cache differs from the whole fold", what)
		}
		return q.State
	}
	for _, p := range prs[:3] {
		if _, err := admin.EnterQueue(p, qid, ""); err != nil {
			t.Fatal(err)
		}
	}
	agree("warm")
	// Damage the state file of the tip on disk: not believed.
	cache := receive.NewDirCache(in.GitDir)
	files, _ := filepath.Glob(filepath.Join(cache.Dir(), "*"))
	damaged := 0
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err == nil && strings.Contains(string(b), "gpqv") {
			i := strings.Index(string(b), "gpqv")
			b[i+len(b[i:])/2] ^= 0x20 // a byte in the state, not its header
			if err := os.WriteFile(f, b, 0o600); err != nil {
				t.Fatal(err)
			}
			damaged++
		}
	}
	if damaged == 0 {
		t.Fatal("no queue state file in the cache after a read")
	}
	agree("damaged")

	// Readers and a vandal in other processes while the queue grows.
	stop := filepath.Join(dir, "stop")
	var kids []*exec.Cmd
	var outs []*strings.Builder
	for _, role := range []string{"reader", "reader", "vandal"} {
		cmd := exec.Command(os.Args[0], "-test.run=^TestQueueStateCacheProcesses$", "-test.count=1", "-test.v")
		cmd.Env = append(os.Environ(), "GITPLUS_QSTATE_CHILD="+in.GitDir, "GITPLUS_QSTATE_ROLE="+role+":"+qid+":"+stop)
		out := &strings.Builder{}
		cmd.Stdout, cmd.Stderr = out, out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		kids, outs = append(kids, cmd), append(outs, out)
	}
	rng := rand.New(rand.NewSource(1))
	for i := 0; i < 8; i++ {
		st := agree(fmt.Sprint("write ", i))
		p := prs[rng.Intn(len(prs))]
		admin = signing(t, r, alice)
		if _, queued := st.Active(p); queued {
			_, _, err = admin.LeaveQueue(p, qid)
		} else {
			_, err = admin.EnterQueue(p, qid, []string{"", "high"}[rng.Intn(2)])
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	agree("last")
	if err := os.WriteFile(stop, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for i, cmd := range kids {
		if err := cmd.Wait(); err != nil {
			t.Fatalf("process %d: %v\n%s", i, err, outs[i])
		}
		if !strings.Contains(outs[i].String(), "PASS") {
			t.Fatalf("process %d did not run the test:\n%s", i, outs[i])
		}
	}
}

// queueStateChild is one process of TestQueueStateCacheProcesses: a reader
// compares cached and whole reads until told to stop; a vandal damages,
// truncates and removes cache files.
func queueStateChild(t *testing.T, gitDir, role string) {
	parts := strings.SplitN(role, ":", 3)
	if len(parts) != 3 {
		t.Fatalf("role %q", role)
	}
	role, qid, stop := parts[0], parts[1], parts[2]
	stopped := func() bool { _, err := os.Stat(stop); return err == nil }
	rng := rand.New(rand.NewSource(int64(os.Getpid())))
	if role == "vandal" {
		dir := receive.NewDirCache(gitDir).Dir()
		for n := 0; !stopped() && n < 100000; n++ {
			files, _ := filepath.Glob(filepath.Join(dir, "*"))
			if len(files) == 0 {
				continue
			}
			f := files[rng.Intn(len(files))]
			switch rng.Intn(3) {
			case 0:
				_ = os.Remove(f)
			case 1:
				if b, err := os.ReadFile(f); err == nil && len(b) > 0 {
					_ = os.WriteFile(f, b[:rng.Intn(len(b))], 0o600)
				}
			default:
				if b, err := os.ReadFile(f); err == nil && len(b) > 40 {
					b[32+rng.Intn(len(b)-32)] ^= 1
					_ = os.WriteFile(f, b, 0o600)
				}
			}
		}
		return
	}
	reads := 0
	for !stopped() || reads == 0 {
		r, err := repo.Open(gitDir, "")
		if err != nil {
			t.Fatal(err)
		}
		ts, err := r.Trust()
		if err != nil {
			t.Fatal(err)
		}
		tip, err := r.Ref(hubrefs.QueueRefPrefix + qid)
		if err != nil {
			t.Fatal(err)
		}
		got, err := r.Reader(repo.EventCeilings(ts)).Queue(ts.Tip, ts, tip)
		if err != nil {
			t.Fatal(err)
		}
		want, err := coldQueue(r, tip)
		if err != nil {
			t.Fatal(err)
		}
		if !got.Equal(want) {
			t.Fatalf("read %d at %s: the cached state differs from the whole fold", reads, tip)
		}
		r.Close()
		reads++
	}
}
