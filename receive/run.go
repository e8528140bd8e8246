package receive

import (
	"io"
	"strings"
	"time"

	"github.com/gitplus/gitplus/receive/clock"
	"github.com/gitplus/gitplus/receive/hookrec"
)

// RunPreReceive is the whole pre-receive hook process: the repository is
// $GIT_DIR (git runs hooks with it set), else the current directory; the
// object store is the quarantine environ describes. It returns the exit
// status: 0 when every update is accepted, 1 otherwise. The caller is to
// exit with it: the object store is left open (see judgePush). Last, it
// appends its record for /metrics (receive/hookrec), ignoring a failure.
func RunPreReceive(environ []string, stdin io.Reader, stderr io.Writer) int {
	start := clock.Server()
	dir := "."
	for _, kv := range environ {
		if v, ok := strings.CutPrefix(kv, "GIT_DIR="); ok && v != "" {
			dir = v
		}
	}
	push := PushFromEnviron(environ)
	push.Now = start
	refused, code := preReceive(dir, QuarantineFromEnviron(environ), push, stdin, stderr, false)
	rec := hookrec.Record{Verdict: hookrec.Accepted, End: time.Now()}
	rec.Duration = rec.End.Sub(start)
	if refused > 0 {
		rec.Verdict, rec.Code = hookrec.Refused, code
	}
	hookrec.Append(dir, rec)
	if refused > 0 {
		return 1
	}
	return 0
}
