package ghclient

import (
	"bytes"
	"crypto/rand"
	"net/http"
	"strings"
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
