package checkjob

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strings"

	"github.com/phasegate/phasegate/internal/check"
	"github.com/phasegate/phasegate/internal/config"
	"github.com/phasegate/phasegate/internal/decide"
	"github.com/phasegate/phasegate/internal/gate"
	"github.com/phasegate/phasegate/internal/ghclient"
	"github.com/phasegate/phasegate/internal/outcome"
	"github.com/phasegate/phasegate/internal/report"
)

// GitHub is what the checking job reads (internal/ghclient.Client); every
// write goes through the decision handler.
type GitHub interface {
	decide.GitHub
	Issue(ctx context.Context, owner, repo string, number int) (ghclient.Issue, error)
	Commit(ctx context.Context, owner, repo, sha string) (ghclient.CommitInfo, error)
	PullRequestReviews(ctx context.Context, owner, repo string, number int) ([]ghclient.Review, error)
	CompareWhole(ctx context.Context, owner, repo, base, head string, lim ghclient.TreeLimits) (ghclient.Comparison, error)
}

// Request is one commit to check: the head of a pull request, a pushed
// branch or a merge group.
type Request struct {
	Owner, Repo string
	// SHA is the commit checked; Base the commit its change is measured
	// from ("": none, a new branch: the commit-aware rules are skipped and
	// nothing is posted).
	SHA, Base string
	// PR is the pull request whose head SHA is (nil: none).
	PR *ghclient.PR
	// Fork is the repository of a pull request's head when it is a fork:
	// a fork's outcomes are never posted.
	Fork string
	// Ref is the branch the change was pushed to (the pull request's head
	// branch, or the pushed ref).
	Ref string
	// BaseRef is the branch of Base: the pull request's base branch, or
	// the pushed branch ("": unknown). Recorded in the Input.
	BaseRef string
	// DefaultBranch is the repository's default branch ("": read).
	DefaultBranch string
	// Actors are the accounts the delivery attests made the change (the
	// sender, the pusher, the pull request's author).
	Actors []string
	// HTMLURL is the repository's page (https://github.com/owner/repo):
	// the summary's file links and the Details link.
	HTMLURL string
	// Open reads the commit's files (the App): the lazily fetched tree of
	// the API, giving at least maxFileBytes of a file (the configuration's
	// limits.max_file_size), so that the App reads what the CLI reads.
	Open func(ctx context.Context, maxFileBytes int64) (fs.FS, error)
	// Root, when set, is the directory checked in a checkout of the commit
	// on this machine (the action), instead of Open; RootName names it
	// ("commit <sha>" unless set), Prefix is it relative to the repository
	// ("" or ending in '/': the change is cut to it), and Local, when set,
	// reads the change from the checkout's history (exact for the commit
	// checked out, and no request; on an error the API's change is read).
	Root, RootName, Prefix string
	Local                  func(ctx context.Context) (map[string]check.Change, error)
	// Version is phasegate's, for the report.
	Version string
}

// PRNumber is the number of req's pull request (0: none).
func (req Request) PRNumber() int {
	if req.PR == nil {
		return 0
	}
	return req.PR.Number
}

// Job runs the checking job of the App and of the action.
type Job struct {
	Handler   *decide.Handler
	Validator *check.Validator
	// Workflow is set for the action, which runs in a workflow of the
	// repository: the change controls that workflow, so the gate-change
	// guard is the App's only, and the action vets the outcomes it carries
	// whoever posts them (a fork's and the App's included).
	Workflow bool
	// ConfigPath is .github/phasegate.yml unless set.
	ConfigPath string
	// MaxAnnotations caps the annotations of one check run (0: 500).
	MaxAnnotations int
	// PagesURL, when set, is serve's public URL: phasegate/contracts'
	// Details link is the commit's page there
	// ({public}/{owner}/{repo}/commit/{sha}), and so is
	// phasegate/decisions' when no phasegate comment decides it.
	PagesURL string
	// Cache, when set, keeps the units' results between the jobs: a unit
	// of a commit read through the API (CommitFS) whose inputs have the
	// ids they had in an earlier job is not read nor checked again.
	Cache check.Cache
	// CacheScope names, for Cache's keys, what else the results depend on
	// beyond the repository and Request.Version (ProgramScope: the
	// executable's digest, for a cache kept in a file).
	CacheScope string
	// Known is check.Options.Known for a checkout (Request.Root): the
	// blob ids git already knows, so those files are not hashed.
	Known map[string]string
}

// Summary is what one job did.
type Summary struct {
	Verdict   gate.Verdict
	Artifacts int
	// Reused counts the units whose results came from Job.Cache.
	Reused    int
	Findings  int
	Posted    int
	Decisions ghclient.Status
	// ConfigBlob is the git blob id of the configuration file the commit
	// was checked with, read from the default branch ("": there is none,
	// or it could not be read): the recorded input names it.
	ConfigBlob string
	// Report is the whole result: the verdict with its reasons and every
	// finding. A commit that could not be checked has a HOLD saying why
	// and no finding. Nil only when the job stopped before a verdict (its
	// context ended, or phasegate/contracts could not be started).
	Report *report.Report
	// Input is what the result stands for, as recorded with it (nil when
	// it could not be read: none was recorded).
	Input *Input
}

