package app

import (
	"context"
	"fmt"
	"sort"
	"sync/atomic"
	"time"

	"github.com/phasegate/phasegate/internal/decide"
	"github.com/phasegate/phasegate/internal/ghfake"
)

// commit is one pull request head the benchmark waits on.
type commit struct {
	repo, sha    string
	pr           int
	installation int64        // the App's installation on repo (0: Installation)
	sentAt       atomic.Int64 // unix ns the delivery was sent (0: not yet)
	// contracts: the phasegate/contracts check run was first seen
	// completed; decisions: phasegate/decisions too (the job's last
	// write). Zero: not yet.
	contracts, decisions time.Time
}

func (c *commit) markSent() { c.sentAt.Store(time.Now().UnixNano()) }

func (c *commit) sent() time.Time { return time.Unix(0, c.sentAt.Load()) }

// completedRun is the newest completed check run named name.
func completedRun(runs []ghfake.CheckRun, name string) (ghfake.CheckRun, bool) {
	for i := len(runs) - 1; i >= 0; i-- {
		if runs[i].Name == name && runs[i].Status == "completed" {
			return runs[i], true
		}
	}
	return ghfake.CheckRun{}, false
}

// watch polls the fake until every commit has its phasegate/contracts
// and phasegate/decisions check runs completed, recording when each was
// first seen; it fails after timeout. The fake is polled every few
// milliseconds (pollInterval): the resolution of every "time to check run".
func watch(ctx context.Context, f *ghfake.Server, commits []*commit, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	t := time.NewTicker(pollInterval(len(commits)))
	defer t.Stop()
	for {
		pending := 0
		for _, c := range commits {
			if !c.decisions.IsZero() {
				continue
			}
			pending++
			if c.sentAt.Load() == 0 {
				continue
			}
			now := time.Now()
			runs := f.CheckRuns(Owner, c.repo, c.sha)
			if _, ok := completedRun(runs, decide.ContextContracts); ok && c.contracts.IsZero() {
				c.contracts = now
			}
			if _, ok := completedRun(runs, decide.ContextDecisions); ok && !c.contracts.IsZero() {
				c.decisions = now
			}
		}
		if pending == 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%d of %d pull requests not checked after %v", pending, len(commits), timeout)
		}
	}
}

// pollInterval is 2 ms for a few commits, 5 ms for many (the polls take
// the fake's lock, which serve's requests need too).
func pollInterval(commits int) time.Duration {
	if commits > 10 {
		return 5 * time.Millisecond
	}
	return 2 * time.Millisecond
}

// Quantile is the q-quantile (nearest rank) of ds; 1 is the maximum.
func Quantile(ds []time.Duration, q float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	i := int(q*float64(len(s))+0.999999) - 1
	return s[min(max(i, 0), len(s)-1)]
}
