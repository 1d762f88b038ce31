package reconcile

import (
	"context"
	"os"
	"strconv"
	"testing"
)

// TestBusyRepoSmoke runs a small busy repository (threads off a page
// boundary) and holds the budget of
// issue 20: requests per later pass ≤ 10 + 2 per changed thread, every lost
// command applied in the pass after it.
func TestBusyRepoSmoke(t *testing.T) {
	res, err := Run(context.Background(), Options{Issues: 30, Comments: 150, Changed: 10, Passes: 2, Log: testWriter{t}})
	if err != nil {
		t.Fatal(err)
	}
	check(t, res)
}

func check(t *testing.T, res Result) {
	t.Helper()
	if !res.LostFound {
		t.Errorf("a lost command was not applied in the pass after it")
	}
	for _, p := range res.Passes[1:] {
		if limit := 10 + 2*p.Changed; p.Charged > limit {
			t.Errorf("pass %d: %d charged requests, want ≤ %d (10 + 2 × %d changed threads); by route %v", p.N, p.Charged, limit, p.Changed, p.ChargedRoute)
		}
	}
	if res.HourlyRate > res.Budget {
		t.Errorf("%d charged requests an hour, over the budget of %d", res.HourlyRate, res.Budget)
	}
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) { w.t.Log(string(p)); return len(p), nil }

// BenchmarkReconcileBusyRepo is issue 20's repository: 200 issues × 300
// comments, 10 threads changed before each later pass.
func BenchmarkReconcileBusyRepo(b *testing.B) {
	for i := 0; i < b.N; i++ {
		o := Options{Log: os.Stderr, Routes: true, Baseline: os.Getenv("RECONBENCH_BASELINE") != ""}
		if v, err := strconv.Atoi(os.Getenv("RECONBENCH_COMMENTS")); err == nil {
			o.Comments = v
		}
		res, err := Run(context.Background(), o)
		if err != nil {
			b.Fatal(err)
		}
		later := res.Passes[1:]
		var req, charged float64
		for _, p := range later {
			req += float64(p.Requests)
			charged += float64(p.Charged)
		}
		b.ReportMetric(req/float64(len(later)), "requests/pass")
		b.ReportMetric(charged/float64(len(later)), "charged/pass")
		b.ReportMetric(float64(res.HourlyRate), "charged/hour")
	}
}
