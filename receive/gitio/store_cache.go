package gitio

import (
	"container/list"
	"sync"

	"github.com/go-git/go-git/v5/plumbing"
)

// defaultCacheBytes bounds the object cache (delta bases and recently read
// packed objects). git's own delta base cache defaults to 96 MiB; a hook
// reads far less.
const defaultCacheBytes = 48 << 20

type cacheKey struct {
	p   *pack
	off int64
}

type cacheEntry struct {
	key  cacheKey
	typ  plumbing.ObjectType
	data []byte
}

// objectCache is an LRU of inflated packed objects bounded by total bytes.
// Entries are shared: callers must not modify the returned slices.
type objectCache struct {
	mu    sync.Mutex
	max   int
	used  int
	order *list.List // front = most recent
	items map[cacheKey]*list.Element
}

func newObjectCache(max int) *objectCache {
	return &objectCache{max: max, order: list.New(), items: make(map[cacheKey]*list.Element)}
}

func (c *objectCache) get(p *pack, off int64) (plumbing.ObjectType, []byte, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.items[cacheKey{p, off}]
	if !ok {
		return 0, nil, false
	}
	c.order.MoveToFront(e)
	ce := e.Value.(*cacheEntry)
	return ce.typ, ce.data, true
}

func (c *objectCache) put(p *pack, off int64, typ plumbing.ObjectType, data []byte) {
	size := len(data) + 64
	if size > c.max/8 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	k := cacheKey{p, off}
	if e, ok := c.items[k]; ok {
		c.order.MoveToFront(e)
		return
	}
	c.items[k] = c.order.PushFront(&cacheEntry{key: k, typ: typ, data: data})
	c.used += size
	for c.used > c.max {
		e := c.order.Back()
		ce := e.Value.(*cacheEntry)
		c.order.Remove(e)
		delete(c.items, ce.key)
		c.used -= len(ce.data) + 64
	}
}
