package ghclient

import (
	"bytes"
	"crypto/rand"
	"errors"
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

// TestMaxResponseBytes: an answer longer than MaxResponseBytes ends the
// request with an error, after one attempt (a retry would get the same
// answer), and an answer of exactly that length is read whole.
func TestMaxResponseBytes(t *testing.T) {
	tests := []struct {
		name    string
		over    int64 // MaxResponseBytes minus the answer's length
		wantErr bool
	}{
		{name: "one byte over", over: -1, wantErr: true},
		{name: "at the limit", over: 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			size := &sizeRecorder{}
			e := newEnv(t, Options{Transport: size, CacheEntries: -1})
			n := e.fake.AddIssue(owner, repo, "Feature", "", "alice")
			e.fake.AddComment(owner, repo, n, "alice", strings.Repeat("x", 5000))
			if _, err := e.c.ListIssueComments(ctxT(t), owner, repo, n); err != nil || size.n < 5000 {
				t.Fatalf("probe: %d bytes, %v", size.n, err)
			}
			c, err := New(Options{BaseURL: e.fake.URL(), Token: botToken, MaxResponseBytes: size.n + tt.over, CacheEntries: -1,
				Now: e.clock.Now, Sleep: e.clock.Sleep})
			if err != nil {
				t.Fatal(err)
			}
			e.fake.ResetCalls()
			_, err = c.ListIssueComments(ctxT(t), owner, repo, n)
			if gotErr := errors.Is(err, errBodyTooLarge); gotErr != tt.wantErr || (!tt.wantErr && err != nil) {
				t.Fatalf("err = %v, want too large: %v", err, tt.wantErr)
			}
			if calls := len(e.fake.Calls()); calls != 1 {
				t.Fatalf("%d requests, want 1", calls)
			}
		})
	}
}

// sizeRecorder is a base transport that records the length of the last
// answer's body.
type sizeRecorder struct{ n int64 }

func (s *sizeRecorder) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := http.DefaultTransport.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	s.n, resp.Body = int64(len(b)), io.NopCloser(bytes.NewReader(b))
	return resp, err
}
