package gitio

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/matryer/is"

	"github.com/gitplus/gitplus/fixtures"
)

// TestHostLines: the host's "remote: " lines other than git+'s are kept,
// padding and receive-pack's own summary removed, and bounded.
func TestHostLines(t *testing.T) {
	is := is.New(t)
	stderr := "remote: FATAL: W refs/heads/main r alice DENIED by fallthru        \n" +
		"remote: (or you mis-spelled the reponame)\x1b[K\n" +
		"remote: git+: refused refs/heads/main: [x] y\n" +
		"remote: \n" +
		"remote: error: hook declined to update refs/heads/main\n" +
		"To /srv/r.git\n ! [remote rejected] main -> main (hook declined)\n"
	is.Equal(HostLines([]byte(stderr)), []string{
		"FATAL: W refs/heads/main r alice DENIED by fallthru",
		"(or you mis-spelled the reponame)",
	})
	var b strings.Builder
	for i := 0; i < maxHostLines+5; i++ {
		fmt.Fprintf(&b, "remote: line %d %s\n", i, strings.Repeat("x", maxHostLineLen))
	}
	got := HostLines([]byte(b.String()))
	is.Equal(len(got), maxHostLines+1)
	is.Equal(got[maxHostLines], "(5 more lines)")
	is.True(len(got[0]) <= maxHostLineLen+len("…"))
}

// TestPushHostRefusal: a push refused by a hook that is not git+'s carries
// the hook's own lines in its error; a push by path into a repository
// whose update hook is gitolite's, refused for want of gitolite's
// environment, says which command works.
func TestPushHostRefusal(t *testing.T) {
	dir := t.TempDir()
	repo := filepath.Join(dir, "r.git")
	fixtures.GitRaw(t, dir, nil, "init", "-q", "--bare", repo)
	raw := "tree 4b825dc642cb6eb9a060e54bf8d69288fbee4904\nauthor A <a@x> 1700000000 +0000\ncommitter A <a@x> 1700000000 +0000\n\nc\n"
	c, err := WriteLooseObject(repo, plumbing.CommitObject, []byte(raw))
	if err != nil {
		t.Fatal(err)
	}
	write := func(name, script string) {
		if err := os.WriteFile(filepath.Join(repo, "hooks", name), []byte("#!/bin/sh\n"+script), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	push := func() error {
		_, err := Push(context.Background(), PushOptions{GitDir: repo, Updates: []PushUpdate{{Ref: "refs/heads/main", New: c}}})
		return err
	}

	write("pre-receive", "cat >/dev/null\necho 'FATAL: W refs/heads/main r alice DENIED by fallthru' >&2\nexit 1\n")
	err = push()
	var refused *PushRefusedError
	if !errors.As(err, &refused) || len(refused.Lines) != 0 ||
		len(refused.Host) != 1 || refused.Host[0] != "FATAL: W refs/heads/main r alice DENIED by fallthru" ||
		!strings.Contains(err.Error(), "remote: FATAL: W refs/heads/main r alice DENIED by fallthru") {
		t.Fatalf("host refusal: %#v, %v", refused, err)
	}

	os.Remove(filepath.Join(repo, "hooks", "pre-receive"))
	// gitolite's update hook as it fails outside gitolite (no GL_LIBDIR).
	write("update", "# use Gitolite::Hooks::Update;\necho \"Can't locate Gitolite/Hooks/Update.pm in @INC\" >&2\nexit 2\n")
	err = push()
	if !errors.As(err, &refused) || !strings.Contains(err.Error(), "Can't locate Gitolite/Hooks/Update.pm") ||
		!strings.Contains(err.Error(), "is managed by gitolite") || !strings.Contains(err.Error(), "GL_BYPASS_ACCESS_CHECKS=1") {
		t.Fatalf("gitolite refusal: %v", err)
	}
}
