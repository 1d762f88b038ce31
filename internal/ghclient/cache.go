package ghclient

import (
	"bytes"
	"container/list"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
)

// etagCache is a bounded LRU of 200 responses that carried an ETag, keyed by
// identity, Accept and URL. It is bounded both in entries and in bytes; a
// response larger than a quarter of the byte budget is not kept.
type etagCache struct {
	mu         sync.Mutex
	maxEntries int
	maxBytes   int64
	bytes      int64
	ll         *list.List // front: most recently used
	items      map[string]*list.Element
}

type cacheEntry struct {
	key    string
	etag   string
	header http.Header
	body   []byte
}

func (e *cacheEntry) size() int64 { return int64(len(e.key) + len(e.etag) + len(e.body) + 512) }

func newETagCache(maxEntries int, maxBytes int64) *etagCache {
	return &etagCache{maxEntries: maxEntries, maxBytes: maxBytes, ll: list.New(), items: map[string]*list.Element{}}
}

func (c *etagCache) get(key string) (*cacheEntry, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.items[key]
	if !ok {
		return nil, false
	}
	c.ll.MoveToFront(el)
	return el.Value.(*cacheEntry), true
}

func (c *etagCache) put(e *cacheEntry) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.items[e.key]; ok {
		c.removeElement(el)
	}
	if e.size() > c.maxBytes/4 {
		return
	}
	c.items[e.key] = c.ll.PushFront(e)
	c.bytes += e.size()
	for c.ll.Len() > c.maxEntries || c.bytes > c.maxBytes {
		c.removeElement(c.ll.Back())
	}
}

func (c *etagCache) remove(key string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.items[key]; ok {
		c.removeElement(el)
	}
}

func (c *etagCache) removeElement(el *list.Element) {
	e := el.Value.(*cacheEntry)
	c.ll.Remove(el)
	delete(c.items, e.key)
	c.bytes -= e.size()
}

func (c *etagCache) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.ll.Len()
}

// response rebuilds the cached 200 for req. The rate-limit and date headers
// come from the 304 that revalidated it, everything else from the cache.
func (e *cacheEntry) response(req *http.Request, fresh http.Header) *http.Response {
	h := e.header.Clone()
	for k, v := range fresh {
		if strings.HasPrefix(strings.ToLower(k), "x-ratelimit-") || k == "Date" || k == "X-Github-Request-Id" {
			h[k] = append([]string(nil), v...)
		}
	}
	if fresh.Get("X-RateLimit-Remaining") == "0" {
		h.Del("X-RateLimit-Reset") // as the retry layer does: the gate owns the wait
	}
	h.Set("Content-Length", strconv.Itoa(len(e.body)))
	return &http.Response{
		Status:        "200 OK",
		StatusCode:    http.StatusOK,
		Proto:         "HTTP/1.1",
		ProtoMajor:    1,
		ProtoMinor:    1,
		Header:        h,
		Body:          io.NopCloser(bytes.NewReader(e.body)),
		ContentLength: int64(len(e.body)),
		Request:       req,
	}
}
