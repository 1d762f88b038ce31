package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/phasegate/phasegate/internal/decide"
	"github.com/phasegate/phasegate/internal/ghclient"
	"github.com/phasegate/phasegate/internal/ledger"
	"github.com/phasegate/phasegate/internal/outcome"
	"github.com/phasegate/phasegate/internal/redisx"
	"github.com/phasegate/phasegate/internal/report"
)

// serve as a custom deployment protection rule (docs/app.md): GitHub asks
// before a workflow job deploys a commit to an environment that lists the
// App, and waits for the answer. serve approves when the commit's gate
// holds, rejects when a decision it needs was resolved negatively or its
// thread is frozen, and otherwise keeps the request (a DeploymentStore)
// and answers it by itself when a decision it waits on is resolved: every
// fold of a thread wakes the requests waiting on its issue (deployWake),
// and each reconcile pass answers its repository's again (reanswerRepo).
// Each answer is computed from state read fresh for the request's commit,
// under the request's lock, and sent once: only the caller that takes the
// request out of the store (Take) answers it.

// DeploymentStore keeps the deployment requests serve has not answered
// yet (Config.Deployments): in memory, or in Redis for every replica.
type DeploymentStore interface {
	// Put records d, or replaces the record of its Key.
	Put(ctx context.Context, d decide.Deployment) error
	// List is every request recorded.
	List(ctx context.Context) ([]decide.Deployment, error)
	// Take removes the request of key and reports whether this call did:
	// of many concurrent calls, exactly one takes it.
	Take(ctx context.Context, key string) (bool, error)
}

// MaxWaitingDeployments bounds the requests a store keeps: a Put beyond it
// fails, and the request is answered by the next reconcile pass that finds
// it waiting through the API.
const MaxWaitingDeployments = 10_000

// MemDeployments is the in-memory DeploymentStore: one process's, lost at
// a restart (the reconcile pass finds the waiting requests again through
// the API).
type MemDeployments struct {
	mu sync.Mutex
	m  map[string]decide.Deployment
}

// NewMemDeployments returns an empty in-memory store.
func NewMemDeployments() *MemDeployments { return &MemDeployments{m: map[string]decide.Deployment{}} }

func (s *MemDeployments) Put(_ context.Context, d decide.Deployment) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.m[d.Key()]; !ok && len(s.m) >= MaxWaitingDeployments {
		return fmt.Errorf("keeping the deployment request %s: %d requests are waiting already", d.Key(), len(s.m))
	}
	s.m[d.Key()] = d
	return nil
}

func (s *MemDeployments) List(context.Context) ([]decide.Deployment, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]decide.Deployment, 0, len(s.m))
	for _, d := range s.m {
		out = append(out, d)
	}
	slices.SortFunc(out, func(a, b decide.Deployment) int { return strings.Compare(a.Key(), b.Key()) })
	return out, nil
}

func (s *MemDeployments) Take(_ context.Context, key string) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.m[key]
	delete(s.m, key)
	return ok, nil
}

// deploymentJob handles a deployment job: a request (its run) is recorded
// before anything is read, then answered; a wake (its issue) answers again
// every recorded request of the repository that waits on the issue.
func (s *Server) deploymentJob(ctx context.Context, gh *ghclient.Client, d Decider, j *job, log *slog.Logger) error {
	if j.RunID > 0 {
		dep := decide.Deployment{Installation: j.Installation, Owner: j.Owner, Repo: j.Repo, RunID: j.RunID, Environment: j.Environment,
			SHA: j.SHA, Ref: j.Ref, Requested: s.cfg.Now().UTC()}
		// Recorded first: a resolution folded from now on wakes it, and
		// one folded before is in what the answer reads.
		if err := s.cfg.Deployments.Put(ctx, dep); err != nil {
			return fmt.Errorf("recording the deployment of run %d to %q: %w", j.RunID, clip(j.Environment), err)
		}
		return s.answerDeployment(ctx, gh, d, dep.Key(), log)
	}
	all, err := s.cfg.Deployments.List(ctx)
	errs := []error{listErr(err)}
	for _, dep := range all {
		if dep.WaitsOn(j.Owner, j.Repo, j.Issue) {
			errs = append(errs, s.answerDeployment(ctx, gh, d, dep.Key(), log))
		}
	}
	return errors.Join(errs...)
}

