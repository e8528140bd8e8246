package gitobj

import (
	"bytes"
	"fmt"
	"math/rand"
	"os"
	"strings"
	"sync/atomic"
	"testing"
)

const (
	emptyTree = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"
	idA       = "1111111111111111111111111111111111111111"
	idB       = "2222222222222222222222222222222222222222"
	idC       = "3333333333333333333333333333333333333333"
)

// seedCommits are the attacks of issue #14 and the commits git writes.
func seedCommits() [][]byte {
	a := "author A U Thor <a@example.com> 1700000000 +0100\n"
	c := "committer C O Mitter <c@example.com> 1700000001 -0130\n"
	return [][]byte{
		[]byte("tree " + emptyTree + "\n" + a + c + "\nroot\n"),
		[]byte("tree " + emptyTree + "\nparent " + idA + "\nparent " + idB + "\n" + a + c + "\nmerge\n"),
		[]byte("tree " + emptyTree + "\nparent " + idA + "\n" + a + c + "gpgsig -----BEGIN SSH SIGNATURE-----\n U1NIU0lHAAAAAQ==\n -----END SSH SIGNATURE-----\n\nsigned\n"),
		[]byte("tree " + emptyTree + "\nparent " + idA + "\n" + a + c + "encoding ISO-8859-1\nmergetag object " + idC + "\n type commit\n tag v1\n\nmsg\n"),
		// attack 1: two tree lines
		[]byte("tree " + idC + "\nparent " + idA + "\nparent " + idB + "\ntree " + emptyTree + "\n" + a + c + "\nC\n"),
		// attack 2: parents after author
		[]byte("tree " + emptyTree + "\n" + a + "parent " + idA + "\nparent " + idB + "\n" + c + "\nC\n"),
		// attack 5: headers between tree and parent
		[]byte("tree " + emptyTree + "\nencoding UTF-8\nparent " + idA + "\nparent " + idB + "\n" + a + c + "\nC\n"),
		[]byte("tree " + emptyTree + "\ngpgsig x\nparent " + idA + "\n" + a + c + "\nC\n"),
		// a second tree after the committer: git ignores it
		[]byte("tree " + emptyTree + "\n" + a + c + "tree " + idC + "\n\nC\n"),
		[]byte("tree " + strings.ToUpper(idC) + "\nparent " + strings.ToUpper(idA) + "\n" + a + c + "\nupper\n"),
		[]byte("tree " + emptyTree + "\n" + a + "committer c <c>  +7 +0000\n\nodd date\n"),
		[]byte("tree " + emptyTree + "\n" + a + "committer c <c> \n\n7 +0000\n"),
		[]byte("tree " + emptyTree + "\n" + a + c),
		[]byte("tree " + emptyTree + "\n" + a + c + " cont\nx\n\n"),
	}
}

func ent(mode, name string, id byte) []byte {
	b := append([]byte(mode+" "+name), 0)
	return append(b, bytes.Repeat([]byte{id}, 20)...)
}

func cat(parts ...[]byte) []byte { return bytes.Join(parts, nil) }

// seedTrees are the faults of issue #14 attack 6 and well-formed trees.
func seedTrees() [][]byte {
	return [][]byte{
		cat(ent("100644", "a.txt", 1), ent("100755", "b", 2), ent("40000", "dir", 3), ent("120000", "link", 4), ent("160000", "sub", 5)),
		cat(ent("100644", "f", 1), ent("100644", "f.txt", 2), ent("40000", "f", 3)),
		cat(ent("100644", ".github", 1), ent("100644", ".gitignore", 2), ent("100644", ".gitmodules", 3), ent("100644", "git~2", 4)),
		ent("40000", ".git", 1),
		ent("100644", ".GIT", 1),
		ent("40000", "..", 1),
		ent("40000", ".", 1),
		cat(ent("100644", "f.txt", 1), ent("100644", "f.txt", 2)),
		cat(ent("100644", "b", 1), ent("100644", "a", 2)),
		ent("100664", "a", 1),
		ent("040000", "a", 1),
		ent("100644", "a", 0),
		ent("160000", "sub", 9),
		ent("120000", ".gitmodules", 1),
		ent("120000", ".GITMODULES. .", 1),
		ent("120000", "gitmod~1", 1),
		ent("120000", "gi7eba~9", 1),
		ent("100644", "a/b", 1),
		ent("100644", ".git/hooks/post-checkout", 1),
		ent("100644", "git~1", 1),
		ent("100644", ".git. . ", 1),
		ent("100644", ".git::$INDEX_ALLOCATION", 1),
		ent("100644", "x\\.git", 1),
		ent("100644", ".g\u200cit", 1),
		ent("100644", "\ufeff.GiT\u200f", 1),
		ent("100644", ".git\xff", 1),
		ent("100644", ".gi\xff", 1),
		cat(ent("100644", "a", 1)[:10]),
		[]byte(" a\x00" + strings.Repeat("\x01", 20)),
	}
}

