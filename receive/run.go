package receive

import (
	"io"
	"strings"
)

// RunPreReceive is the whole pre-receive hook process: the repository is
// $GIT_DIR (git runs hooks with it set), else the current directory; the
// object store is the quarantine environ describes. It returns the exit
// status: 0 when every update is accepted, 1 otherwise. The caller is to
// exit with it: the object store is left open (see judgePush).
func RunPreReceive(environ []string, stdin io.Reader, stderr io.Writer) int {
	dir := "."
	for _, kv := range environ {
		if v, ok := strings.CutPrefix(kv, "GIT_DIR="); ok && v != "" {
			dir = v
		}
	}
	if preReceive(dir, QuarantineFromEnviron(environ), PushFromEnviron(environ), stdin, stderr, false) > 0 {
		return 1
	}
	return 0
}
