package template

import (
	"sync"
	"unsafe"

	"github.com/pflow-go/pflow/internal/value"
)

// Traversal parses JSON text on the fly (${sh.stdout.items[0]}). A batch that
// indexes into the same large output once per item would parse it again for
// every item, so parses of large strings are remembered. Entries are keyed by
// the string's identity (data pointer and length): Go strings are immutable,
// and the entry keeps its string alive, so a match is always the same text.
const (
	parseCacheMin     = 1 << 10 // smaller strings parse faster than a lookup pays off
	parseCacheEntries = 4
)

type parseEntry struct {
	s  string
	v  any
	ok bool
}

var parseCache struct {
	mu      sync.Mutex
	entries [parseCacheEntries]parseEntry
	next    int
}

// parseContainer is value.TryParseContainer with a small identity cache for
// large strings. The result is shared: callers must not modify it (values in
// the shared store are never modified in place).
func parseContainer(s string) (any, bool) {
	if len(s) < parseCacheMin {
		return value.TryParseContainer(s)
	}
	p := unsafe.StringData(s)
	c := &parseCache
	c.mu.Lock()
	for i := range c.entries {
		e := &c.entries[i]
		if len(e.s) == len(s) && unsafe.StringData(e.s) == p {
			v, ok := e.v, e.ok
			c.mu.Unlock()
			return v, ok
		}
	}
	c.mu.Unlock()
	v, ok := value.TryParseContainer(s)
	c.mu.Lock()
	c.entries[c.next] = parseEntry{s: s, v: v, ok: ok}
	c.next = (c.next + 1) % parseCacheEntries
	c.mu.Unlock()
	return v, ok
}