// answerDeployment answers the recorded request of key, under its lock:
// approved or rejected (taken out of the store first, put back when GitHub
// did not take the answer), or still waiting, with a comment on the run
// when what it waits for changed. A request no longer recorded was
// answered already.
func (s *Server) answerDeployment(ctx context.Context, gh *ghclient.Client, d Decider, key string, log *slog.Logger) error {
	unlock, err := s.cfg.Locker.Lock(ctx, "deployment:"+key)
	if err != nil {
		return fmt.Errorf("locking the deployment request %s: %w", key, err)
	}
	defer unlock()
	dep, ok, err := s.deployment(ctx, key)
	if err != nil || !ok {
		return err
	}
	log = log.With("run", dep.RunID, "environment", clip(dep.Environment), "sha", dep.SHA)
	defer s.pages.Changed(dep.Owner, dep.Repo, 0, "") // the inbox and the repository's issue pages show it
	a, err := s.deploymentAnswer(ctx, gh, d, dep, log)
	if err != nil {
		return err
	}
	if a.Action == ledger.DeployWait {
		return s.keepWaiting(ctx, gh, dep, a, log)
	}
	took, err := s.cfg.Deployments.Take(ctx, key)
	if err != nil || !took {
		return err
	}
	state := ghclient.DeploymentApproved
	if a.Action == ledger.DeployReject {
		state = ghclient.DeploymentRejected
	}
	if err := gh.ReviewDeployment(ctx, dep.Owner, dep.Repo, dep.RunID, dep.Environment, state, deploymentComment(dep, a, s.cfg.PublicURL)); err != nil {
		if s.settled(ctx, gh, dep, err, log) {
			return nil
		}
		if perr := s.cfg.Deployments.Put(ctx, dep); perr != nil {
			log.Error("could not put back a deployment request GitHub did not take the answer of", "error", perr)
		}
		return fmt.Errorf("answering the deployment of run %d to %q: %w", dep.RunID, clip(dep.Environment), err)
	}
	s.metrics.deployments.WithLabelValues(state).Inc()
	log.Info("answered a deployment protection rule", "state", state, "reason", report.Terminal(a.Reason),
		"waited", s.cfg.Now().Sub(dep.Requested).Round(time.Millisecond).String())
	return nil
}

// deployment is the recorded request of key.
func (s *Server) deployment(ctx context.Context, key string) (decide.Deployment, bool, error) {
	all, err := s.cfg.Deployments.List(ctx)
	i := slices.IndexFunc(all, func(d decide.Deployment) bool { return d.Key() == key })
	if i < 0 {
		return decide.Deployment{}, false, listErr(err)
	}
	return all[i], true, nil
}

// listErr is a listing's error: the store failed, or some records did
// not decode (the listing has the others).
func listErr(err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("listing the waiting deployments: %w", err)
}

// deploymentAnswer reads the request's commit fresh and answers it
// (ledger.DeploymentAnswer): the App's own phasegate/contracts of that
// commit, checking it now when it has none, and its decisions.
func (s *Server) deploymentAnswer(ctx context.Context, gh *ghclient.Client, d Decider, dep decide.Deployment, log *slog.Logger) (ledger.DeployAnswer, error) {
	verdict, checked, err := s.contractsOf(ctx, gh, dep.Owner, dep.Repo, dep.SHA)
	if err != nil {
		return ledger.DeployAnswer{}, fmt.Errorf("reading the contracts of %s: %w", outcome.ShortSHA(dep.SHA), err)
	}
	if !checked {
		// Never approved unchecked: checked now, as a push of its ref.
		cj := &job{Kind: kindCheck, Event: "deployment_protection_rule", Delivery: "deployment", Installation: dep.Installation,
			Owner: dep.Owner, Repo: dep.Repo, SHA: dep.SHA, Ref: branchRef(dep.Ref)}
		if err := s.checkCommit(ctx, gh, d, cj, log); err != nil {
			return ledger.DeployAnswer{}, err
		}
		if verdict, checked, err = s.contractsOf(ctx, gh, dep.Owner, dep.Repo, dep.SHA); err != nil {
			return ledger.DeployAnswer{}, fmt.Errorf("reading the contracts of %s: %w", outcome.ShortSHA(dep.SHA), err)
		}
	}
	read, err := d.DeploymentDecisions(ctx, gh, dep.Owner, dep.Repo, dep.SHA)
	if err != nil {
		return ledger.DeployAnswer{}, err
	}
	if read.Invalid != "" {
		return ledger.DeployAnswer{Action: ledger.DeployWait, Reason: "the phasegate configuration is invalid: " + read.Invalid}, nil
	}
	st := read.State
	if checked {
		st.Checked, st.Contracts = dep.SHA, verdict
	}
	return ledger.DeploymentAnswer(st, read.Config.DeploymentRequires(dep.Environment), read.Config.PhasesOrDefault(),
		read.Config.Decisions.NegativeOptions), nil
}

