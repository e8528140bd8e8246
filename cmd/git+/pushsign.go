package main

// git+'s own pushes of branches identify their pusher with a push
// certificate signed by the verb's signing key (docs/serving.md "git+ verbs
// identify themselves"): git signs through gpg.ssh.program pointed at this
// binary, which answers `-Y sign` (main, hubrefs/sshsign.Keygen).

import (
	"os"
	"path/filepath"

	"github.com/gitplus/gitplus/hubrefs"
	"github.com/gitplus/gitplus/receive"
)

// pushSigning is how a push signs with k: the key file, or the agent key.
func (k *hubKey) pushSigning() *receive.PushSigning {
	if k == nil || k.Signer == nil {
		return nil
	}
	s := &receive.PushSigning{Key: "key::" + hubrefs.AuthorizedKey(k.Signer.PublicKey())}
	if k.Source != "" && k.Source != "ssh-agent" {
		if abs, err := filepath.Abs(k.Source); err == nil {
			s.Key = abs
		}
	}
	if exe, err := os.Executable(); err == nil {
		s.Program = exe
	}
	return s
}
