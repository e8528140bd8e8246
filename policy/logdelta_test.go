package policy

import (
	"encoding/json"
	"fmt"
	"math/rand"
	"reflect"
	"sync"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/gitplus/gitplus/hubrefs"
)

// dropCache is a map cache that can drop entries (as receive.DirCache can).
type dropCache struct {
	mu sync.Mutex
	m  map[plumbing.Hash][]byte
}

func (c *dropCache) Get(k plumbing.Hash) ([]byte, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	v, ok := c.m[k]
	return v, ok
}

func (c *dropCache) Put(k plumbing.Hash, v []byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.m[k] = v
}

func (c *dropCache) Drop(k plumbing.Hash) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.m, k)
}

// TestQueuePushFromSummary is a differential test of the queue push judged
// from the summary of the old tip and the new events alone (queueFast, with
// log deltas) against the whole fold with no cache: a random sequence of
// pushes to one queue ref — valid events, several at once, events signed
// without hub.queue, malformed payloads, a second root, rewinds, forks,
// events of another namespace or repository, trust moving under the queue —
// is judged both ways, with a cache kept across the pushes as the hook
// keeps it, and the verdicts (code and reason) must be equal. After every
// accepted push the log the cache resolves at the new tip (whole entry or
// deltas) must be the log read from the objects. maxDeltaDepth is small
// here so whole logs are written again several times.
func TestQueuePushFromSummary(t *testing.T) {
	defer func(d int) { maxDeltaDepth = d }(maxDeltaDepth)
	maxDeltaDepth = 3
	for seed := int64(1); seed <= 3; seed++ {
		t.Run(fmt.Sprint("seed ", seed), func(t *testing.T) { queuePushes(t, seed, 90) })
	}
}

func queuePushes(t *testing.T, seed int64, steps int) {
	rng := rand.New(rand.NewSource(seed))
	const rules = `{"protected": {"refs/heads/main": {"requiredApprovals": 1, "queueCandidates": true}}}`
	w := newWorld(t, rules)
	const qID = "01900000-0000-7000-8000-0000000000a1"
	qRef := hubrefs.QueueRefPrefix + qID
	w.event(qRef, "queuer", hubrefs.QueueOpened{Base: w.base(hubrefs.TypeQueueOpened), ID: qID, Target: main})
	c := &dropCache{m: map[plumbing.Hash][]byte{}}
	var history []plumbing.Hash // every tip the queue ref held
	history = append(history, w.refs[qRef])
	prID := func() string { return fmt.Sprintf("01900000-0000-7000-8000-%012x", rng.Intn(6)+1) }
	entered := func(who string) hubrefs.QueueEntered {
		return hubrefs.QueueEntered{Base: w.base(hubrefs.TypeQueueEntered), PR: prID(), Head: w.c0.String(), BaseRef: main}
	}
	fast, accepted := 0, 0
	for i := 0; i < steps; i++ {
		tip := w.refs[qRef]
		var newTip plumbing.Hash
		kind := rng.Intn(12)
		switch kind {
		case 0, 1, 2: // one valid event
			newTip = w.eventOn([]plumbing.Hash{tip}, "queuer", entered("queuer"))
		case 3: // two valid events at once
			mid := w.eventOn([]plumbing.Hash{tip}, "queuer", entered("queuer"))
			newTip = w.eventOn([]plumbing.Hash{mid}, "queuer", hubrefs.QueueLeft{Base: w.base(hubrefs.TypeQueueLeft), PR: prID(), Head: w.c0.String(), Reason: "withdrawn"})
		case 4: // signed by a member without hub.queue
			newTip = w.eventOn([]plumbing.Hash{tip}, "alice", entered("alice"))
		case 5: // malformed payload
			p := entered("queuer")
			p.Priority = "urgent"
			newTip = w.eventOn([]plumbing.Hash{tip}, "queuer", p)
		case 6: // a second queue.opened
			newTip = w.eventOn([]plumbing.Hash{tip}, "queuer", hubrefs.QueueOpened{Base: w.base(hubrefs.TypeQueueOpened), ID: qID, Target: main})
		case 7: // rewind to an older tip
			newTip = history[rng.Intn(len(history))]
		case 8: // a fork on an older tip
			newTip = w.eventOn([]plumbing.Hash{history[rng.Intn(len(history))]}, "queuer", entered("queuer"))
		case 9: // another namespace's event, or another repository
			if rng.Intn(2) == 0 {
				newTip = w.eventOn([]plumbing.Hash{tip}, "alice", hubrefs.PROpened{Base: w.base(hubrefs.TypePROpened), ID: prID(), BaseRef: main, Head: w.c0.String(), Title: "x"})
			} else {
				p := entered("queuer")
				p.Repo = otherID
				newTip = w.eventOn([]plumbing.Hash{tip}, "queuer", p)
			}
		case 10: // trust moves: the rules set again (the summary is per trust tip)
			w.event(hubrefs.TrustRef, "admin", hubrefs.RulesSet{Base: w.base(hubrefs.TypeRulesSet), Rules: json.RawMessage(rules)})
			newTip = w.eventOn([]plumbing.Hash{tip}, "queuer", entered("queuer"))
		case 11: // a new root with no parent
			newTip = w.eventOn(nil, "queuer", hubrefs.QueueOpened{Base: w.base(hubrefs.TypeQueueOpened), ID: qID, Target: main})
		}
		if newTip == tip {
			continue
		}
		u := Update{Ref: qRef, Old: tip, New: newTip}
		want := Judge(Input{Objects: GoGitObjects(w.store), Refs: w.refs, Updates: []Update{u}})
		_, hadSum := (&judge{in: Input{Cache: c, Refs: w.refs}}).queueSummary(tip)
		got := Judge(Input{Objects: GoGitObjects(w.store), Refs: w.refs, Updates: []Update{u}, Cache: c})
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("step %d (kind %d, summary %v): with the cache %+v, without %+v", i, kind, hadSum, got, want)
		}
		if !want[0].Accepted() {
			continue
		}
		accepted++
		if hadSum {
			fast++
		}
		w.refs[qRef] = newTip
		history = append(history, newTip)
		fromObjects, err := hubrefs.ReadLog(w.store, newTip, storedCeilings)
		if err != nil {
			t.Fatal(err)
		}
		fromCache, _, ok := cachedLog(c, newTip)
		if !ok {
			t.Fatalf("step %d: the cache cannot resolve the log at %s", i, newTip)
		}
		if ids(fromCache) != ids(fromObjects) {
			t.Fatalf("step %d: the cache resolves the log at %s to\n%s\nthe objects hold\n%s", i, newTip, ids(fromCache), ids(fromObjects))
		}
		for k := range fromCache {
			a, b := fromCache[k], fromObjects[k]
			if a.Type != b.Type || a.Time != b.Time || string(a.Payload) != string(b.Payload) || !hubrefs.SameKey(a.Signer, b.Signer) {
				t.Fatalf("step %d: event %s differs in the cache", i, a.ID)
			}
		}
	}
	if fast < accepted/2 || accepted < steps/4 {
		t.Fatalf("%d pushes accepted, %d of them judged from a summary: the sequence does not exercise the fast path", accepted, fast)
	}
}