// branchRef is the event's ref as a full ref: a branch's short name
// becomes refs/heads/<name>.
func branchRef(ref string) string {
	if ref == "" || strings.HasPrefix(ref, "refs/") {
		return ref
	}
	return "refs/heads/" + ref
}

// contractsOf is the verdict of the App's own completed phasegate/contracts
// on sha (SHIP, ADVISORY or HOLD), whatever input it was checked with;
// false when the App never completed one.
func (s *Server) contractsOf(ctx context.Context, gh *ghclient.Client, owner, repo, sha string) (string, bool, error) {
	if s.cfg.Publish == decide.PublishStatuses {
		st, ok, err := s.contractsStatus(ctx, gh, owner, repo, sha)
		switch {
		case !ok || err != nil:
			return "", false, err
		case st.State != "success":
			return "HOLD", true, nil
		case strings.HasPrefix(st.Description, "ADVISORY"):
			return "ADVISORY", true, nil
		}
		return "SHIP", true, nil
	}
	r, ok, err := s.contractsRun(ctx, gh, owner, repo, sha)
	switch {
	case !ok || err != nil:
		return "", false, err
	case r.Conclusion == "success":
		return "SHIP", true, nil
	case r.Conclusion == "neutral":
		return "ADVISORY", true, nil
	}
	return "HOLD", true, nil
}

// keepWaiting records what a waiting request waits for and, when that
// changed, says so on the run (a comment that answers nothing).
func (s *Server) keepWaiting(ctx context.Context, gh *ghclient.Client, dep decide.Deployment, a ledger.DeployAnswer, log *slog.Logger) error {
	if dep.Read && dep.Reason == a.Reason && slices.Equal(dep.Waits, a.Waiting) {
		return nil
	}
	dep.Read, dep.Reason, dep.Waits = true, a.Reason, a.Waiting
	if err := s.cfg.Deployments.Put(ctx, dep); err != nil {
		return fmt.Errorf("recording what the deployment of run %d waits for: %w", dep.RunID, err)
	}
	if err := gh.ReviewDeployment(ctx, dep.Owner, dep.Repo, dep.RunID, dep.Environment, "", deploymentComment(dep, a, s.cfg.PublicURL)); err != nil {
		if s.settled(ctx, gh, dep, err, log) {
			_, err := s.cfg.Deployments.Take(ctx, dep.Key())
			return err
		}
		return fmt.Errorf("commenting on the deployment of run %d to %q: %w", dep.RunID, clip(dep.Environment), err)
	}
	log.Info("a deployment waits", "reason", report.Terminal(a.Reason), "decisions", len(a.Waiting))
	return nil
}

// maxListedWaits bounds the decisions a comment lists.
const maxListedWaits = 20

// deploymentComment is what phasegate says on the run: the answer, its
// reason and, while waiting, each decision and where to answer it. Every
// part that came from a repository is made plain text (report.Terminal).
func deploymentComment(dep decide.Deployment, a ledger.DeployAnswer, public string) string {
	var b strings.Builder
	env, sha := report.Terminal(clip(dep.Environment)), outcome.ShortSHA(dep.SHA)
	switch a.Action {
	case ledger.DeployApprove:
		fmt.Fprintf(&b, "phasegate approves deploying %s to %s: %s.", sha, env, report.Terminal(a.Reason))
		return b.String()
	case ledger.DeployReject:
		fmt.Fprintf(&b, "phasegate rejects deploying %s to %s: %s.", sha, env, report.Terminal(a.Reason))
		return b.String()
	}
	fmt.Fprintf(&b, "phasegate holds deploying %s to %s: %s.", sha, env, report.Terminal(a.Reason))
	for i, w := range a.Waiting {
		if i == maxListedWaits {
			fmt.Fprintf(&b, "\n- and %d more", len(a.Waiting)-i)
			break
		}
		link := w.Link
		if public != "" && w.Issue > 0 {
			link = decide.IssuePageURL(public, dep.Owner, dep.Repo, w.Issue)
		}
		fmt.Fprintf(&b, "\n- %s on #%d", report.Terminal(w.Decision), w.Issue)
		if w.Stale {
			b.WriteString(" (its resolution is stale after a push: re-confirm it)")
		}
		if link != "" {
			b.WriteString(": " + report.Terminal(link))
		}
	}
	if len(a.Waiting) > 0 {
		b.WriteString("\nA person allowed to decide answers with /resolve <decision> <option> on the issue; phasegate then answers this deployment by itself.")
	}
	return b.String()
}

