package gitio

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestParseConfigAgreesWithGit reads files git writes and hand-written
// ones with quotes, escapes, comments, continuations and subsections, and
// checks every entry against `git config --file F --list`.
func TestParseConfigAgreesWithGit(t *testing.T) {
	files := []string{
		"[core]\n\tbare = true\n[gitplus]\n\tpusher = env:GL_USER\n\tpusher = ssh-auth-info\n",
		"[GitPlus]\n  Pusher=env:REMOTE_USER ; comment\n  initialized\n[gitplus \"Sub.Sect\"]\n\tkey = \"a # b\" c\\\\d\\t  # tail\n",
		"# lead\n[gitplus] pusherMap = \"alice@example.com\"   alice\n[gitplus]\n\tpusherMap = bob  bobby\\\n continued\n",
		"[remote \"origin\"]\n\turl = /srv/x.git\n[gitplus.old]\n\tk = v\n[a]\nb = \"q\\\"uote\"\n",
	}
	for i, f := range files {
		path := filepath.Join(t.TempDir(), "config")
		if err := os.WriteFile(path, []byte(f), 0o644); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command("git", "config", "--file", path, "--null", "--list")
		cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null")
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("file %d: git config --list: %v", i, err)
		}
		var want []string
		for _, rec := range strings.Split(strings.TrimSuffix(string(out), "\x00"), "\x00") {
			k, v, ok := strings.Cut(rec, "\n")
			if !ok {
				v = "true" // a bare name: git's boolean true
			}
			want = append(want, k+"="+v)
		}
		c, err := ReadConfig(path)
		if err != nil {
			t.Fatalf("file %d: %v", i, err)
		}
		var got []string
		for _, e := range c {
			got = append(got, e.Key+"="+e.Value)
		}
		if strings.Join(got, "|") != strings.Join(want, "|") {
			t.Errorf("file %d %q:\n got %q\nwant %q", i, f, got, want)
		}
	}
	if _, err := ParseConfig([]byte("[gitplus\n")); err == nil {
		t.Error("an unterminated header parsed")
	}
	if c, err := ReadConfig(filepath.Join(t.TempDir(), "none")); err != nil || c != nil {
		t.Errorf("a missing file: %v %v", c, err)
	}
}

// BenchmarkReadConfig is what the pre-receive hook pays for reading a
// repository's config (a push without git+ serve's variables).
func BenchmarkReadConfig(b *testing.B) {
	path := filepath.Join(b.TempDir(), "config")
	os.WriteFile(path, []byte("[core]\n\trepositoryformatversion = 0\n\tfilemode = true\n\tbare = true\n[gitplus]\n\tinitialized = true\n\tpusher = env:GL_USER\n"+
		"[receive]\n\tadvertisePushOptions = true\n\tfsckObjects = true\n\tcertNonceSeed = 0457f6ee830a065a5a9c6b160690e5265b72a6fe1a1966ddd831f4e0b37afd86\n\tcertNonceSlop = 300\n[gpg \"ssh\"]\n\tallowedSignersFile = /dev/null\n"), 0o644)
	for i := 0; i < b.N; i++ {
		if _, err := ReadConfig(path); err != nil {
			b.Fatal(err)
		}
	}
}
