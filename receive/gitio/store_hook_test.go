package gitio

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-git/go-billy/v5/osfs"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/cache"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/storer"
	"github.com/go-git/go-git/v5/storage/filesystem"

	"github.com/gitplus/gitplus/fixtures"
)

// TestHelperProcess is the pre-receive hook of TestPreReceiveHookReadsQuarantine:
// the hook script re-executes the test binary with this test selected and
// GITPLUS_STORE_HOOK set. It opens the store from the hook's environment,
// reads every pushed commit's tree recursively, and appends its findings to
// the file named by GITPLUS_STORE_HOOK.
func TestHelperProcess(t *testing.T) {
	out := os.Getenv("GITPLUS_STORE_HOOK")
	if out == "" {
		t.Skip("only run as a hook")
	}
	var report bytes.Buffer
	hookReport(&report)
	f, err := os.OpenFile(out, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		os.Exit(3)
	}
	f.Write(report.Bytes())
	f.Close()
	os.Exit(0)
}

func hookReport(w *bytes.Buffer) {
	env := QuarantineFromEnviron(os.Environ())
	gitDir, _ := os.Getwd() // hooks run with the current directory at $GIT_DIR
	packs, _ := filepath.Glob(filepath.Join(env.QuarantinePath, "pack", "*.pack"))
	fmt.Fprintf(w, "QUARANTINE %v packs=%d\n", env.InQuarantine(), len(packs))
	s, err := OpenStore(gitDir, env)
	if err != nil {
		fmt.Fprintf(w, "STORE ERR %v\n", err)
		return
	}
	defer s.Close()
	if _, err := s.WriteRaw(plumbing.BlobObject, []byte("x")); errors.Is(err, ErrQuarantineWrite) {
		fmt.Fprintln(w, "WRITE REFUSED")
	} else {
		fmt.Fprintf(w, "WRITE ALLOWED %v\n", err)
	}
	gogit := filesystem.NewStorage(osfs.New(gitDir), cache.NewObjectLRUDefault())
	sc := bufio.NewScanner(os.Stdin)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) != 3 {
			fmt.Fprintf(w, "STDIN ERR %q\n", sc.Text())
			continue
		}
		tip := plumbing.NewHash(f[1])
		if n, err := readHistory(s, tip); err != nil {
			fmt.Fprintf(w, "STORE ERR %v\n", err)
		} else {
			fmt.Fprintf(w, "STORE OK %d\n", n)
		}
		if n, err := readHistory(gogit, tip); err != nil {
			fmt.Fprintf(w, "GOGIT ERR %v\n", err)
		} else {
			fmt.Fprintf(w, "GOGIT OK %d\n", n)
		}
	}
}

// readHistory reads every commit reachable from tip and, recursively, every
// tree and blob: the number of objects read, or the first error. It walks
// by hand so that no missing object is skipped.
func readHistory(s storer.EncodedObjectStorer, tip plumbing.Hash) (int, error) {
	seen := map[plumbing.Hash]bool{}
	var readTree func(h plumbing.Hash) error
	readTree = func(h plumbing.Hash) error {
		if seen[h] {
			return nil
		}
		seen[h] = true
		tree, err := object.GetTree(s, h)
		if err != nil {
			return fmt.Errorf("tree %s: %w", h, err)
		}
		for _, e := range tree.Entries {
			if e.Mode == 0o040000 {
				if err := readTree(e.Hash); err != nil {
					return err
				}
				continue
			}
			if seen[e.Hash] {
				continue
			}
			seen[e.Hash] = true
			if _, err := s.EncodedObject(plumbing.BlobObject, e.Hash); err != nil {
				return fmt.Errorf("blob %s (%s): %w", e.Hash, e.Name, err)
			}
		}
		return nil
	}
	queue := []plumbing.Hash{tip}
	for len(queue) > 0 {
		h := queue[0]
		queue = queue[1:]
		if seen[h] {
			continue
		}
		seen[h] = true
		c, err := object.GetCommit(s, h)
		if err != nil {
			return 0, fmt.Errorf("commit %s: %w", h, err)
		}
		if err := readTree(c.TreeHash); err != nil {
			return 0, err
		}
		queue = append(queue, c.ParentHashes...)
	}
	return len(seen), nil
}