// CheckCommit checks the commit in req and publishes everything, as the
// action does for its workspace: phasegate/contracts (in progress, then its
// verdict with the findings as annotations), the Phase Outcomes the change
// adds (posted as the App, when the App is the repository's poster) and
// phasegate/decisions. A commit that cannot be read fails phasegate/contracts
// with the reason; it is never success.
func (j *Job) CheckCommit(ctx context.Context, gh GitHub, req Request) (Summary, error) {
	h := j.Handler
	details := req.HTMLURL + "/commit/" + req.SHA
	if req.PR != nil && req.PR.HTMLURL != "" {
		details = req.PR.HTMLURL
	}
	if j.PagesURL != "" {
		details = decide.CommitPageURL(j.PagesURL, req.Owner, req.Repo, req.SHA)
	}
	id, err := h.StartContracts(ctx, gh, req.Owner, req.Repo, req.SHA, details)
	if err != nil {
		return Summary{}, err
	}
	opts := decide.CommitOptions{DefaultBranch: req.DefaultBranch, TargetURL: details}
	if req.PR != nil && req.PR.HeadSHA == req.SHA {
		opts.PR = req.PR
	}
	var errs []error
	sum := Summary{}
	synced := false // phasegate/decisions set by the posting
	out, err := j.Check(ctx, gh, req)
	switch {
	case errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded):
		return Summary{}, err
	case err != nil:
		// Never a silent pass: the check fails with the reason, and the
		// job's error has it retried.
		c := decide.Contracts{State: "failure", Conclusion: "failure", DetailsURL: details,
			Title:   "could not check this commit",
			Summary: "phasegate could not check this commit, so it does not pass: " + report.Terminal(err.Error())}
		errs = append(errs, err, h.PublishContracts(ctx, gh, req.Owner, req.Repo, req.SHA, id, c))
		sum.Verdict, sum.ConfigBlob = gate.Hold, out.Blob
		sum.Report = &report.Report{Verdict: gate.Result{Verdict: gate.Hold,
			Reasons: []string{"HOLD: phasegate could not check this commit: " + report.Terminal(err.Error())}}}
	default:
		rep := out.Report
		sum = Summary{Verdict: rep.Verdict.Verdict, Artifacts: rep.Artifacts, Reused: out.Reused, Findings: len(rep.Findings), ConfigBlob: out.Blob, Report: &rep}
		if j.poster(out.Config) && req.Fork == "" && req.Base != "" {
			res, err := j.Post(ctx, gh, req, out.Carried, opts)
			sum.Posted, synced, sum.Decisions = len(res.Posted), res.Synced, res.Decisions
			errs = append(errs, err)
		}
		c := j.contracts(rep, req, details)
		// An input is recorded only with a result: one that could not be
		// computed stands for no input.
		sum.Input = j.input(ctx, gh, req, out.Blob)
		sum.Input.record(&c)
		errs = append(errs, h.PublishContracts(ctx, gh, req.Owner, req.Repo, req.SHA, id, c))
	}
	if !synced {
		st, err := h.SyncCommit(ctx, gh, req.Owner, req.Repo, req.SHA, opts)
		sum.Decisions = st
		errs = append(errs, err)
	}
	return sum, errors.Join(errs...)
}

// poster says whether the App posts the repository's outcomes: unless the
// repository's configuration names another identity (the action's, or
// another App's), it does. The App's own identity is Handler.Identity.
func (j *Job) poster(cfg config.Config) bool {
	return cfg.Identity == "" || strings.EqualFold(cfg.Identity, j.Handler.Identity)
}

// Post posts the added outcomes of carried that passed vetting and, when
// it posted them all, sets phasegate/decisions of the commit with opts
// from the thread it posted on, not read again (decide.PostAndSync). Each
// outcome records the accounts GitHub attests made the change.
func (j *Job) Post(ctx context.Context, gh GitHub, req Request, carried []Carried, opts decide.CommitOptions) (decide.PostResult, error) {
	var news []decide.NewOutcome
	for _, c := range carried {
		if !c.Postable() {
			continue
		}
		news = append(news, decide.NewOutcome{Source: req.Prefix + c.Doc.Path, Outcome: c.Outcome, Canonical: c.Canonical, Issue: c.Issue})
	}
	if len(news) == 0 {
		return decide.PostResult{}, nil
	}
	meta := decide.PostMeta{Commit: req.SHA, PR: req.PRNumber(), Actors: j.actors(ctx, gh, req), Ref: req.Ref}
	res, err := j.Handler.PostAndSync(ctx, gh, req.Owner, req.Repo, news, meta, opts)
	switch {
	case err != nil && res.Synced:
		return res, fmt.Errorf("setting phasegate/decisions of %s: %w", outcome.ShortSHA(req.SHA), err)
	case err != nil:
		return res, fmt.Errorf("posting the Phase Outcomes of %s: %w", outcome.ShortSHA(req.SHA), err)
	}
	return res, nil
}

// actors are the accounts GitHub attests made the change, each once (case
// folded) and only those that can be logins: the delivery's or the
// event's, the pull request's author, and the head commit's author and
// committer only when GitHub verified its signature (anyone can write any
// name into an unsigned commit). Every account that pushed the branch is
// added by decide (PostMeta.Ref).
func (j *Job) actors(ctx context.Context, gh GitHub, req Request) []string {
	list := append([]string(nil), req.Actors...)
	if req.PR != nil {
		list = append(list, req.PR.Author)
	}
	if info, err := gh.Commit(ctx, req.Owner, req.Repo, req.SHA); err == nil && info.Verified {
		list = append(list, info.Author, info.Committer)
	}
	var out []string
	for _, a := range list {
		if outcome.Actor(a) && !slices.ContainsFunc(out, func(o string) bool { return strings.EqualFold(o, a) }) {
			out = append(out, a)
		}
	}
	return out
}
