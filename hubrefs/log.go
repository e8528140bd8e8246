package hubrefs

import (
	"bytes"
	"container/heap"
	"fmt"
	"runtime"
	"sync"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/storer"
)

// walked is one commit met by a walk: its id, raw content and parse.
type walked struct {
	id  plumbing.Hash
	raw []byte
	rc  *rawCommit
}

// walk reads the commits reachable from tip, not going past stop (stop
// itself is not read). It parses headers only. It returns the commits in
// walk order and whether stop was met; sink, if not nil, is given each
// commit as soon as it is read.
func walk(store storer.EncodedObjectStorer, tip, stop plumbing.Hash, c Ceilings, what string, sink func(walked)) ([]walked, bool, error) {
	var out []walked
	seen := map[plumbing.Hash]bool{tip: true}
	queue := []plumbing.Hash{tip}
	from := map[plumbing.Hash]plumbing.Hash{}
	metStop := false
	for len(queue) > 0 {
		id := queue[0]
		queue = queue[1:]
		if len(out) >= c.EventsPerRef {
			return nil, false, fmt.Errorf("%s holds more than %d events: %w", what, c.EventsPerRef, ErrCeiling)
		}
		raw, err := loadRaw(store, id, c)
		if err != nil {
			if child, ok := from[id]; ok {
				return nil, false, fmt.Errorf("%s: parent of event %s: %w", what, child, err)
			}
			return nil, false, fmt.Errorf("%s: %w", what, err)
		}
		rc, err := parseCommit(raw)
		if err != nil {
			return nil, false, fmt.Errorf("%s: event %s: %w", what, id, err)
		}
		out = append(out, walked{id: id, raw: raw, rc: rc})
		if sink != nil {
			sink(out[len(out)-1])
		}
		for _, p := range rc.parents {
			if p == stop && !stop.IsZero() {
				metStop = true
				continue
			}
			if !seen[p] {
				seen[p] = true
				from[p] = id
				queue = append(queue, p)
			}
		}
	}
	return out, metStop, nil
}

// decodeAll decodes and verifies walked commits on all CPUs; the error
// reported is that of the first failing commit in walk order.
func decodeAll(ws []walked, c Ceilings, what string) ([]Event, error) {
	evs := make([]Event, len(ws))
	errs := make([]error, len(ws))
	workers := runtime.GOMAXPROCS(0)
	if workers > len(ws) {
		workers = len(ws)
	}
	var wg sync.WaitGroup
	var next int
	var mu sync.Mutex
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			v := &verifier{kc: KeyCache{}}
			for {
				mu.Lock()
				i := next
				next += 64
				mu.Unlock()
				if i >= len(ws) {
					return
				}
				for j := i; j < i+64 && j < len(ws); j++ {
					evs[j], errs[j] = decodeParsed(ws[j].rc, ws[j].raw, ws[j].id, c, v)
				}
			}
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, fmt.Errorf("%s: %w", what, err)
		}
	}
	return evs, nil
}

// decodeBatch is a run of walked commits decoded by one worker.
type decodeBatch struct {
	ws   []walked
	evs  []Event
	errs []error
}

const batchSize = 64

// walkDecode walks from tip and decodes and verifies what it reads on all
// CPUs while it walks: each batch of batchSize commits goes to a worker as
// soon as it is read. The error reported is the walk's, else that of the
// first failing commit in walk order.
func walkDecode(store storer.EncodedObjectStorer, tip plumbing.Hash, c Ceilings, what string, vc *VerifiedCache) ([]Event, error) {
	workers := runtime.GOMAXPROCS(0)
	var jobs chan *decodeBatch
	var wg sync.WaitGroup
	// Workers start with the second batch: a log of one batch (most pull
	// requests) is decoded on the calling goroutine, without the cost of
	// starting goroutines (an audit reads thousands of short logs, each on
	// a loading worker of its own).
	start := func() {
		jobs = make(chan *decodeBatch, 4*workers)
		for w := 0; w < workers; w++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				v := &verifier{kc: KeyCache{}, vc: vc}
				for b := range jobs {
					b.decode(c, v)
				}
			}()
		}
	}
	var batches []*decodeBatch
	cur := &decodeBatch{}
	ws, _, err := walk(store, tip, plumbing.ZeroHash, c, what, func(w walked) {
		cur.ws = append(cur.ws, w)
		if len(cur.ws) == batchSize {
			if jobs == nil {
				start()
			}
			batches = append(batches, cur)
			jobs <- cur
			cur = &decodeBatch{ws: make([]walked, 0, batchSize)}
		}
	})
	if err == nil && len(cur.ws) > 0 {
		batches = append(batches, cur)
		if jobs == nil {
			cur.decode(c, &verifier{kc: KeyCache{}, vc: vc})
		} else {
			jobs <- cur
		}
	}
	if jobs != nil {
		close(jobs)
		wg.Wait()
	}
	if err != nil {
		return nil, err
	}
	evs := make([]Event, 0, len(ws))
	for _, b := range batches {
		for j, err := range b.errs {
			if err != nil {
				return nil, fmt.Errorf("%s: %w", what, err)
			}
			evs = append(evs, b.evs[j])
		}
	}
	return evs, nil
}

// decode decodes and verifies the batch's commits with v.
func (b *decodeBatch) decode(c Ceilings, v *verifier) {
	b.evs = make([]Event, len(b.ws))
	b.errs = make([]error, len(b.ws))
	for j, w := range b.ws {
		b.evs[j], b.errs[j] = decodeParsed(w.rc, w.raw, w.id, c, v)
	}
}

