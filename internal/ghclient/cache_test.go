package ghclient

import (
	"bytes"
	"crypto/rand"
	"io"
	"net/http"
	"strings"
	"testing"
)

// commentsPage is a page of issue comments as GitHub sends it: it shrinks
// several times deflated.
var commentsPage = []byte("[" + strings.Repeat(`{"url":"https://api.github.com/repos/acme/shop/issues/comments/1","body":"looks good"},`, 100) + "{}]")

// TestCacheEntryDeflates: a large body is kept deflated, a small or
// incompressible one as it is; each comes back byte for byte.
func TestCacheEntryDeflates(t *testing.T) {
	noise := make([]byte, 8192)
	if _, err := rand.Read(noise); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name         string
		body         []byte
		wantDeflated bool
	}{
		{name: "small", body: []byte(`{"ok":true}`)},
		{name: "a page of comments", body: commentsPage, wantDeflated: true},
		{name: "incompressible", body: noise},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := roundTrip(t, tt.body)
			if e.deflated != tt.wantDeflated {
				t.Fatalf("deflated = %v, want %v", e.deflated, tt.wantDeflated)
			}
			if tt.wantDeflated && len(e.body)*4 > len(tt.body) {
				t.Errorf("kept %d bytes of %d", len(e.body), len(tt.body))
			}
		})
	}
}

// roundTrip keeps body in a cache entry and checks that the answer rebuilt
// from it carries body byte for byte, and the entry is no larger than body.
func roundTrip(t *testing.T, body []byte) *cacheEntry {
	t.Helper()
	e := newCacheEntry("k", `W/"e"`, http.Header{}, body)
	if len(e.body) > len(body) {
		t.Fatalf("kept %d bytes for a body of %d", len(e.body), len(body))
	}
	req, _ := http.NewRequest(http.MethodGet, "https://api.github.com/x", nil)
	resp, err := e.response(req, http.Header{"X-Ratelimit-Remaining": {"10"}})
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(resp.Body)
	if err != nil || !bytes.Equal(got, body) || resp.ContentLength != int64(len(body)) {
		t.Fatalf("the cached body came back changed (%d bytes, want %d): %v", len(got), len(body), err)
	}
	return e
}

// FuzzCacheEntryRoundTrip holds the deflated cache to the bodies it was
// given: whatever the bytes, the answer rebuilt from the cache is them.
func FuzzCacheEntryRoundTrip(f *testing.F) {
	f.Add([]byte(`{"ok":true}`), uint8(1))
	f.Add(commentsPage, uint8(1))
	f.Add([]byte("ab"), uint8(255))
	f.Fuzz(func(t *testing.T, unit []byte, times uint8) {
		// Repeating a unit makes bodies past deflateFrom that compress.
		roundTrip(t, bytes.Repeat(unit, int(times)))
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
