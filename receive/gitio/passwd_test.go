package gitio

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

func TestLookupUID(t *testing.T) {
	dir := t.TempDir()
	pw, gr := filepath.Join(dir, "passwd"), filepath.Join(dir, "group")
	os.WriteFile(pw, []byte("# comment\nroot:x:0:0:root:/root:/bin/sh\ngit:x:1001:1001::/srv/git:/usr/bin/git-shell\nbad:x:notanumber:1::/:/bin/sh\n"), 0o644)
	os.WriteFile(gr, []byte("root:x:0:\ngit:x:1001:\ndevs:x:2000:alice,git\nops:x:2001:gitolite\n"), 0o644)
	defer func(p, g string) { passwdFile, groupFile = p, g }(passwdFile, groupFile)
	passwdFile, groupFile = pw, gr
	u, ok := LookupUID(1001)
	if !ok || u.Name != "git" || u.GID != 1001 || !slices.Equal(u.Groups, []int{1001, 2000}) {
		t.Fatalf("LookupUID(1001) = %+v, %v; want git, groups 1001 2000", u, ok)
	}
	if _, ok := LookupUID(4242); ok {
		t.Fatal("LookupUID(4242) found a user /etc/passwd does not have")
	}
	if got := UserName(0); got != "root (uid 0)" {
		t.Fatalf("UserName(0) = %q", got)
	}
	if got := UserName(4242); got != "uid 4242" {
		t.Fatalf("UserName(4242) = %q", got)
	}
}