// deployWake is the fold observer's part for deployments: a fold that
// resolved or froze something new on an issue wakes the requests waiting
// on it (a deployment job for the issue). Unchanged folds (a page read, a
// reconcile pass) wake nothing.
func (s *Server) deployWake(f decide.Folded) {
	if f.State == nil {
		return
	}
	resolved := 0
	for _, o := range f.State.Outcomes {
		for _, d := range o.Decisions {
			if d.Resolution != nil {
				resolved++
			}
		}
	}
	if resolved == 0 && !f.State.Frozen() {
		return
	}
	sig := fmt.Sprintf("%d/%d/%t", f.State.Tip, resolved, f.State.Frozen())
	key := strings.ToLower(f.Owner+"/"+f.Repo) + "#" + strconv.Itoa(f.Issue)
	if !s.wakes.changed(key, sig) {
		return
	}
	if !s.anyWaitsOn(f.Owner, f.Repo, f.Issue) {
		return
	}
	inst, ok := s.installs.lookup(f.Owner, f.Repo)
	if !ok || s.queue.reserve() != slotReserved {
		s.wakes.forget(key) // the next fold, or the reconcile pass, tries again
		return
	}
	s.queue.push(&job{Kind: kindDeploy, Event: "deployment_wake", Delivery: "wake-" + key + "-" + sig, Installation: inst,
		Owner: f.Owner, Repo: f.Repo, Issue: f.Issue}, s.cfg.Now())
}

// anyWaitsOn reports whether a recorded request waits on the issue (true
// when the store cannot say: the wake then finds out).
func (s *Server) anyWaitsOn(owner, repo string, issue int) bool {
	ctx, cancel := context.WithTimeout(context.Background(), seenTimeout)
	defer cancel()
	all, err := s.cfg.Deployments.List(ctx)
	if err != nil {
		return true
	}
	return slices.ContainsFunc(all, func(d decide.Deployment) bool { return d.WaitsOn(owner, repo, issue) })
}

// wakeMemo is the last signature each issue woke deployments with.
type wakeMemo struct {
	mu sync.Mutex
	m  map[string]string
}

// maxWakeMemo bounds wakeMemo; when full it starts again (a spare wake
// costs one listing of the store).
const maxWakeMemo = 4096

func (w *wakeMemo) changed(key, sig string) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.m[key] == sig {
		return false
	}
	if w.m == nil || len(w.m) >= maxWakeMemo {
		w.m = map[string]string{}
	}
	w.m[key] = sig
	return true
}

func (w *wakeMemo) forget(key string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	delete(w.m, key)
}

// reanswerRepo answers again, in a reconcile pass, every recorded request
// of a repository, with those it finds waiting on GitHub that were not
// recorded (refind); a request older than GitHub's window is dropped.
func (s *Server) reanswerRepo(ctx context.Context, gh *ghclient.Client, d Decider, installation int64, owner, repo string, log *slog.Logger) error {
	s.refind(ctx, gh, installation, owner, repo, log)
	all, err := s.cfg.Deployments.List(ctx)
	errs := []error{listErr(err)}
	for _, dep := range all {
		if !strings.EqualFold(dep.Owner, owner) || !strings.EqualFold(dep.Repo, repo) {
			continue
		}
		if s.cfg.Now().Sub(dep.Requested) > decide.DeploymentWindow {
			if _, err := s.cfg.Deployments.Take(ctx, dep.Key()); err != nil {
				errs = append(errs, err)
			}
			log.Warn("a deployment request outlived GitHub's window unanswered: dropped", "run", dep.RunID, "environment", clip(dep.Environment))
			continue
		}
		errs = append(errs, s.answerDeployment(ctx, gh, d, dep.Key(), log))
	}
	return errors.Join(errs...)
}

// sharedDeployments is the DeploymentStore in Redis (serve --redis-url),
// one hash of JSON records: it outlives a restart and every replica
// reads and takes from it.
type sharedDeployments struct{ t *redisx.Table }

