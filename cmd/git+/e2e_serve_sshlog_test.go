package main

import (
	"strings"
	"testing"

	"golang.org/x/crypto/ssh"
)

// TestServeSSHLogsRefusedKey: a key SSH refuses is in serve's log, with its
// fingerprint and the reason, so an operator can tell a user why their
// `git clone` said only "Permission denied (publickey)".
func TestServeSSHLogsRefusedKey(t *testing.T) {
	t.Parallel()
	a := newAuthWorld(t)
	c := a.commit(nil, map[string]string{"a.txt": "a\n"}, "one")
	errs, err := a.sshPush("out", c+":refs/heads/ssh-out")
	a.mustRefuse("a key that is nobody's", errs, err, "refs/heads/ssh-out", "", "Permission denied (publickey)")
	want := "git+ serve: ssh: refused key " + ssh.FingerprintSHA256(a.keys["out"].Public) + " (ssh-ed25519) from 127.0.0.1:"
	log := readFile(a.s.Log)
	if !strings.Contains(log, want) || !strings.Contains(log, "it is not a member key of any git+ repository here") {
		t.Fatalf("serve's log lacks %q and its reason:\n%s", want, log)
	}
}
