package hooks

import (
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

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

// TestWakeFailing: a rule is failing from its first failure after its last
// success; a success clears it; the totals count every failure.
func TestWakeFailing(t *testing.T) {
	at := func(m int) time.Time { return time.Date(2026, 1, 1, 0, m, 0, 0, time.UTC) }
	outs := []WakeOutcome{
		{Rule: "ci", Time: at(1), Exit: 1, Line: "old"},
		{Rule: "ci", Time: at(2), OK: true},
		{Rule: "ci", Time: at(3), Exit: 2, Line: "a"},
		{Rule: "ci", Time: at(4), Exit: 3, Line: "b"},
		{Rule: "queue", Time: at(5), Exit: 1},
		{Rule: "queue", Time: at(6), OK: true},
		{Rule: "gone", Time: at(7), Exit: -1, Error: "cannot start: no such file"},
	}
	fs := WakeFailing(outs)
	if len(fs) != 2 || fs[0].Rule != "ci" || fs[0].Failures != 2 || !fs[0].Since.Equal(at(3)) || fs[0].Line != "b" || fs[0].Exit != 3 || fs[1].Rule != "gone" {
		t.Fatalf("WakeFailing = %+v", fs)
	}
	if s := fs[0].String(); s != "wake rule ci failed 2 times since 2026-01-01T00:03:00Z: b" {
		t.Fatalf("line %q", s)
	}
	if s := fs[1].String(); !strings.Contains(s, "failed once since") || !strings.Contains(s, "cannot start") {
		t.Fatalf("line %q", s)
	}
	if tot := WakeFailureTotals(outs); tot["ci"] != 3 || tot["queue"] != 1 || tot["gone"] != 1 {
		t.Fatalf("totals %v", tot)
	}
}

func FuzzReadWakeOutcomes(f *testing.F) {
	f.Add([]byte(`{"rule":"ci","time":"2026-01-01T00:00:00Z","ok":false,"exit":1,"line":"x"}` + "\n{bad\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		dir := t.TempDir()
		p := filepath.Join(dir, WakeOutcomesFile)
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, data, 0o644)
		outs, _ := ReadWakeOutcomes(dir)
		WakeFailing(outs)
	})
}
