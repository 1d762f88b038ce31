package ghclient

import (
	"bytes"
	"compress/flate"
	"container/list"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
)

// etagCache is a bounded LRU of responses that carried an ETag, keyed by
// identity, Accept and URL. It is bounded both in entries and in bytes, the
// bodies counted as kept; a response larger than a quarter of the byte
// budget is not kept. Bodies of deflateFrom bytes or more are kept deflated
// (GitHub's JSON shrinks several times: a page of 100 issue comments
// repeats its URLs), so that the working set of a reconcile pass over a
// busy repository (every page of every pending thread) fits in the default
// budget: with bodies as received it does not, and a later pass of
// bench/reconcile costs 124 charged requests instead of 25.
type etagCache struct {
	mu         sync.Mutex
	maxEntries int
	maxBytes   int64
	bytes      int64
	ll         *list.List // front: most recently used
	items      map[string]*list.Element
}

// cacheEntry is a cached 200. body may share the bytes the transport read:
// neither changes them.
type cacheEntry struct {
	key      string
	etag     string
	header   http.Header
	body     []byte // deflated when deflated is set
	deflated bool
	n        int // the length of the body as GitHub sent it
}

func (e *cacheEntry) size() int64 { return int64(len(e.key) + len(e.etag) + len(e.body) + 512) }

// deflateFrom is the size from which a cached body is kept deflated.
const deflateFrom = 2048

// deflaters is a free-list of compressors: a flate.Writer is several
// hundred kilobytes, and a sync.Pool empties at every collection.
var deflaters = make(chan *flate.Writer, 4)

// newCacheEntry keeps body, deflated when that saves room
// (FuzzCacheEntryRoundTrip: it comes back byte for byte).
func newCacheEntry(key, etag string, header http.Header, body []byte) *cacheEntry {
	e := &cacheEntry{key: key, etag: etag, header: header, body: body, n: len(body)}
	if len(body) < deflateFrom {
		return e
	}
	var w *flate.Writer
	select {
	case w = <-deflaters:
	default:
		w, _ = flate.NewWriter(nil, flate.BestSpeed) // a valid level: never fails
	}
	var buf bytes.Buffer
	w.Reset(&buf)
	if _, err := w.Write(body); err == nil && w.Close() == nil && buf.Len() < len(body) {
		e.body, e.deflated = bytes.Clone(buf.Bytes()), true
	}
	select {
	case deflaters <- w:
	default:
	}
	return e
}

// plain is the entry's body as GitHub sent it.
func (e *cacheEntry) plain() ([]byte, error) {
	if !e.deflated {
		return e.body, nil
	}
	out := make([]byte, e.n)
	_, err := io.ReadFull(flate.NewReader(bytes.NewReader(e.body)), out)
	return out, err
}

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

// response rebuilds the cached 200 for req. The rate-limit and date headers
// come from the 304 that revalidated it, everything else from the cache.
// revalidatedHeader marks an answer rebuilt from the cache after a 304 that
// carried no Link of its own, for paginate: the stored Link may be from
// before a page was added after this one.
const revalidatedHeader = "X-Phasegate-Revalidated"

func (e *cacheEntry) response(req *http.Request, fresh http.Header) (*http.Response, error) {
	body, err := e.plain()
	if err != nil {
		return nil, fmt.Errorf("reading the cached answer to %s: %w", req.URL.Path, err)
	}
	h := e.header.Clone()
	for k, v := range fresh {
		// The 304's own headers freshen the stored ones (RFC 9111 4.3.4):
		// its Link, when it has one, says how many pages there are now.
		if strings.HasPrefix(strings.ToLower(k), "x-ratelimit-") || k == "Date" || k == "X-Github-Request-Id" || k == "Link" {
			h[k] = append([]string(nil), v...)
		}
	}
	if fresh.Get("Link") == "" {
		h.Set(revalidatedHeader, "1") // the Link is the stored one: it may be stale
	}
	if fresh.Get("X-RateLimit-Remaining") == "0" {
		h.Del("X-RateLimit-Reset") // as the retry layer does: the gate owns the wait
	}
	h.Set("Content-Length", strconv.Itoa(len(body)))
	return &http.Response{
		Status:        "200 OK",
		StatusCode:    http.StatusOK,
		Proto:         "HTTP/1.1",
		ProtoMajor:    1,
		ProtoMinor:    1,
		Header:        h,
		Body:          io.NopCloser(bytes.NewReader(body)),
		ContentLength: int64(len(body)),
		Request:       req,
	}, nil
}
