package server

import (
	"context"
	"fmt"
	"log/slog"
	"runtime/debug"
	"strconv"
	"time"

	"github.com/phasegate/phasegate/internal/decide"
	"github.com/phasegate/phasegate/internal/ghclient"
)

// maxRedeliveriesPerPass bounds the redeliveries one reconcile pass asks
// for, so that a long outage does not end in a stampede.
const maxRedeliveriesPerPass = 100

// reconcileLoop runs a reconcile pass once the server is ready, then every
// ReconcileEvery, until ctx ends.
func (s *Server) reconcileLoop(ctx context.Context) {
	if !s.waitReady(ctx) {
		return
	}
	t := time.NewTicker(s.cfg.ReconcileEvery)
	defer t.Stop()
	for {
		if s.claimPass(ctx) {
			s.reconcileOnce(ctx)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// claimPass reports whether this replica runs the reconcile pass of the
// current period. Periods are aligned to multiples of ReconcileEvery, and
// the first replica to record the period's key in the shared seen set
// (Redis: one SET NX) runs it; the others skip it, so N replicas spend the
// rate limit of one. Alone, with the in-memory set, a replica claims every
// period. When the set cannot be asked (Redis down), the pass is skipped:
// no issue lock could be taken anyway.
func (s *Server) claimPass(ctx context.Context) bool {
	every := s.cfg.ReconcileEvery
	slot := s.cfg.Now().Truncate(every)
	key := "reconcile-pass:" + every.String() + ":" + strconv.FormatInt(slot.UnixMilli(), 10)
	cctx, cancel := context.WithTimeout(ctx, seenTimeout)
	taken, err := s.cfg.Seen.SeenBefore(cctx, key)
	cancel()
	switch {
	case err != nil:
		s.metrics.passSkips.WithLabelValues("store_unavailable").Inc()
		s.log.Warn("reconcile: pass skipped: the shared store cannot be asked whether another replica runs it", "error", err)
		return false
	case taken:
		s.metrics.passSkips.WithLabelValues("other_replica").Inc()
		s.log.Debug("reconcile: pass skipped: another replica runs this period's", "period", slot)
		return false
	}
	return true
}

// reconcileOnce re-folds every pending issue of every repository of every
// installation (docs/security.md), skipping installations whose rate limit runs
// low, then redelivers the App's recent failed deliveries.
func (s *Server) reconcileOnce(ctx context.Context) {
	start := time.Now()
	log := s.log.With("reconcile", true)
	failed := false
	defer func() {
		if r := recover(); r != nil {
			s.metrics.panics.Inc()
			s.metrics.reconcileRuns.WithLabelValues("panic").Inc()
			log.Error("panic in a reconcile pass: recovered (the next pass retries)", "panic", fmt.Sprint(r), "stack", string(debug.Stack()))
		}
	}()
	installs, err := s.appGH.ListInstallations(ctx)
	if err != nil {
		failed = true
		log.Error("reconcile: listing the App's installations failed", "error", err)
	}
	repos, resolutions := 0, 0
	for _, in := range installs {
		if ctx.Err() != nil {
			break
		}
		ilog := log.With("installation", in.ID, "account", in.Account)
		if in.Suspended {
			ilog.Debug("reconcile: installation suspended: skipped")
			continue
		}
		gh, err := s.client(in.ID)
		if err != nil {
			failed = true
			ilog.Error("reconcile: no client for the installation", "error", err)
			continue
		}
		if s.rateLow(gh, ilog, "before it") {
			continue
		}
		list, err := gh.InstallationRepos(ctx)
		if err != nil {
			failed = true
			ilog.Error("reconcile: listing the installation's repositories failed", "error", err)
			continue
		}
		for _, r := range list {
			if r.Archived || r.Disabled {
				continue
			}
			if ctx.Err() != nil || s.rateLow(gh, ilog, "in the middle of it") {
				break
			}
			n, ok := s.reconcileRepo(ctx, gh, in.ID, r.Owner, r.Name, ilog)
			repos++
			resolutions += n
			failed = failed || !ok
		}
	}
	if ctx.Err() == nil {
		if !s.redeliverFailed(ctx, log) {
			failed = true
		}
	}
	result := "ok"
	if failed {
		result = "error"
	}
	s.metrics.reconcileRuns.WithLabelValues(result).Inc()
	log.Info("reconcile pass done", "installations", len(installs), "repositories", repos, "resolutions", resolutions,
		"result", result, "took", time.Since(start).String())
}

// reconcileRepo reconciles one repository's pending issues and checks its
// open pull requests' heads that have no phasegate/contracts yet. It
// returns the resolutions it applied and whether all went well.
func (s *Server) reconcileRepo(ctx context.Context, gh *ghclient.Client, installation int64, owner, name string, ilog *slog.Logger) (int, bool) {
	rlog := ilog.With("repository", owner+"/"+name)
	ok := true
	res, err := s.decider(rlog).ReconcileRepo(ctx, gh, owner, name)
	if err != nil {
		rlog.Error("reconcile: the repository could not be reconciled", "error", err)
		return res.Resolutions, false
	}
	if res != (decide.Result{}) {
		logResult(rlog, "reconcile: applied what was missing", res)
	}
	if n, err := s.recheckHeads(ctx, gh, installation, owner, name, rlog); err != nil {
		ok = false
		rlog.Error("reconcile: a pull request's head could not be checked", "error", err)
	} else if n > 0 {
		rlog.Info("reconcile: checked heads that had no phasegate/contracts", "checked", n)
	}
	return res.Resolutions, ok
}

// rateLow reports (and logs, and counts) an installation whose primary
// rate limit, as GitHub last reported it, is below MinRateRemaining.
func (s *Server) rateLow(gh *ghclient.Client, log *slog.Logger, when string) bool {
	r, ok := gh.RateLimit()
	if !ok || r.Remaining >= s.cfg.MinRateRemaining || !s.cfg.Now().Before(r.Reset) {
		return false
	}
	s.metrics.reconcileSkips.Inc()
	log.Warn("reconcile: installation skipped "+when+": its rate limit runs low", "remaining", r.Remaining,
		"limit", r.Limit, "min_remaining", s.cfg.MinRateRemaining, "reset", r.Reset.UTC().Format(time.RFC3339))
	return true
}

// redeliverFailed asks GitHub to redeliver each delivery of the last
// RedeliverWindow that failed (status not OK) and has not been redelivered
// yet. A redelivery keeps its GUID, so a replica that did get it drops it as
// a duplicate. It returns false when GitHub could not be asked.
func (s *Server) redeliverFailed(ctx context.Context, log *slog.Logger) bool {
	now := s.cfg.Now()
	since := now.Add(-s.cfg.RedeliverWindow)
	for guid, at := range s.redelivered {
		if at.Before(since) {
			delete(s.redelivered, guid)
		}
	}
	list, err := s.appGH.ListHookDeliveries(ctx, since)
	if err != nil {
		log.Error("reconcile: listing the App's webhook deliveries failed", "error", err)
		return false
	}
	type attempts struct {
		ok, redelivered bool
		latest          ghclient.HookDelivery
	}
	byGUID := map[string]*attempts{}
	var order []string
	for _, d := range list { // newest first
		a, seen := byGUID[d.GUID]
		if !seen {
			a = &attempts{latest: d}
			byGUID[d.GUID] = a
			order = append(order, d.GUID)
		}
		a.ok = a.ok || d.OK()
		a.redelivered = a.redelivered || d.Redelivery
	}
	ok, sent := true, 0
	for _, guid := range order {
		a := byGUID[guid]
		if _, done := s.redelivered[guid]; a.ok || a.redelivered || done || guid == "" {
			continue
		}
		if sent >= maxRedeliveriesPerPass {
			log.Info("reconcile: more failed deliveries than one pass redelivers: the rest next time")
			break
		}
		d := a.latest
		if err := s.appGH.RedeliverHookDelivery(ctx, d.ID); err != nil {
			ok = false
			s.metrics.redeliveries.WithLabelValues("error").Inc()
			log.Error("reconcile: redelivery failed", "delivery", guid, "event", d.Event, "error", err)
			continue
		}
		sent++
		s.redelivered[guid] = now
		s.metrics.redeliveries.WithLabelValues("ok").Inc()
		log.Info("reconcile: redelivered a failed delivery", "delivery", guid, "event", d.Event, "action", d.Action,
			"installation", d.InstallationID, "status", d.Status, "status_code", strconv.Itoa(d.StatusCode))
	}
	return ok
}