func ids(evs []hubrefs.Event) string {
	s := ""
	for _, ev := range evs {
		s += ev.ID.String()[:8] + " "
	}
	return s
}

// TestDeltaEntriesRefuseDamage: a delta whose events are not a chain from
// its base to its tip, whose depth does not follow its base's, or whose
// base is missing, resolves to nothing (a miss), never to a wrong log.
func TestDeltaEntriesRefuseDamage(t *testing.T) {
	w := newWorld(t, "")
	const qID = "01900000-0000-7000-8000-0000000000a1"
	qRef := hubrefs.QueueRefPrefix + qID
	root := w.event(qRef, "queuer", hubrefs.QueueOpened{Base: w.base(hubrefs.TypeQueueOpened), ID: qID, Target: main})
	var evs []hubrefs.Event
	var tips []plumbing.Hash
	for i := 0; i < 4; i++ {
		tips = append(tips, w.event(qRef, "queuer", hubrefs.QueueEntered{Base: w.base(hubrefs.TypeQueueEntered), PR: fmt.Sprintf("01900000-0000-7000-8000-%012x", i+1), Head: w.c0.String(), BaseRef: main}))
	}
	all, err := hubrefs.ReadLog(w.store, tips[3], storedCeilings)
	if err != nil {
		t.Fatal(err)
	}
	evs = all[1:]
	fresh := func() *dropCache {
		c := &dropCache{m: map[plumbing.Hash][]byte{}}
		c.Put(root, encodeLog(root, all[:1]))
		c.Put(tips[1], encodeDelta(tips[1], root, 1, evs[:2]))
		c.Put(tips[3], encodeDelta(tips[3], tips[1], 2, evs[2:]))
		return c
	}
	if got, n, ok := cachedLog(fresh(), tips[3]); !ok || n != 2 || ids(got) != ids(all) {
		t.Fatalf("a good chain resolves to %v (%d deltas, %v), want %s", ids(got), n, ok, ids(all))
	}
	for name, damage := range map[string]func(c *dropCache){
		"base missing":        func(c *dropCache) { c.Drop(root) },
		"middle missing":      func(c *dropCache) { c.Drop(tips[1]) },
		"events skip one":     func(c *dropCache) { c.Put(tips[3], encodeDelta(tips[3], tips[1], 2, evs[3:])) },
		"events out of order": func(c *dropCache) { c.Put(tips[3], encodeDelta(tips[3], tips[1], 2, []hubrefs.Event{evs[3], evs[2]})) },
		"wrong base":          func(c *dropCache) { c.Put(tips[3], encodeDelta(tips[3], root, 2, evs[2:])) },
		"depth out of step":   func(c *dropCache) { c.Put(tips[3], encodeDelta(tips[3], tips[1], 3, evs[2:])) },
		"truncated":           func(c *dropCache) { b, _ := c.Get(tips[3]); c.Put(tips[3], b[:len(b)-1]) },
		"another tip's entry": func(c *dropCache) { b, _ := c.Get(tips[1]); c.Put(tips[3], b) },
	} {
		c := fresh()
		damage(c)
		if got, _, ok := cachedLog(c, tips[3]); ok {
			t.Errorf("%s: resolves to %s, want a miss", name, ids(got))
		}
	}
}

