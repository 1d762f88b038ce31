package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
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
		r, n, ok := s.reconcileInstallation(ctx, in, log)
		repos += r
		resolutions += n
		failed = failed || !ok
	}
	if ctx.Err() == nil && !s.redeliverFailed(ctx, log) {
		failed = true
	}
	result := "ok"
	if failed {
		result = "error"
	}
	s.metrics.reconcileRuns.WithLabelValues(result).Inc()
	log.Info("reconcile pass done", "installations", len(installs), "repositories", repos, "resolutions", resolutions,
		"result", result, "took", time.Since(start).String())
}

// reconcileInstallation reconciles every repository of one installation
// within its budget (--reconcile-budget-share), starting with the one a
// previous pass was cut short in. It returns the repositories reconciled,
// the resolutions applied and whether all went well (a pass cut short by
// its budget is not a failure).
func (s *Server) reconcileInstallation(ctx context.Context, in ghclient.Installation, log *slog.Logger) (repos, resolutions int, ok bool) {
	ilog := log.With("installation", in.ID, "account", in.Account)
	if in.Suspended {
		ilog.Debug("reconcile: installation suspended: skipped")
		return 0, 0, true
	}
	gh, err := s.client(in.ID)
	if err != nil {
		ilog.Error("reconcile: no client for the installation", "error", err)
		return 0, 0, false
	}
	if s.rateLow(gh, ilog, "before it") {
		return 0, 0, true
	}
	list, err := gh.InstallationRepos(ctx)
	if err != nil {
		ilog.Error("reconcile: listing the installation's repositories failed", "error", err)
		return 0, 0, false
	}
	var names []string
	for _, r := range list {
		s.installs.learn(r.Owner, r.Name, in.ID)
		if !r.Archived && !r.Disabled {
			names = append(names, r.Owner+"/"+r.Name)
		}
	}
	names = s.resumeOrder(in.ID, names)
	started := s.cfg.Now()
	budget := newPassBudget(gh, &s.spend, in.ID, s.cfg.ReconcileBudgetShare, s.cfg.MinRateRemaining, s.cfg.Now)
	defer func() { s.spend.add(in.ID, started, budget.Spent()) }()
	ok = true
	s.cursor.Delete(in.ID) // set again if this pass is cut short
	for i, full := range names {
		if ctx.Err() != nil || s.rateLow(gh, ilog, "in the middle of it") {
			break
		}
		if reason, allowed := budget.Allow(true); !allowed { // a repository's listings find its lost commands
			s.cutShort(ilog, in.ID, budget, &decide.CutShortError{Reason: reason}, names[i:])
			break
		}
		owner, name, _ := strings.Cut(full, "/")
		n, repoOK, cut := s.reconcileRepo(ctx, gh, budget, in.ID, owner, name, ilog)
		repos++
		resolutions += n
		ok = ok && repoOK
		if cut != nil {
			s.cutShort(ilog, in.ID, budget, cut, names[i:])
			break
		}
	}
	return repos, resolutions, ok
}

// resumeOrder puts the repository a previous pass of the installation was
// cut short in first, keeping the others' order after it.
func (s *Server) resumeOrder(installation int64, names []string) []string {
	from, ok := s.cursor.Load(installation)
	if !ok {
		return names
	}
	if i := slices.Index(names, from.(string)); i >= 0 {
		return append(slices.Clone(names[i:]), names[:i]...)
	}
	return names
}

// cutShort counts and logs a pass stopped in its budget, naming what it
// skipped: the changed threads of the repository it was in (cut.Deferred)
// and the repositories it did not reach; the next pass starts with them.
func (s *Server) cutShort(log *slog.Logger, installation int64, b *passBudget, cut *decide.CutShortError, left []string) {
	s.cursor.Store(installation, left[0])
	s.metrics.cutShort.WithLabelValues(cut.Reason).Inc()
	s.metrics.threads.WithLabelValues("deferred").Add(float64(len(cut.Deferred)))
	repos := left
	if cut.Repo != "" {
		repos = left[1:]
	}
	args := []any{"reason", cut.Reason, "spent", b.Spent(), "allowed", b.allowed, "share", s.cfg.ReconcileBudgetShare,
		"skipped_repositories", repos}
	if cut.Repo != "" {
		args = append(args, "repository", cut.Owner+"/"+cut.Repo, "skipped_issues", cut.Deferred)
	}
	if cut.Err != nil {
		args = append(args, "error", cut.Err)
	}
	log.Warn("reconcile: pass cut short: the next pass starts with what it skipped", args...)
}

// reconcileRepo reconciles one repository's pending and changed issues and
// checks its open pull requests' heads whose phasegate/contracts does not
// stand for their current input (recheckHeads). It returns the resolutions
// it applied, whether all went well, and the pass's *decide.CutShortError
// when its budget stopped it (the heads are then left for the next pass).
func (s *Server) reconcileRepo(ctx context.Context, gh *ghclient.Client, b decide.Budget, installation int64, owner, name string, ilog *slog.Logger) (int, bool, *decide.CutShortError) {
	rlog := ilog.With("repository", owner+"/"+name)
	res, err := s.decider(rlog, b).ReconcileRepo(ctx, gh, owner, name)
	s.metrics.threads.WithLabelValues("unchanged").Add(float64(res.Unchanged))
	s.metrics.threads.WithLabelValues("reread").Add(float64(res.Reread))
	var cut *decide.CutShortError
	if errors.As(err, &cut) {
		if cut.Owner == "" {
			cut.Owner, cut.Repo = owner, name
		}
		if rest := errors.Join(otherErrors(err, cut)...); rest != nil {
			rlog.Error("reconcile: some threads could not be reconciled; the next pass retries them", "error", rest)
		}
		return res.Resolutions, true, cut
	}
	if err != nil {
		rlog.Error("reconcile: the repository could not be reconciled", "error", err)
		return res.Resolutions, false, nil
	}
	if res.Resolutions+res.Replies+res.Captured+res.Tampered+res.DispatchDenied > 0 {
		logResult(rlog, "reconcile: applied what was missing", res)
	}
	if n, err := s.recheckHeads(ctx, gh, installation, owner, name, rlog); err != nil {
		rlog.Error("reconcile: a pull request's head could not be checked", "error", err)
		return res.Resolutions, false, nil
	} else if n > 0 {
		rlog.Info("reconcile: checked heads whose phasegate/contracts did not stand for their input", "checked", n)
	}
	if err := s.reanswerRepo(ctx, gh, s.decider(rlog, nil), installation, owner, name, rlog); err != nil {
		rlog.Error("reconcile: a waiting deployment could not be answered", "error", err)
		return res.Resolutions, false, nil
	}
	return res.Resolutions, true, nil
}

// otherErrors are the errors joined in err besides cut.
func otherErrors(err error, cut *decide.CutShortError) []error {
	j, ok := err.(interface{ Unwrap() []error })
	if !ok {
		return nil
	}
	return slices.DeleteFunc(slices.Clone(j.Unwrap()), func(e error) bool { return e == error(cut) })
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
	maps.DeleteFunc(s.redelivered, func(_ string, at time.Time) bool { return at.Before(since) })
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