// ReadLog reads every event reachable from tip, decoding and verifying each
// once, and returns them in causal order (see CausalOrder). More than
// c.EventsPerRef events is ErrCeiling; an object that cannot be read is
// ErrMissing naming it; any event that fails Decode fails the whole read.
// The zero tip (an absent ref) gives no events. Signatures are verified on
// all CPUs while the walk reads objects.
func ReadLog(store storer.EncodedObjectStorer, tip plumbing.Hash, c Ceilings) ([]Event, error) {
	return ReadLogWith(store, tip, c, nil)
}

// ReadNew returns the events reachable from newTip but not from oldTip, in
// causal order, decoding and verifying only those. A zero oldTip means a new
// ref (every event is new). newTip must descend from oldTip, else
// ErrNotForward. c.EventsPerRef bounds the events read on either side; the
// ref's total is the caller's to track.
func ReadNew(store storer.EncodedObjectStorer, oldTip, newTip plumbing.Hash, c Ceilings) ([]Event, error) {
	c = c.norm()
	if oldTip.IsZero() {
		return ReadLog(store, newTip, c)
	}
	if oldTip == newTip {
		return nil, nil
	}
	what := fmt.Sprintf("hub log %s..%s", oldTip, newTip)
	ws, metOld, err := walk(store, newTip, oldTip, c, what, nil)
	if err != nil {
		return nil, err
	}
	if !metOld {
		return nil, fmt.Errorf("%s: %s does not descend from %s; a hub ref only moves forward: %w", what, newTip, oldTip, ErrNotForward)
	}
	// Every commit the walk met that is also an ancestor of oldTip has all
	// its ancestors in the walk (they do not pass oldTip), so the walk then
	// holds a root. Without a root nothing needs removing.
	hasRoot := false
	for _, w := range ws {
		if len(w.rc.parents) == 0 {
			hasRoot = true
			break
		}
	}
	if hasRoot {
		oldWs, _, err := walk(store, oldTip, plumbing.ZeroHash, c, "hub log at "+oldTip.String(), nil)
		if err != nil {
			return nil, err
		}
		old := make(map[plumbing.Hash]bool, len(oldWs))
		for _, w := range oldWs {
			old[w.id] = true
		}
		kept := ws[:0]
		for _, w := range ws {
			if !old[w.id] {
				kept = append(kept, w)
			}
		}
		ws = kept
	}
	evs, err := decodeAll(ws, c, what)
	if err != nil {
		return nil, err
	}
	return CausalOrder(evs)
}

// CausalOrder sorts events topologically, parents before children; among
// the events ready at the same time the smaller (Time, ID) comes first.
// Parents not among events count as already delivered, so a suffix of a log
// orders as it does within the whole log. Duplicate ids or a cycle are
// ErrMalformed. The input slice is not modified.
func CausalOrder(events []Event) ([]Event, error) {
	index := make(map[plumbing.Hash]int, len(events))
	for i, e := range events {
		if _, dup := index[e.ID]; dup {
			return nil, fmt.Errorf("event %s appears twice: %w", e.ID, ErrMalformed)
		}
		index[e.ID] = i
	}
	waiting := make([]int, len(events))    // parents not yet delivered
	children := make([][]int, len(events)) // by index
	for i, e := range events {
		for _, p := range e.Parents {
			if j, ok := index[p]; ok {
				waiting[i]++
				children[j] = append(children[j], i)
			}
		}
	}
	h := &readyHeap{events: events}
	for i := range events {
		if waiting[i] == 0 {
			h.idx = append(h.idx, i)
		}
	}
	heap.Init(h)
	out := make([]Event, 0, len(events))
	for h.Len() > 0 {
		i := heap.Pop(h).(int)
		out = append(out, events[i])
		for _, ch := range children[i] {
			waiting[ch]--
			if waiting[ch] == 0 {
				heap.Push(h, ch)
			}
		}
	}
	if len(out) != len(events) {
		return nil, fmt.Errorf("%d events form a cycle: %w", len(events)-len(out), ErrMalformed)
	}
	return out, nil
}

type readyHeap struct {
	events []Event
	idx    []int
}

func (h *readyHeap) Len() int { return len(h.idx) }
func (h *readyHeap) Less(a, b int) bool {
	x, y := &h.events[h.idx[a]], &h.events[h.idx[b]]
	if x.Time != y.Time {
		return x.Time < y.Time
	}
	return bytes.Compare(x.ID[:], y.ID[:]) < 0
}
func (h *readyHeap) Swap(a, b int) { h.idx[a], h.idx[b] = h.idx[b], h.idx[a] }
func (h *readyHeap) Push(x any)    { h.idx = append(h.idx, x.(int)) }
func (h *readyHeap) Pop() any {
	n := len(h.idx) - 1
	x := h.idx[n]
	h.idx = h.idx[:n]
	return x
}

// CheckNext reports whether ev may follow tip in a hub log: every hub log is
// linear (docs/trust.md), so an event other than the root has exactly one
// parent, the log's tip. A join (several parents) or a fork (a parent other
// than the tip) is ErrNotLinear.
func CheckNext(tip plumbing.Hash, ev Event) error {
	switch {
	case len(ev.Parents) == 1 && ev.Parents[0] == tip:
		return nil
	case len(ev.Parents) == 0:
		return fmt.Errorf("event %s is a second root (after %s): %w", ev.ID, tip, ErrNotLinear)
	case len(ev.Parents) > 1:
		return fmt.Errorf("event %s joins %d parents; hub logs are linear, each event has the tip as its only parent (re-read and append on the tip): %w", ev.ID, len(ev.Parents), ErrNotLinear)
	}
	return fmt.Errorf("event %s has parent %s, not the tip %s; hub logs are linear (re-read and append on the tip): %w", ev.ID, ev.Parents[0], tip, ErrNotLinear)
}
