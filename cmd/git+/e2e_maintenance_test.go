package main

// git's own maintenance beside git+ (docs/operating.md, "git's maintenance
// beside git+"): `git pack-refs --all` and `git gc --auto` run in a loop on
// the served repository while writers push through the hook (branches in
// directories of their own, pull request comments: hub appends) and
// readers read it — git+ verbs as processes, listing and single-ref reads
// in-process. Every push is judged (no internal-error, no no-trust), every
// verb exits 0 and every read finds every ref that exists throughout.

import (
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/gitplus/gitplus/hubrefs"
	"github.com/gitplus/gitplus/receive/gitio"
)

func TestRefsBesideGitMaintenance(t *testing.T) {
	t.Parallel()
	w := newE2E(t, map[string][]string{"dev": {"hub.pr"}, "rev": {"hub.review"}})
	base := w.commit(nil, map[string]string{"base.txt": "base\n"}, "base")
	var prs []*localPR
	args := []string{"origin", base + ":refs/heads/main"}
	for i := 0; i < 6; i++ {
		h := w.commit([]string{base}, map[string]string{"f.txt": fmt.Sprint(i)}, fmt.Sprint("f", i))
		p := w.localPR("dev", "refs/heads/main", h)
		prs = append(prs, p)
		args = append(args, h+":refs/heads/f"+fmt.Sprint(i), p.tip+":"+p.Ref())
	}
	if out, err := w.push(args...); err != nil {
		t.Fatalf("push: %v\n%s", err, out)
	}
	// The refs every read must find, whatever git packs meanwhile.
	stable := []string{hubrefs.TrustRef, "refs/heads/main"}
	for i, p := range prs {
		stable = append(stable, p.Ref(), "refs/heads/f"+fmt.Sprint(i))
	}

	maintainBeside(t, w.origin)
	var failures atomic.Int64
	var reads atomic.Int64
	var mu sync.Mutex
	var first []string
	fail := func(format string, a ...any) {
		failures.Add(1)
		mu.Lock()
		defer mu.Unlock()
		if len(first) < 6 {
			first = append(first, fmt.Sprintf(format, a...))
		}
	}
	var done atomic.Bool
	var writers, readers sync.WaitGroup

	// Writers: pushes through the hook. Branches in directories of their
	// own (git pack-refs deletes the directories again), and comments on
	// the pull requests (hub appends the hook judges against the trust log).
	for i := 0; i < 2; i++ {
		writers.Add(1)
		go func() {
			defer writers.Done()
			for j := 0; j < 6; j++ {
				ref := fmt.Sprintf("refs/heads/w%d/d%d/b", i, j)
				if out, err := w.push("origin", base+":"+ref); err != nil {
					fail("push %s: %v\n%s", ref, err, out)
				}
			}
		}()
	}
	writers.Add(1)
	go func() {
		defer writers.Done()
		for j := 0; j < 6; j++ {
			p := prs[j%len(prs)]
			out, errs, code := w.gp("rev", w.work, "", "pr", "review", p.ID, "--comment", "--body", fmt.Sprint("c", j))
			if code != 0 {
				fail("pr review --comment %s: exit %d\n%s%s", p.ID, code, out, errs)
			}
		}
	}()

	// Readers as processes: the verbs an operator runs on the server.
	verbs := [][]string{
		{"pr", "list", "--json"},
		{"pr", "show", prs[0].ID, "--json"},
		{"member", "list"},
		{"verify", "--branch", "main"},
	}
	for _, args := range verbs {
		readers.Add(1)
		go func() {
			defer readers.Done()
			for !done.Load() {
				out, errs, code := w.gp("", w.origin, "", args...)
				reads.Add(1)
				if code != 0 {
					fail("git+ %s: exit %d\n%s%s", strings.Join(args, " "), code, out, errs)
				}
			}
		}()
	}
	// Readers in-process: every ref listed, and the stable ones one by one.
	readers.Add(1)
	go func() {
		defer readers.Done()
		for i := 0; !done.Load(); i++ {
			refs, err := gitio.ReadRefs(w.origin)
			reads.Add(1)
			if err != nil {
				fail("ReadRefs: %v", err)
				continue
			}
			for _, n := range stable {
				if refs[n].IsZero() {
					fail("ReadRefs: %s missing", n)
				}
			}
			n := stable[i%len(stable)]
			if _, err := gitio.ReadRef(w.origin, n); err != nil {
				fail("ReadRef(%s): %v", n, err)
			}
			src, err := gitio.OpenRefs(w.origin)
			if err != nil {
				fail("OpenRefs: %v", err)
				continue
			}
			got, err := src.Read([]string{hubrefs.PRRefPrefix}, []string{hubrefs.TrustRef})
			src.Close()
			if err != nil {
				fail("Refs.Read: %v", err)
				continue
			}
			for _, p := range prs {
				if got[p.Ref()].IsZero() {
					fail("Refs.Read: %s missing", p.Ref())
				}
			}
			if got[hubrefs.TrustRef].IsZero() {
				fail("Refs.Read: %s missing", hubrefs.TrustRef)
			}
		}
	}()
	writers.Wait()
	done.Store(true)
	readers.Wait()
	t.Logf("%d reads beside git's maintenance", reads.Load())
	if n := failures.Load(); n > 0 {
		t.Fatalf("%d failures beside git pack-refs / gc --auto; first:\n%s", n, strings.Join(first, "\n"))
	}
}
