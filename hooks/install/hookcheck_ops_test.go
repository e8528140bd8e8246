package install

import (
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/gitplus/gitplus/hubrefs"
)

// TestWakeNeeds: the capability a wake rule's git+ verb needs, found after
// env and its assignments, flags with values skipped.
func TestWakeNeeds(t *testing.T) {
	for _, c := range []struct {
		argv []string
		verb string
		any  []string
		key  string
	}{
		{[]string{"git+", "check", "run", "--pr", "{event.pr}", "--rev", "{event.step}", "--name", "ci", "--", "make", "test"}, "check run", []string{"hub.check:ci"}, ""},
		{[]string{"env", "GL_BYPASS_ACCESS_CHECKS=1", "/usr/local/bin/git+", "--key", "/k", "check", "run", "--name=lint", "--", "x"}, "check run", []string{"hub.check:lint"}, "/k"},
		{[]string{"/opt/git+", "--repo", ".", "queue", "run", "--target", "main"}, "queue run", []string{"hub.queue"}, ""},
		{[]string{"git+", "pr", "merge", "{event.pr}"}, "pr merge", []string{"hub.queue", "source.push"}, ""},
		{[]string{"git+", "queue", "show"}, "", nil, ""},
		{[]string{"make", "check", "run", "--name", "ci"}, "", nil, ""},
		{[]string{"git+", "check", "run", "--", "--name", "x"}, "", nil, ""},
	} {
		n, ok := wakeNeeds(c.argv)
		if c.verb == "" {
			if ok {
				t.Errorf("wakeNeeds(%q) = %+v, want nothing", c.argv, n)
			}
			continue
		}
		if !ok || n.verb != c.verb || !reflect.DeepEqual(n.any, c.any) || n.key != c.key {
			t.Errorf("wakeNeeds(%q) = %+v %v, want %s %v key %q", c.argv, n, ok, c.verb, c.any, c.key)
		}
	}
}

// TestOpensshPublic: the public half of an OpenSSH private key file, read
// without its .pub, is the key ssh-keygen wrote.
func TestOpensshPublic(t *testing.T) {
	dir := t.TempDir()
	k := filepath.Join(dir, "k")
	if out, err := exec.Command("ssh-keygen", "-q", "-t", "ed25519", "-N", "secret", "-f", k).CombinedOutput(); err != nil {
		t.Skipf("ssh-keygen: %v\n%s", err, out)
	}
	want, _ := os.ReadFile(k + ".pub")
	os.Remove(k + ".pub")
	pub, err := publicKeyOf(k)
	if err != nil {
		t.Fatal(err)
	}
	if got := hubrefs.AuthorizedKey(pub); !strings.HasPrefix(string(want), got) {
		t.Fatalf("the key read from the private file (passphrase-protected) is %q, ssh-keygen wrote %q", got, want)
	}
}

func FuzzOpensshPublic(f *testing.F) {
	f.Add([]byte("-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZWQyNTUxOQAAACA=\n-----END OPENSSH PRIVATE KEY-----\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		_, _ = opensshPublic(data)
	})
}

// TestGitoliteOptions: the repo-specific hooks a gl-conf declares, as
// gitolite compiles `option hook.pre-receive = a b` (suffixed options
// too).
func TestGitoliteOptions(t *testing.T) {
	dir := t.TempDir()
	conf := `%one_repo = (
  'team/app' => {}
);
%one_config = (
  'team/app' => [
    [ 3, 'gitolite-options.hook.pre-receive', 'lint gitplus-pre-receive' ],
    [ 4, 'gitolite-options.hook.post-receive', 'gitplus-post-receive' ],
    [ 5, 'gitolite-options.hook.pre-receive.extra', 'it\'s' ]
  ]
);
`
	os.WriteFile(filepath.Join(dir, "gl-conf"), []byte(conf), 0o644)
	name, codes, ok := gitoliteOptions(dir, "pre-receive")
	if !ok || name != "team/app" || !reflect.DeepEqual(codes, []string{"lint", "gitplus-pre-receive", "it's"}) {
		t.Fatalf("gitoliteOptions = %q %q %v", name, codes, ok)
	}
	if _, codes, _ := gitoliteOptions(dir, "post-receive"); !reflect.DeepEqual(codes, []string{"gitplus-post-receive"}) {
		t.Fatalf("post-receive codes %q", codes)
	}
	if _, _, ok := gitoliteOptions(t.TempDir(), "pre-receive"); ok {
		t.Fatal("a repository without gl-conf has declarations")
	}
}

func FuzzGitoliteOptions(f *testing.F) {
	f.Add([]byte("%one_repo = ( 'r' => {} );\n%one_config = ( 'r' => [ [ 1, 'gitolite-options.hook.pre-receive', 'a b' ] ] );"))
	f.Fuzz(func(t *testing.T, data []byte) {
		dir := t.TempDir()
		os.WriteFile(filepath.Join(dir, "gl-conf"), data, 0o644)
		gitoliteOptions(dir, "pre-receive")
	})
}