func TestPreReceiveHookReadsQuarantine(t *testing.T) {
	tmp := t.TempDir()
	bare := filepath.Join(tmp, "r.git")
	work := filepath.Join(tmp, "work")
	fixtures.GitRaw(t, tmp, nil, "init", "-q", "--bare", bare)
	fixtures.GitRaw(t, tmp, nil, "init", "-q", "-b", "main", work)
	out := filepath.Join(tmp, "hook.out")
	hook := "#!/bin/sh\nexec \"$GITPLUS_TEST_BINARY\" -test.run='^TestHelperProcess$' >>\"$GITPLUS_STORE_HOOK.log\" 2>&1\n"
	if err := os.WriteFile(filepath.Join(bare, "hooks", "pre-receive"), []byte(hook), 0o755); err != nil {
		t.Fatal(err)
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	push := func() string {
		t.Helper()
		os.Remove(out)
		cmd := exec.Command("git", "push", "-q", bare, "main")
		cmd.Dir = work
		cmd.Env = append(fixtures.GitEnv(tmp), "GITPLUS_STORE_HOOK="+out, "GITPLUS_TEST_BINARY="+self)
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("push: %v\n%s", err, b)
		}
		b, err := os.ReadFile(out)
		if err != nil {
			log, _ := os.ReadFile(out + ".log")
			t.Fatalf("hook wrote no report: %v\n%s", err, log)
		}
		t.Logf("hook report:\n%s", b)
		return string(b)
	}
	commit := func(files map[string]string, msg string) {
		for name, text := range files {
			write(t, filepath.Join(work, name), text)
		}
		fixtures.GitRaw(t, work, nil, "add", "-A")
		fixtures.GitRaw(t, work, nil, "commit", "-q", "-m", msg)
	}

	commit(map[string]string{"README": "hello\n", "src/a.go": "package a\n"}, "root")
	r := push()
	expect(t, r, "QUARANTINE true packs=0", "WRITE REFUSED", "STORE OK 5")

	// (a) a small change: a handful of loose objects in the quarantine, the
	// rest of history in the main repository.
	commit(map[string]string{"src/a.go": "package a\n\nfunc A() {}\n"}, "small")
	r = push()
	expect(t, r, "QUARANTINE true packs=0", "WRITE REFUSED", "STORE OK 9")

	// (b) 160 new files: receive-pack keeps the pushed pack in the quarantine.
	files := map[string]string{}
	for i := 0; i < 160; i++ {
		files[fmt.Sprintf("gen/d%d/f%03d.txt", i%8, i)] = fmt.Sprintf("file %d\n", i)
	}
	commit(files, "big")
	r = push()
	expect(t, r, "QUARANTINE true packs=1", "WRITE REFUSED", fmt.Sprintf("STORE OK %d", 9+1+1+1+8+160))
	// go-git's own storage does not see a quarantined pack: the blind spot
	// this store exists for (docs/objects.md).
	if !strings.Contains(r, "GOGIT ERR") || !strings.Contains(r, "object not found") {
		t.Fatalf("go-git's filesystem storage unexpectedly read a quarantined pack:\n%s", r)
	}

	// After the hooks accepted, every object is in the main repository.
	s, err := OpenStore(bare, QuarantineEnv{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	tip := plumbing.NewHash(fixtures.Git(t, bare, "rev-parse", "main"))
	if n, err := readHistory(s, tip); err != nil || n != 180 {
		t.Fatalf("after push: %d objects, %v", n, err)
	}
}

func expect(t *testing.T, report string, lines ...string) {
	t.Helper()
	for _, l := range lines {
		if !strings.Contains(report, l+"\n") {
			t.Fatalf("hook report lacks %q:\n%s", l, report)
		}
	}
}
