package checkrun

import (
	"strings"
	"sync"
)

// Tail keeps the last bytes written to it: the output tail a check records
// in check.completed (`git+ check run` and `git+ check worker` both; at most
// hubrefs.MaxCheckOutput bytes, docs/events.md).
type Tail struct {
	mu  sync.Mutex
	max int
	b   []byte
}

// NewTail returns a Tail keeping the last max bytes.
func NewTail(max int) *Tail { return &Tail{max: max} }

func (t *Tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.b = append(t.b, p...)
	if over := len(t.b) - t.max; over > 0 {
		t.b = append(t.b[:0], t.b[over:]...)
	}
	return len(p), nil
}

// String is the tail as valid UTF-8 (a character cut at the start is
// dropped).
func (t *Tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return strings.ToValidUTF8(string(t.b), "")
}
