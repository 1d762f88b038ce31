package decide

import (
	"context"
	"net/url"
	"testing"
	"time"
)

// TestReconcileListsSinceThePreviousPass: with Watermarks, a repository's
// second pass lists the comments since the first pass started (less the
// skew), not the whole window; without them, always the window.
func TestReconcileListsSinceThePreviousPass(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 3, 13, 5, 0, 0, 0, time.UTC)
	tests := []struct {
		name       string
		watermarks *Watermarks
		wantSecond time.Time
	}{
		{name: "watermarks", watermarks: &Watermarks{}, wantSecond: t0.Add(-WatermarkSkew)},
		{name: "none", wantSecond: t0.Add(time.Hour).Add(-24 * time.Hour)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel() // its own fake GitHub
			w := newWorld(t)
			now := t0
			w.h.Now = func() time.Time { return now }
			w.h.Watermarks = tt.watermarks
			ctx := context.Background()
			if _, err := w.h.ReconcileRepo(ctx, w.gh, owner, repo); err != nil {
				t.Fatal(err)
			}
			now = t0.Add(time.Hour)
			if _, err := w.h.ReconcileRepo(ctx, w.gh, owner, repo); err != nil {
				t.Fatal(err)
			}
			var since []string
			for _, c := range w.fake.Calls() {
				if c.Method == "GET" && c.Path == "/repos/"+owner+"/"+repo+"/issues/comments" {
					q, _ := url.ParseQuery(c.Query)
					since = append(since, q.Get("since"))
				}
			}
			if len(since) != 2 {
				t.Fatalf("%d comment listings, want 2: %v", len(since), since)
			}
			if want := t0.Add(-24 * time.Hour).Format(time.RFC3339); since[0] != want {
				t.Fatalf("first pass since %s, want the window's start %s", since[0], want)
			}
			if want := tt.wantSecond.Format(time.RFC3339); since[1] != want {
				t.Fatalf("second pass since %s, want %s", since[1], want)
			}
		})
	}
}
