package serve

// How often one client may call the check endpoints (docs/serving.md,
// "Bounds"): a token bucket per client address, N requests per period in
// bursts of up to N. Over it, 429 with Retry-After. Every request counts,
// answered or refused, before the repository is looked up, so the answer
// says nothing about which repositories exist.
//
// Decisions:
//   - The client is the connection's address, never a header a client can
//     set (X-Forwarded-For): behind a proxy every client is the proxy, and
//     the operator raises the rate (--check-rate) for it.
//   - An IPv6 client is its /64: one host holds a whole /64 and could
//     otherwise take a fresh address for every request.
//   - At most maxClients buckets are kept; a full bucket (a client idle for a
//     period) is forgotten first, then the least recently seen.

import (
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Rate is how many check requests a client may make per period.
type Rate struct {
	N   int
	Per time.Duration
}

// DefaultCheckRate is --check-rate's default: 120 requests a minute.
var DefaultCheckRate = Rate{N: 120, Per: time.Minute}

func (r Rate) String() string { return fmt.Sprintf("%d/%s", r.N, r.Per) }

// ParseRate reads "N/DURATION" (120/1m, 10/1s, 1000/1h).
func ParseRate(s string) (Rate, error) {
	n, per, ok := strings.Cut(s, "/")
	if !ok {
		return Rate{}, fmt.Errorf("rate %q: want N/DURATION, e.g. 120/1m", s)
	}
	r := Rate{}
	var err error
	if r.N, err = strconv.Atoi(n); err != nil || r.N < 1 {
		return Rate{}, fmt.Errorf("rate %q: N must be a whole number of requests, at least 1", s)
	}
	if r.Per, err = time.ParseDuration(per); err != nil || r.Per <= 0 {
		return Rate{}, fmt.Errorf("rate %q: DURATION must be a positive Go duration such as 1m or 30s", s)
	}
	return r, nil
}

// maxClients bounds the limiter's memory (about 100 bytes a client).
const maxClients = 65536

type bucket struct {
	tokens   float64
	seen     time.Time
	refusing bool // refused since its last accepted request (logged once)
}

// limiter is a token bucket per client.
type limiter struct {
	mu      sync.Mutex
	rate    Rate
	now     func() time.Time
	clients map[string]*bucket
}

func newLimiter(r Rate) *limiter {
	return &limiter{rate: r, now: time.Now, clients: map[string]*bucket{}}
}

// take spends one request of client's; when none is left it returns how
// long until one is, and first when it is the first refusal since the
// client's last accepted request.
func (l *limiter) take(client string) (ok bool, wait time.Duration, first bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	perToken := l.rate.Per / time.Duration(l.rate.N)
	b := l.clients[client]
	if b == nil {
		if len(l.clients) >= maxClients {
			l.forget(now)
		}
		b = &bucket{tokens: float64(l.rate.N), seen: now}
		l.clients[client] = b
	}
	b.tokens += float64(now.Sub(b.seen)) / float64(perToken)
	if b.tokens > float64(l.rate.N) {
		b.tokens = float64(l.rate.N)
	}
	b.seen = now
	if b.tokens >= 1 {
		b.tokens--
		b.refusing = false
		return true, 0, false
	}
	first = !b.refusing
	b.refusing = true
	return false, time.Duration((1 - b.tokens) * float64(perToken)), first
}

// forget drops every client whose bucket is full again, or else the one
// seen least recently.
func (l *limiter) forget(now time.Time) {
	var oldest string
	for k, b := range l.clients {
		if now.Sub(b.seen) >= l.rate.Per {
			delete(l.clients, k)
			continue
		}
		if oldest == "" || b.seen.Before(l.clients[oldest].seen) {
			oldest = k
		}
	}
	if len(l.clients) >= maxClients && oldest != "" {
		delete(l.clients, oldest)
	}
}

// clientOf is the client a request is counted for: its address, an IPv6
// address as its /64.
func clientOf(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	ip := net.ParseIP(host)
	if ip == nil {
		return host
	}
	if ip.To4() != nil {
		return ip.To4().String()
	}
	return ip.Mask(net.CIDRMask(64, 128)).String() + "/64"
}

// checkRateOK counts r against its client; over the rate it answers 429
// with Retry-After and returns false.
func (s *Server) checkRateOK(w http.ResponseWriter, r *http.Request) bool {
	s.mu.Lock()
	if s.checkLimit == nil {
		rate := s.CheckRate
		if rate.N <= 0 || rate.Per <= 0 {
			rate = DefaultCheckRate
		}
		s.checkLimit = newLimiter(rate)
	}
	l := s.checkLimit
	s.mu.Unlock()
	client := clientOf(r)
	ok, wait, first := l.take(client)
	if ok {
		return true
	}
	secs := int((wait + time.Second - 1) / time.Second)
	if secs < 1 {
		secs = 1
	}
	if first {
		s.logf("checks: %s is over the check API's rate (%s); answering 429 until it slows down", client, l.rate)
	}
	w.Header().Set("Retry-After", strconv.Itoa(secs))
	http.Error(w, fmt.Sprintf("git+: too many check requests from %s: at most %d per %s (git+ serve --check-rate); retry after %d s", client, l.rate.N, l.rate.Per, secs), http.StatusTooManyRequests)
	return false
}
