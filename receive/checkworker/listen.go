package checkworker

// Deliveries that wake a worker (`git+ check worker --listen`, docs/queue.md
// "Check workers") and where a worker runs (its clone and remote).

import (
	"io"
	"net"
	"net/http"
	"time"

	"github.com/gitplus/gitplus/receive/repo"
)

// Listen serves HTTP on addr until stop: a POSTed webhook delivery that
// verify says is signed (given the body and the request's header) sends on
// wake, unless a look is already due, and is answered 204; anything else is
// answered 405 or 401 and wakes nothing. It returns the address it listens
// on (port 0 picks one).
func Listen(addr string, verify func(body []byte, header func(string) string) bool, wake chan<- struct{}) (at net.Addr, stop func() error, err error) {
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, nil, err
	}
	srv := &http.Server{Handler: wakeHandler(verify, wake), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(l) }()
	return l.Addr(), srv.Close, nil
}

func wakeHandler(verify func(body []byte, header func(string) string) bool, wake chan<- struct{}) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			http.Error(w, "POST a webhook delivery", http.StatusMethodNotAllowed)
			return
		}
		body, err := io.ReadAll(io.LimitReader(r.Body, 16<<20))
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		if !verify(body, r.Header.Get) {
			http.Error(w, "git+ check worker: the delivery's signature does not match --secret", http.StatusUnauthorized)
			return
		}
		select {
		case wake <- struct{}{}:
		default: // a look is already due
		}
		w.WriteHeader(http.StatusNoContent)
	})
}

// Locate is where a worker runs: the git directory of its clone dir ("" is
// the current directory), and the remote it learns candidates from: remote,
// else the clone's default remote; "." is the clone itself.
func Locate(dir, remote string) (gitDir, from string, err error) {
	if dir == "" {
		dir = "."
	}
	gitDir, bare, err := repo.FindGitDir(dir)
	if err != nil {
		return "", "", err
	}
	if remote == "" {
		remote, _ = repo.DefaultRemote(gitDir, bare)
	}
	if remote == "." {
		remote = gitDir
	}
	return gitDir, remote, nil
}