// sizeCache records the size of every entry written.
type sizeCache struct {
	dropCache
	puts []int
}

func (c *sizeCache) Put(k plumbing.Hash, v []byte) {
	c.puts = append(c.puts, len(v))
	c.dropCache.Put(k, v)
}

// TestWritesDoNotGrowWithN: with a warm cache, a push of one event to a
// queue of many entries reads only that event's object and writes only
// small entries, and so does a push to one pull request among many open
// ones (docs/scale.md, "Writes"). Counted, not timed.
func TestWritesDoNotGrowWithN(t *testing.T) {
	w := newWorld(t, rulesNoQueue)
	const qID = "01900000-0000-7000-8000-0000000000a1"
	qRef := hubrefs.QueueRefPrefix + qID
	w.event(qRef, "queuer", hubrefs.QueueOpened{Base: w.base(hubrefs.TypeQueueOpened), ID: qID, Target: main})
	var ps []*prq
	for i := 0; i < 150; i++ {
		p := w.open(w.commit(w.c0, "f", fmt.Sprint(i)))
		ps = append(ps, p)
		w.event(qRef, "queuer", hubrefs.QueueEntered{Base: w.base(hubrefs.TypeQueueEntered), PR: p.id, Head: p.head.String(), BaseRef: main})
	}
	c := &sizeCache{dropCache: dropCache{m: map[plumbing.Hash][]byte{}}}
	// Warm: a landing builds the open index; one queue push (judged the
	// whole way) leaves the summary.
	lazyJudge(t, w, c, up(main, w.c0, ps[0].head))
	push := func(ref, who string, payload any) (*counting, plumbing.Hash) {
		t.Helper()
		old := w.refs[ref]
		ev := w.eventOn([]plumbing.Hash{old}, who, payload)
		o := &counting{Objects: GoGitObjects(w.store), n: map[plumbing.Hash]int{}}
		c.puts = nil
		v := Judge(Input{Objects: o, Refs: w.refs, Updates: []Update{up(ref, old, ev)}, Cache: c})
		if !v[0].Accepted() {
			t.Fatalf("%+v", v[0])
		}
		w.refs[ref] = ev
		return o, ev
	}
	left := func(p *prq) hubrefs.QueueLeft {
		return hubrefs.QueueLeft{Base: w.base(hubrefs.TypeQueueLeft), PR: p.id, Head: p.head.String(), Reason: "withdrawn"}
	}
	push(qRef, "queuer", left(ps[1]))
	whole := len(c.m[w.refs[qRef]])
	for i := 2; i < 6; i++ {
		o, ev := push(qRef, "queuer", left(ps[i]))
		if len(o.n) != 1 || o.n[ev] == 0 {
			t.Fatalf("queue push %d read objects %v, want only the new event %s", i, o.n, ev)
		}
		for _, n := range c.puts {
			if n > 2048 {
				t.Fatalf("queue push %d wrote an entry of %d bytes (the whole log is %d)", i, n, whole)
			}
		}
	}
	for i := 0; i < 4; i++ {
		_, _ = push(ps[10+i].ref, "bob", hubrefs.Review{Base: w.base(hubrefs.TypeReviewSubmit), Head: ps[10+i].head.String(), BaseRef: main, Verdict: "approve"})
		for _, n := range c.puts {
			if n > 2048 {
				t.Fatalf("pull request push %d wrote an entry of %d bytes", i, n)
			}
		}
		if len(c.puts) == 0 {
			t.Fatalf("pull request push %d wrote nothing: no patch of the open index", i)
		}
	}
}
