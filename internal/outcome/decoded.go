package outcome

import (
	"container/list"
	"slices"
	"sync"
)

// The ledger verifies the same outcome comment again on every fold of its
// thread (each command, each reconcile pass that re-reads the thread), and
// most of a verification is decoding the fenced YAML (decodeCanonical: the
// YAML parse, the canonical form check, Parse). That work depends on the
// canonical YAML alone, so VerifyOutcomeComment keeps what it decoded by
// the YAML's ID — looked up only after the YAML is known to hash to it —
// and every other check (the marker, the rendering, the signature) still
// runs on every call.

// maxDecodedBytes bounds the cache by the canonical YAML it holds (a
// decoded value is a few times larger): about a thousand outcomes of a
// usual size, a few dozen of the largest a comment can hold.
const maxDecodedBytes = 2 << 20

// decodedEntry is one canonical YAML that decodeCanonical accepted.
type decodedEntry struct {
	id    string
	size  int
	value any
	o     *Outcome
}

// decodedCache is a least-recently-used cache of decoded canonical YAML by
// ID, safe for concurrent use. Its entries are never handed out: get
// returns copies, so no caller can change what another one reads.
type decodedCache struct {
	mu    sync.Mutex
	max   int
	bytes int
	order *list.List // of *decodedEntry, the most recently used first
	items map[string]*list.Element
}

func newDecodedCache(maxBytes int) *decodedCache {
	return &decodedCache{max: maxBytes, order: list.New(), items: map[string]*list.Element{}}
}

var decoded = newDecodedCache(maxDecodedBytes)

// decodeCanonicalID is decodeCanonical of canonical, whose ID the caller
// has checked is id.
func decodeCanonicalID(canonical []byte, id string) (any, *Outcome, error) {
	if v, o, ok := decoded.get(id); ok {
		return v, o, nil
	}
	v, o, err := decodeCanonical(canonical)
	if err != nil {
		return nil, nil, err
	}
	decoded.put(id, len(canonical), v, o)
	return cloneValue(v), o.clone(), nil
}

// get returns copies of the value and outcome decoded for id.
func (c *decodedCache) get(id string) (any, *Outcome, bool) {
	c.mu.Lock()
	el, ok := c.items[id]
	if ok {
		c.order.MoveToFront(el)
	}
	c.mu.Unlock()
	if !ok {
		return nil, nil, false
	}
	e := el.Value.(*decodedEntry) // immutable once stored
	return cloneValue(e.value), e.o.clone(), true
}

// put stores what was decoded for id (the cache keeps v and o: the caller
// must not hand them out) and evicts the least recently used entries
// beyond the byte budget. YAML larger than the whole budget is not kept.
func (c *decodedCache) put(id string, size int, v any, o *Outcome) {
	if size > c.max {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.items[id]; ok {
		return
	}
	c.items[id] = c.order.PushFront(&decodedEntry{id: id, size: size, value: v, o: o})
	c.bytes += size
	for c.bytes > c.max {
		old := c.order.Back()
		e := old.Value.(*decodedEntry)
		c.order.Remove(old)
		delete(c.items, e.id)
		c.bytes -= e.size
	}
}

// cloneValue copies a decoded value of the JSON data model: its mappings
// and sequences are new, its scalars (immutable) shared.
func cloneValue(v any) any {
	switch v := v.(type) {
	case map[string]any:
		m := make(map[string]any, len(v))
		for k, x := range v {
			m[k] = cloneValue(x)
		}
		return m
	case []any:
		if v == nil {
			return v
		}
		s := make([]any, len(v))
		for i, x := range v {
			s[i] = cloneValue(x)
		}
		return s
	default:
		return v
	}
}

// clone copies an outcome: no slice of the copy shares its backing array
// with o (TestCloneSharesNothing checks every field).
func (o *Outcome) clone() *Outcome {
	c := *o
	c.Produced = slices.Clone(o.Produced)
	c.Findings = slices.Clone(o.Findings)
	c.Decisions = slices.Clone(o.Decisions)
	for i := range c.Decisions {
		c.Decisions[i].Options = slices.Clone(c.Decisions[i].Options)
	}
	return &c
}
