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

// etagCache is a bounded LRU of 200 responses that carried an ETag, keyed by
// identity, Accept and URL. It is bounded both in entries and in bytes; a
// response larger than a quarter of the byte budget is not kept. Once the
// cache holds an eighth of its byte budget (plainBudget), bodies of
// compressBodies bytes or more are kept deflated (GitHub's JSON shrinks
// several times: a page of 100 issue comments repeats its URLs), and the
// byte budget counts what is kept: the working set of a reconcile pass over
// a busy repository (every page of every pending thread, for the threads
// that change next) fits in the default budget. Below that, bodies are kept
// as received: a short-lived client (the action's run, a CLI command) reads
// a few hundred kilobytes and would spend its compression for nothing.
type etagCache struct {
	mu         sync.Mutex
	maxEntries int
	maxBytes   int64
	bytes      int64
	ll         *list.List // front: most recently used
	items      map[string]*list.Element
}

type cacheEntry struct {
	key      string
	etag     string
	header   http.Header
	body     []byte // deflated when deflated is set
	deflated bool
	n        int // the length of the body as GitHub sent it
}

// compressBodies is the size from which a cached body is kept deflated.
const compressBodies = 2048

// plainBudget is the share of the byte budget (its 1/plainBudget) the cache
// fills with bodies as received before it deflates them.
const plainBudget = 8

func (e *cacheEntry) size() int64 { return int64(len(e.key) + len(e.etag) + len(e.body) + 512) }

// The compressors and decompressors of cached bodies, kept in small
// free-lists: a flate.Writer is several hundred kilobytes (its window and
// hash tables), a reader tens, and a sync.Pool empties at every collection
// (and drops a share of what is put back under the race detector), so
// every cached page would allocate them again. A free-list holds at most
// flaters of each: a busy client keeps that much, an idle one no more.
const flaters = 4

// deflater is a compressor with the buffer it writes to.
type deflater struct {
	w   *flate.Writer
	buf bytes.Buffer
}

var (
	deflaters = make(chan *deflater, flaters)
	inflaters = make(chan io.ReadCloser, flaters)
)

// maxScratch is the largest buffer a deflater keeps between uses.
const maxScratch = 1 << 20

func getDeflater() *deflater {
	select {
	case d := <-deflaters:
		return d
	default:
		w, _ := flate.NewWriter(nil, flate.BestSpeed) // a valid level: never fails
		return &deflater{w: w}
	}
}

func putDeflater(d *deflater) {
	if d.buf.Cap() > maxScratch {
		d.buf = bytes.Buffer{}
	}
	select {
	case deflaters <- d:
	default:
	}
}

func getInflater(r io.Reader) io.ReadCloser {
	select {
	case f := <-inflaters:
		if f.(flate.Resetter).Reset(r, nil) == nil {
			return f
		}
	default:
	}
	return flate.NewReader(r)
}

func putInflater(f io.ReadCloser) {
	select {
	case inflaters <- f:
	default:
	}
}

// newCacheEntry keeps body, deflated when that pays. The entry may share
// body's bytes: neither changes them.
func newCacheEntry(key, etag string, header http.Header, body []byte) *cacheEntry {
	e := &cacheEntry{key: key, etag: etag, header: header, body: body, n: len(body)}
	if len(body) < compressBodies {
		return e
	}
	d := getDeflater()
	defer putDeflater(d)
	d.buf.Reset()
	d.w.Reset(&d.buf)
	if _, err := d.w.Write(body); err != nil || d.w.Close() != nil || d.buf.Len() >= len(body) {
		return e
	}
	e.body, e.deflated = bytes.Clone(d.buf.Bytes()), true
	return e
}

// plain is the entry's body as GitHub sent it.
func (e *cacheEntry) plain() ([]byte, error) {
	if !e.deflated {
		return e.body, nil
	}
	r := getInflater(bytes.NewReader(e.body))
	defer putInflater(r)
	out := make([]byte, e.n)
	if _, err := io.ReadFull(r, out); err != nil {
		return nil, err
	}
	return out, nil
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

// entry is the cache entry of a response: its body deflated when that
// pays and the cache holds 1/plainBudget of its byte budget or more.
func (c *etagCache) entry(key, etag string, header http.Header, body []byte) *cacheEntry {
	c.mu.Lock()
	pressed := c.bytes+int64(len(body)) >= c.maxBytes/plainBudget
	c.mu.Unlock()
	if !pressed {
		return &cacheEntry{key: key, etag: etag, header: header, body: body, n: len(body)}
	}
	return newCacheEntry(key, etag, header, body)
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
