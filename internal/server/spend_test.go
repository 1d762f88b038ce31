package server

import (
	"testing"
	"time"

	"github.com/phasegate/phasegate/internal/decide"
	"github.com/phasegate/phasegate/internal/ghclient"
)

type fakeRate struct {
	st        ghclient.Stats
	rate      ghclient.Rate
	ok        bool
	until     time.Time
	secondary bool
}

func (f *fakeRate) Blocked() (time.Time, bool, bool) { return f.until, f.secondary, !f.until.IsZero() }

func (f *fakeRate) Stats() ghclient.Stats            { return f.st }
func (f *fakeRate) RateLimit() (ghclient.Rate, bool) { return f.rate, f.ok }

// TestPassBudget: a pass may spend the share of the hourly limit that the
// passes of the last hour left, and stops on a secondary limit or when
// little primary rate limit is left; essential work (the listings, a thread
// with a lost command) is stopped only by the limits, never by the share.
func TestPassBudget(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	tests := []struct {
		name       string
		rate       ghclient.Rate
		known      bool
		before     []spent // earlier passes of the installation
		spend      int64   // charged requests during the pass
		blocked    bool    // the client holds requests back
		secondary  bool    // for a secondary limit
		essential  bool    // a listing, or a thread with a lost command
		wantReason string
	}{
		{name: "within the share", known: true, rate: ghclient.Rate{Limit: 5000, Remaining: 4000, Reset: now.Add(time.Hour)}, spend: 999},
		{name: "the share spent", known: true, rate: ghclient.Rate{Limit: 5000, Remaining: 4000, Reset: now.Add(time.Hour)}, spend: 1000, wantReason: cutBudget},
		{name: "the limit unknown: 5000 assumed", spend: 1000, wantReason: cutBudget},
		{name: "a larger limit, a larger share", known: true, rate: ghclient.Rate{Limit: 15000, Remaining: 14000, Reset: now.Add(time.Hour)}, spend: 2999},
		{name: "earlier passes this hour count", before: []spent{{at: now.Add(-30 * time.Minute), n: 600}}, spend: 400, wantReason: cutBudget},
		{name: "passes over an hour ago do not", before: []spent{{at: now.Add(-61 * time.Minute), n: 900}}, spend: 400},
		{name: "little primary rate limit left", known: true, rate: ghclient.Rate{Limit: 5000, Remaining: 499, Reset: now.Add(time.Minute)}, wantReason: decide.CutRateLimit},
		{name: "little left, but the reset passed", known: true, rate: ghclient.Rate{Limit: 5000, Remaining: 10, Reset: now.Add(-time.Second)}},
		{name: "essential work goes on with the share spent", known: true, rate: ghclient.Rate{Limit: 5000, Remaining: 4000, Reset: now.Add(time.Hour)}, spend: 1000, essential: true},
		{name: "essential work stops when little is left", known: true, rate: ghclient.Rate{Limit: 5000, Remaining: 499, Reset: now.Add(time.Minute)}, essential: true, wantReason: decide.CutRateLimit},
		{name: "essential work stops on a secondary limit", blocked: true, secondary: true, essential: true, wantReason: decide.CutSecondaryLimit},
		{name: "a secondary limit holds requests back", blocked: true, secondary: true, wantReason: decide.CutSecondaryLimit},
		{name: "the primary limit holds requests back", blocked: true, wantReason: decide.CutRateLimit},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := &fakeRate{rate: tt.rate, ok: tt.known, st: ghclient.Stats{Charged: 100, SecondaryLimits: 2}}
			var log spendLog
			for _, s := range tt.before {
				log.add(7, s.at, s.n)
			}
			b := newPassBudget(src, &log, 7, 0.2, 500, clock)
			src.st.Charged += tt.spend
			if tt.blocked {
				src.until, src.secondary = now.Add(time.Minute), tt.secondary
			}
			reason, ok := b.Allow(tt.essential)
			if reason != tt.wantReason || ok != (tt.wantReason == "") {
				t.Fatalf("Allow(%v) = %q, %v; want %q", tt.essential, reason, ok, tt.wantReason)
			}
			if b.Spent() != tt.spend {
				t.Errorf("Spent() = %d, want %d", b.Spent(), tt.spend)
			}
		})
	}
}