// mutate returns a random variation of seed: byte edits, line
// duplications, swaps and drops, splices with another seed.
func mutate(r *rand.Rand, seed []byte, seeds [][]byte) []byte {
	b := append([]byte(nil), seed...)
	for n := 1 + r.Intn(3); n > 0; n-- {
		switch r.Intn(7) {
		case 0:
			if len(b) > 0 {
				b[r.Intn(len(b))] = " \n\x00.gG~<>+-0123456789aAfFtp/\\:"[r.Intn(30)]
			}
		case 1:
			if len(b) > 0 {
				i := r.Intn(len(b))
				b = append(b[:i], b[i+1:]...)
			}
		case 2:
			i := r.Intn(len(b) + 1)
			b = append(b[:i], append([]byte{" \n\x00.~"[r.Intn(5)]}, b[i:]...)...)
		case 3, 4, 5: // line (or tree entry) level
			sep := byte('\n')
			if r.Intn(2) == 0 {
				sep = 0
			}
			ls := bytes.SplitAfter(b, []byte{sep})
			if len(ls) < 2 {
				continue
			}
			i, j := r.Intn(len(ls)), r.Intn(len(ls))
			switch r.Intn(3) {
			case 0:
				ls[i], ls[j] = ls[j], ls[i]
			case 1:
				ls = append(ls[:i], append([][]byte{ls[j]}, ls[i:]...)...)
			case 2:
				ls = append(ls[:i], ls[i+1:]...)
			}
			b = bytes.Join(ls, nil)
		case 6:
			o := seeds[r.Intn(len(seeds))]
			i, j := r.Intn(len(b)+1), r.Intn(len(o)+1)
			b = append(b[:i:i], o[j:]...)
		}
	}
	return b
}

// TestAgainstGit is the differential test's deterministic run: the seeds
// and a fixed set of their mutations, judged by one git fsck.
func TestAgainstGit(t *testing.T) {
	o := newOracle(t)
	r := rand.New(rand.NewSource(14))
	var commits, trees [][]byte
	cs, ts := seedCommits(), seedTrees()
	commits = append(commits, cs...)
	trees = append(trees, ts...)
	for i := 0; i < 600; i++ {
		commits = append(commits, mutate(r, cs[r.Intn(len(cs))], cs))
		trees = append(trees, mutate(r, ts[r.Intn(len(ts))], ts))
	}
	cid := map[string][]byte{}
	tid := map[string][]byte{}
	var ids []string
	for _, c := range commits {
		id, _ := o.write("commit", c)
		if _, dup := cid[id]; !dup {
			cid[id] = c
			ids = append(ids, id)
		}
	}
	for _, tr := range trees {
		id, _ := o.write("tree", tr)
		if _, dup := tid[id]; !dup {
			tid[id] = tr
			ids = append(ids, id)
		}
	}
	bad := o.fsck(ids)
	var valid []string
	for id := range cid {
		if bad[id] == "" {
			valid = append(valid, id)
		}
	}
	read := o.commitsRead(valid)
	nValid, nTrees := 0, 0
	for id, raw := range cid {
		judgeCommit(t, raw, bad[id], read[id])
		if bad[id] == "" {
			nValid++
		}
	}
	for id, raw := range tid {
		judgeTree(t, o, id, raw, bad[id])
		if bad[id] == "" {
			nTrees++
		}
	}
	// Both sides of the comparison must be exercised.
	if nValid < 10 || nValid > len(cid)-10 || nTrees < 10 || nTrees > len(tid)-10 {
		t.Fatalf("unbalanced corpus: %d/%d commits and %d/%d trees valid", nValid, len(cid), nTrees, len(tid))
	}
	t.Logf("%d commits (%d valid), %d trees (%d valid)", len(cid), nValid, len(tid), nTrees)
}

// one judges a single object against git: written alone into the scratch
// repository, then removed.
func (o *oracle) one(t *testing.T, typ string, raw []byte) {
	o.t = t
	countExec()
	id, p := o.write(typ, raw)
	defer os.Remove(p)
	bad := o.fsck([]string{id})[id]
	if typ == "tree" {
		judgeTree(t, o, id, raw, bad)
		return
	}
	read := ""
	if bad == "" {
		read = o.commitsRead([]string{id})[id]
	}
	judgeCommit(t, raw, bad, read)
}

func FuzzCommitAgainstGit(f *testing.F) {
	for _, s := range seedCommits() {
		f.Add(s)
	}
	o := newOracle(f)
	f.Fuzz(func(t *testing.T, raw []byte) {
		if len(raw) > 4096 {
			return
		}
		o.one(t, "commit", raw)
	})
}

func FuzzTreeAgainstGit(f *testing.F) {
	for _, s := range seedTrees() {
		f.Add(s)
	}
	o := newOracle(f)
	f.Fuzz(func(t *testing.T, raw []byte) {
		if len(raw) > 4096 {
			return
		}
		o.one(t, "tree", raw)
	})
}

var execs atomic.Int64

// countExec appends the number of inputs judged so far to the file named
// by GITOBJ_FUZZ_COUNT (one line every 500), for reporting how many inputs
// a fuzzing run executed (go test's own count lags for slow targets).
func countExec() {
	n := execs.Add(1)
	if p := os.Getenv("GITOBJ_FUZZ_COUNT"); p != "" && n%500 == 0 {
		if f, err := os.OpenFile(p, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644); err == nil {
			fmt.Fprintf(f, "%d %d\n", os.Getpid(), n)
			f.Close()
		}
	}
}
