package demo

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/gitplus/gitplus/fixtures"
	"github.com/gitplus/gitplus/hubrefs/sshsign"
)

// TestMain answers as git+ does when git runs this test binary as its
// gpg.ssh.program: receive/repo's writers sign their pushes with the
// running program (repo.Key.PushSigning names os.Executable).
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == "-Y" {
		os.Exit(sshsign.Keygen(os.Args[1:], os.Getenv, os.Stderr))
	}
	os.Exit(m.Run())
}

// TestTwoDemosInOneProcess runs two demos at once in this process, whose
// environment names another identity, a signing key that does not exist
// and a global git configuration that would sign every commit with a
// program that fails. Both tell the whole story, their own commits carry
// the demo's identity (the environment was passed to git, not inherited),
// and the process's environment is the same afterwards.
func TestTwoDemosInOneProcess(t *testing.T) {
	if testing.Short() {
		t.Skip("two demos run about sixty git+ commands")
	}
	bin := fixtures.Binary(t)
	home := t.TempDir()
	if err := os.WriteFile(filepath.Join(home, ".gitconfig"), []byte("[user]\n\tname = Mallory\n[commit]\n\tgpgSign = true\n[gpg]\n\tprogram = false\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("HOME", home)
	t.Setenv("GIT_AUTHOR_NAME", "Mallory")
	t.Setenv("GIT_COMMITTER_NAME", "Mallory")
	t.Setenv("GITPLUS_KEY", "/nonexistent")
	before := os.Environ()
	dirs := []string{t.TempDir(), t.TempDir()}
	outs := make([]bytes.Buffer, len(dirs))
	errs := make([]error, len(dirs))
	var wg sync.WaitGroup
	for i, dir := range dirs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = Run(Options{Dir: dir, Binary: bin, Out: &outs[i]})
		}()
	}
	wg.Wait()
	for i, dir := range dirs {
		if errs[i] != nil {
			t.Errorf("demo %d: %v\n%s", i, errs[i], outs[i].String())
			continue
		}
		if out := outs[i].String(); !strings.Contains(out, "verified: every landing on main is justified") {
			t.Errorf("demo %d did not finish its story:\n%s", i, out)
		}
		who := fixtures.Git(t, Work(dir), "log", "-1", "--format=%an <%ae> %cn", "main")
		if who != "Alice <alice@example.invalid> Alice" {
			t.Errorf("demo %d: the seed commit is by %q, want the demo's Alice", i, who)
		}
	}
	after := os.Environ()
	var gone, came []string
	for _, kv := range before {
		if !slices.Contains(after, kv) {
			gone = append(gone, kv)
		}
	}
	for _, kv := range after {
		if !slices.Contains(before, kv) {
			came = append(came, kv)
		}
	}
	if len(gone)+len(came) != 0 || len(before) != len(after) {
		t.Errorf("Run changed the process environment: removed or changed %q, added %q", gone, came)
	}
}