func (s sharedDeployments) Put(ctx context.Context, d decide.Deployment) error {
	b, err := json.Marshal(d)
	if err != nil {
		return fmt.Errorf("encoding the deployment request %s: %w", d.Key(), err)
	}
	return s.t.Put(ctx, d.Key(), b)
}

// List decodes every record; one that does not decode (written by another
// version) is an error naming it, never dropped unseen.
func (s sharedDeployments) List(ctx context.Context) ([]decide.Deployment, error) {
	m, err := s.t.All(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]decide.Deployment, 0, len(m))
	var errs []error
	for key, v := range m {
		var d decide.Deployment
		if err := json.Unmarshal([]byte(v), &d); err != nil || d.Key() != key {
			errs = append(errs, fmt.Errorf("the deployment request %s in Redis does not decode: %v", key, err))
			continue
		}
		out = append(out, d)
	}
	slices.SortFunc(out, func(a, b decide.Deployment) int { return strings.Compare(a.Key(), b.Key()) })
	return out, errors.Join(errs...)
}

func (s sharedDeployments) Take(ctx context.Context, key string) (bool, error) {
	return s.t.Take(ctx, key)
}

// settled reports whether GitHub's refusal of an answer means there is
// nothing left to answer: the run no longer waits on the environment (an
// earlier answer reached GitHub though its response was lost, or the run
// was cancelled), or the request was found through the API and its
// environment waits on other rules (reviewers, another App) and does not
// list phasegate. The caller drops the request; any other refusal is an
// error, and the request stays.
func (s *Server) settled(ctx context.Context, gh *ghclient.Client, dep decide.Deployment, err error, log *slog.Logger) bool {
	code := ghclient.StatusCode(err)
	if code < 400 || code >= 500 || code == http.StatusTooManyRequests {
		return false
	}
	envs, perr := gh.PendingDeployments(ctx, dep.Owner, dep.Repo, dep.RunID)
	pending := perr != nil || slices.ContainsFunc(envs, func(e string) bool { return strings.EqualFold(e, dep.Environment) })
	if pending && !dep.Refound {
		return false
	}
	log.Info("GitHub refused phasegate's answer and the run has nothing for phasegate to answer: dropped", "status", code, "still_pending", pending)
	return true
}

// refind records the deployment requests of a repository still waiting
// on GitHub and not in the store: once a process (a restart without Redis
// forgot them), from the runs waiting within GitHub's window and their
// pending environments. An installation without actions: read finds none.
func (s *Server) refind(ctx context.Context, gh *ghclient.Client, installation int64, owner, repo string, log *slog.Logger) {
	if _, done := s.refound.LoadOrStore(strings.ToLower(owner+"/"+repo), true); done {
		return
	}
	now := s.cfg.Now()
	runs, err := gh.WaitingRuns(ctx, owner, repo, now.Add(-decide.DeploymentWindow))
	if err != nil {
		log.Warn("reconcile: could not list the waiting workflow runs (the App needs actions: read)", "error", err)
		if !errors.Is(err, ghclient.ErrTruncated) {
			s.refound.Delete(strings.ToLower(owner + "/" + repo))
			return
		}
	}
	known, err := s.cfg.Deployments.List(ctx)
	if err != nil && len(known) == 0 {
		log.Warn("reconcile: could not list the recorded deployments", "error", err)
		s.refound.Delete(strings.ToLower(owner + "/" + repo))
		return
	}
	for _, run := range runs {
		if !hexSHA(run.HeadSHA) {
			continue
		}
		envs, err := gh.PendingDeployments(ctx, owner, repo, run.ID)
		if err != nil {
			log.Warn("reconcile: could not list a run's pending deployments", "run", run.ID, "error", err)
			continue
		}
		for _, env := range envs {
			dep := decide.Deployment{Installation: installation, Owner: owner, Repo: repo, RunID: run.ID, Environment: env,
				SHA: strings.ToLower(run.HeadSHA), Ref: run.HeadBranch, Requested: run.CreatedAt, Refound: true}
			if slices.ContainsFunc(known, func(k decide.Deployment) bool { return k.Key() == dep.Key() }) {
				continue
			}
			if err := s.cfg.Deployments.Put(ctx, dep); err != nil {
				log.Warn("reconcile: could not record a waiting deployment", "run", run.ID, "error", err)
				continue
			}
			log.Info("reconcile: found a deployment waiting that was not recorded", "run", run.ID, "environment", clip(env), "sha", dep.SHA)
		}
	}
}
