package receive

import (
	"io"
	"strings"
)

// RunPreReceive is the whole pre-receive hook process: the repository is
// $GIT_DIR (git runs hooks with it set), else the current directory; the
// object store is the quarantine environ describes. It returns the exit
// status: 0 when every update is accepted, 1 otherwise.
func RunPreReceive(environ []string, stdin io.Reader, stderr io.Writer) int {
	dir := "."
	for _, kv := range environ {
		if v, ok := strings.CutPrefix(kv, "GIT_DIR="); ok && v != "" {
			dir = v
		}
	}
	if PreReceive(dir, QuarantineFromEnviron(environ), stdin, stderr) > 0 {
		return 1
	}
	return 0
}
