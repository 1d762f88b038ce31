package ghclient

import (
	"bytes"
	"crypto/rand"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
)

// TestCacheEntryDeflates: a large body is kept deflated and comes back
// byte for byte; a small or incompressible one is kept as it is.
func TestCacheEntryDeflates(t *testing.T) {
	noise := make([]byte, 8192)
	if _, err := rand.Read(noise); err != nil {
		t.Fatal(err)
	}
	page := []byte("[" + strings.Repeat(`{"url":"https://api.github.com/repos/acme/shop/issues/comments/1","body":"looks good"},`, 100) + "{}]")
	tests := []struct {
		name         string
		body         []byte
		wantDeflated bool
	}{
		{name: "small", body: []byte(`{"ok":true}`)},
		{name: "a page of comments", body: page, wantDeflated: true},
		{name: "incompressible", body: noise},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newCacheEntry("k", `W/"e"`, http.Header{}, tt.body)
			if e.deflated != tt.wantDeflated {
				t.Fatalf("deflated = %v, want %v", e.deflated, tt.wantDeflated)
			}
			if tt.wantDeflated && len(e.body)*4 > len(tt.body) {
				t.Errorf("kept %d bytes of %d", len(e.body), len(tt.body))
			}
			req, _ := http.NewRequest(http.MethodGet, "https://api.github.com/x", nil)
			resp, err := e.response(req, http.Header{"X-Ratelimit-Remaining": {"10"}})
			if err != nil {
				t.Fatal(err)
			}
			var got bytes.Buffer
			if _, err := got.ReadFrom(resp.Body); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got.Bytes(), tt.body) || resp.ContentLength != int64(len(tt.body)) {
				t.Fatalf("the cached body came back changed (%d bytes, want %d)", got.Len(), len(tt.body))
			}
		})
	}
}

// TestCacheDeflatesUnderPressure: a cache keeps bodies as received until
// it holds 1/plainBudget of its byte budget, and deflates them from then
// on, so that a short-lived client never compresses and a full one keeps
// its working set small.
func TestCacheDeflatesUnderPressure(t *testing.T) {
	page := []byte("[" + strings.Repeat(`{"url":"https://api.github.com/repos/acme/shop/issues/comments/1","body":"looks good"},`, 100) + "{}]")
	c := newETagCache(1000, int64(plainBudget*4*len(page)))
	var kept []bool
	for i := range 6 {
		e := c.entry(fmt.Sprint("k", i), `W/"e"`, http.Header{}, page)
		kept = append(kept, e.deflated)
		c.put(e)
		b, err := e.plain()
		if err != nil || !bytes.Equal(b, page) {
			t.Fatalf("entry %d came back changed (%v)", i, err)
		}
	}
	// three pages are under an eighth of the budget; the fourth reaches it
	if want := []bool{false, false, false, true, true, true}; !slices.Equal(kept, want) {
		t.Fatalf("deflated %v, want %v", kept, want)
	}
}

// TestFlatersAreReused: the compressors and decompressors of cached bodies
// come back from their free-lists, reset: bodies deflated and inflated one
// after another, and at once, each come back byte for byte, and the
// free-lists hold no more than flaters of each.
func TestFlatersAreReused(t *testing.T) {
	pages := make([][]byte, 3*flaters)
	for i := range pages {
		pages[i] = []byte("[" + strings.Repeat(fmt.Sprintf(`{"id":%d,"body":"comment %d"},`, i, i), 100+i*40) + "{}]")
	}
	roundTrip := func(t *testing.T, body []byte) {
		e := newCacheEntry("k", `W/"e"`, http.Header{}, body)
		if !e.deflated {
			t.Errorf("a page of %d bytes was not deflated", len(body))
		}
		got, err := e.plain()
		if err != nil || !bytes.Equal(got, body) {
			t.Errorf("the cached body came back changed (%d bytes, want %d): %v", len(got), len(body), err)
		}
	}
	t.Run("one after another", func(t *testing.T) {
		for _, p := range pages {
			roundTrip(t, p)
		}
		d := getDeflater()
		putDeflater(d)
		var kept []*deflater
		for len(deflaters) > 0 {
			kept = append(kept, <-deflaters)
		}
		if !slices.Contains(kept, d) {
			t.Error("a deflater put back is not on the free-list")
		}
		for _, k := range kept {
			putDeflater(k)
		}
	})
	t.Run("at once", func(t *testing.T) {
		var wg sync.WaitGroup
		for _, p := range pages {
			wg.Go(func() { roundTrip(t, p) })
		}
		wg.Wait()
		if len(deflaters) > flaters || len(inflaters) > flaters {
			t.Errorf("free-lists hold %d deflaters and %d inflaters, want at most %d", len(deflaters), len(inflaters), flaters)
		}
	})
}

// TestReadBody: an answer's body is read whole into a buffer of its
// announced length, whatever that length says, and never past the limit.
func TestReadBody(t *testing.T) {
	body := bytes.Repeat([]byte("0123456789"), 1000)
	tests := []struct {
		name   string
		length int64
		limit  int64
		want   int // bytes read
	}{
		{name: "announced", length: 10000, limit: 1 << 20, want: 10000},
		{name: "unknown length", length: -1, limit: 1 << 20, want: 10000},
		{name: "announced too short", length: 10, limit: 1 << 20, want: 10000},
		{name: "announced too long", length: 50000, limit: 1 << 20, want: 10000},
		{name: "over the limit", length: 10000, limit: 100, want: 101},
		{name: "over the limit, unknown length", length: -1, limit: 100, want: 101},
		{name: "announced at the limit, longer", length: 100, limit: 100, want: 101},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := readBody(bytes.NewReader(body), tt.length, tt.limit)
			if err != nil || !bytes.Equal(got, body[:tt.want]) {
				t.Fatalf("read %d bytes (%v), want the first %d", len(got), err, tt.want)
			}
		})
	}
}

// TestBodyBytes: the cache takes the retry layer's buffer as it is, and
// reads any other body, leaving it readable from the start.
func TestBodyBytes(t *testing.T) {
	body := []byte(`[{"id":1}]`)
	t.Run("buffered", func(t *testing.T) {
		resp := &http.Response{Body: newBufferedBody(body), ContentLength: int64(len(body))}
		got, err := bodyBytes(resp)
		if err != nil || &got[0] != &body[0] {
			t.Fatalf("got %q (%v), want the buffer itself", got, err)
		}
		rest, _ := io.ReadAll(resp.Body)
		if !bytes.Equal(rest, body) {
			t.Fatalf("the body then reads %q, want %q", rest, body)
		}
	})
	t.Run("streamed", func(t *testing.T) {
		resp := &http.Response{Body: io.NopCloser(bytes.NewReader(body)), ContentLength: -1}
		got, err := bodyBytes(resp)
		if err != nil || !bytes.Equal(got, body) {
			t.Fatalf("got %q (%v), want %q", got, err, body)
		}
		rest, _ := io.ReadAll(resp.Body)
		if !bytes.Equal(rest, body) {
			t.Fatalf("the body then reads %q, want %q", rest, body)
		}
	})
}
