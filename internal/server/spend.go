package server

import (
	"sync"
	"time"

	"github.com/phasegate/phasegate/internal/decide"
	"github.com/phasegate/phasegate/internal/ghclient"
)

// defaultHourlyLimit is an installation's primary rate limit before GitHub
// said what it is (the least an installation on github.com gets).
const defaultHourlyLimit = 5000

// cutBudget is the reason of a pass stopped by --reconcile-budget-share.
const cutBudget = "budget"

// rateSource is what a reconcile budget reads of an installation's client
// (*ghclient.Client).
type rateSource interface {
	Stats() ghclient.Stats
	RateLimit() (ghclient.Rate, bool)
	Blocked() (until time.Time, secondary bool, blocked bool)
}

// spendLog remembers, per installation, the rate limit each reconcile pass
// spent, for a rolling hour. Safe for concurrent use.
type spendLog struct {
	mu     sync.Mutex
	byInst map[int64][]spent
}

type spent struct {
	at time.Time
	n  int64
}

// lastHour is what installation's passes spent in the hour before now.
func (l *spendLog) lastHour(installation int64, now time.Time) int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	var total int64
	kept := l.byInst[installation][:0]
	for _, s := range l.byInst[installation] {
		if now.Sub(s.at) < time.Hour {
			kept = append(kept, s)
			total += s.n
		}
	}
	if len(kept) == 0 {
		delete(l.byInst, installation)
	} else {
		l.byInst[installation] = kept
	}
	return total
}

func (l *spendLog) add(installation int64, at time.Time, n int64) {
	if n <= 0 {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.byInst == nil {
		l.byInst = map[int64][]spent{}
	}
	l.byInst[installation] = append(l.byInst[installation], spent{at: at, n: n})
}

// passBudget is one installation's budget for one reconcile pass
// (decide.Budget): the share of its hourly limit the passes of the last
// hour have not spent yet, the primary rate limit left, and no secondary
// limit holding the client back (one the client waited out, within its
// MaxRateLimitWait, does not stop the pass; one it could not wait out fails
// the request, and decide stops the pass on that). What the pass spent is read from the client's
// counter of requests that cost rate limit, so webhook work on the same
// installation during the pass counts too: the budget errs on the side of
// spending less.
type passBudget struct {
	gh           rateSource
	now          func() time.Time
	start        ghclient.Stats
	allowed      int64 // requests that cost rate limit this pass may make
	minRemaining int
}

func newPassBudget(gh rateSource, log *spendLog, installation int64, share float64, minRemaining int, now func() time.Time) *passBudget {
	limit := defaultHourlyLimit
	if r, ok := gh.RateLimit(); ok && r.Limit > 0 {
		limit = r.Limit
	}
	allowed := int64(share*float64(limit)) - log.lastHour(installation, now())
	return &passBudget{gh: gh, now: now, start: gh.Stats(), allowed: allowed, minRemaining: minRemaining}
}

// Spent is what the pass spent so far: requests that cost rate limit.
func (b *passBudget) Spent() int64 { return b.gh.Stats().Charged - b.start.Charged }

// Allow implements decide.Budget.
func (b *passBudget) Allow(essential bool) (string, bool) {
	st := b.gh.Stats()
	if _, secondary, blocked := b.gh.Blocked(); blocked {
		if secondary {
			return decide.CutSecondaryLimit, false
		}
		return decide.CutRateLimit, false
	}
	if r, ok := b.gh.RateLimit(); ok && r.Remaining < b.minRemaining && b.now().Before(r.Reset) {
		return decide.CutRateLimit, false
	}
	if !essential && st.Charged-b.start.Charged >= b.allowed {
		return cutBudget, false
	}
	return "", true
}
