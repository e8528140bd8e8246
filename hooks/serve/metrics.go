package serve

// /metrics (docs/serving.md "Metrics", docs/operating.md "Metrics"): the
// Prometheus exposition of the served repositories (hooks/metrics).
//
// Decisions:
//   - Who sees what: without credentials, every served repository on an
//     open server and none on a private one (401, as a private repository
//     answers). With HTTP basic credentials (a member's name and token,
//     git+ member token issue NAME) the scrape shows every repository on an
//     open server, and on a private one exactly the repositories where the
//     token authenticates that member. Credentials that are sent are
//     always checked: ones that authenticate no one anywhere get a 401.
//   - ?repository=PATH (repeatable) limits a scrape to those repositories:
//     on a private server, where a token is valid in one repository, a
//     scraper has one job per repository, each with that repository's
//     token.
//   - The exact path /metrics only: a repository at ROOT/metrics is still
//     served under /metrics/.

import (
	"net/http"
	"os"
	"slices"
	"sync"

	"github.com/gitplus/gitplus/hooks/metrics"
)

// metricsPath is where the exposition is served.
const metricsPath = "/metrics"

// metricsState is the server's metrics collector, made on first use.
type metricsState struct {
	once sync.Once
	c    *metrics.Collector
}

func (s *Server) collector() *metrics.Collector {
	s.metrics.once.Do(func() {
		log := s.Log
		if log == nil {
			log = os.Stderr
		}
		s.metrics.c = metrics.New(TrustOf, log)
	})
	return s.metrics.c
}

// serveMetrics answers /metrics.
func (s *Server) serveMetrics(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "/metrics is read-only", http.StatusMethodNotAllowed)
		return
	}
	name, token, creds := r.BasicAuth()
	authenticated := false
	var repos []metrics.Repo
	only := r.URL.Query()["repository"]
	for _, rel := range s.ServedRepos() {
		if len(only) > 0 && !slices.Contains(only, rel) {
			continue
		}
		dir, ok := s.ServedRepo(rel)
		if !ok {
			continue
		}
		member := false
		if creds {
			if st, since, err := s.memberKeys(dir); err != nil {
				s.logf("%v", err)
			} else {
				ts, err := LoadTokens(dir)
				if err != nil {
					s.logf("%v", err)
				}
				_, member = CheckToken(ts, st, since, name, token)
			}
		}
		authenticated = authenticated || member
		if member || !s.Private {
			repos = append(repos, metrics.Repo{Name: rel, GitDir: dir})
		}
	}
	switch {
	case creds && !authenticated:
		unauthorized(w, "metrics", "git+: the token for "+name+" authenticates no member of any repository served here; ask for a new one (git+ member token issue NAME)\n")
		return
	case s.Private && !authenticated:
		unauthorized(w, "metrics", "git+: this server is private (--private): scrape /metrics with a member's name and token (HTTP basic authentication; git+ member token issue NAME)\n")
		return
	}
	s.collector().Handler(repos).ServeHTTP(w, r)
}
