// Package action is the container GitHub Action adapter (`phasegate
// action`). It reads the event exactly as GitHub provides it, checks the
// workspace with the App's checking job (internal/checkjob), annotates
// findings, writes the job summary and the step outputs, publishes the
// commit statuses and posts new Phase Outcomes. It is the only package
// that imports go-githubactions; everything it does on GitHub goes through
// internal/ghclient.
package action

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	githubactions "github.com/sethvargo/go-githubactions"

	"github.com/phasegate/phasegate/internal/artifact"
	"github.com/phasegate/phasegate/internal/check"
	"github.com/phasegate/phasegate/internal/checkjob"
	"github.com/phasegate/phasegate/internal/config"
	"github.com/phasegate/phasegate/internal/decide"
	"github.com/phasegate/phasegate/internal/gate"
	"github.com/phasegate/phasegate/internal/ghclient"
	"github.com/phasegate/phasegate/internal/history"
	"github.com/phasegate/phasegate/internal/outcome"
	"github.com/phasegate/phasegate/internal/report"
)

// Exit codes, as the CLI's.
const (
	exitOK       = 0
	exitFindings = 1
	exitCouldNot = 2
)

// maxEvent bounds the event file read (GitHub's webhook payload cap).
const maxEvent = 25 << 20

// Options are what the CLI passes in.
type Options struct {
	// Version of phasegate, for the User-Agent and reports.
	Version string
	// Client, when set, adjusts the GitHub client's options (tests inject a
	// clock so that retries and rate-limit waits cost no real time).
	Client func(*ghclient.Options)
	// Now is the clock of the decision handler (reconcile's window); nil
	// means time.Now.
	Now func() time.Time
}

// inputs of action.yml, with their defaults when a variable is unset (a run
// outside a workflow).
type inputs struct {
	path         string
	token        string
	format       string
	postOutcomes bool
	failOn       string
	config       string
	// sarifFile is where the SARIF report is written, relative to the
	// workspace and '/'-separated; "" writes none.
	sarifFile string
	// resultsFile: where a read-only run saves its results, and what a
	// workflow_run run publishes; "" for none.
	resultsFile string
	// cacheFile keeps the units' results between runs (checkjob.UnitFile),
	// relative to the workspace; "" for none.
	cacheFile string
}

func readInputs(a *githubactions.Action) (inputs, error) {
	in := inputs{
		path:        cmp.Or(strings.TrimSpace(a.GetInput("path")), "."),
		token:       strings.TrimSpace(a.GetInput("token")),
		format:      cmp.Or(strings.TrimSpace(a.GetInput("format")), "text"),
		failOn:      cmp.Or(strings.ToLower(strings.TrimSpace(a.GetInput("fail-on"))), "hold"),
		config:      cmp.Or(strings.TrimSpace(a.GetInput("config")), config.DefaultPath),
		sarifFile:   a.GetInput("sarif-file"),
		resultsFile: strings.TrimSpace(a.GetInput("results-file")),
		cacheFile:   strings.TrimSpace(a.GetInput("cache-file")),
	}
	if !slices.Contains(report.Formats, in.format) {
		return in, fmt.Errorf("input format: %q is not one of %s", in.format, strings.Join(report.Formats, ", "))
	}
	if !slices.Contains([]string{"hold", "error", "warning", "never"}, in.failOn) {
		return in, fmt.Errorf("input fail-on: %q is not one of hold, error, warning, never", in.failOn)
	}
	switch v := strings.ToLower(strings.TrimSpace(a.GetInput("post-outcomes"))); v {
	case "", "true", "yes", "1":
		in.postOutcomes = true
	case "false", "no", "0":
	default:
		return in, fmt.Errorf("input post-outcomes: %q is not true or false", v)
	}
	if _, ok := inWorkspace(in.path); !ok {
		return in, fmt.Errorf("input path: %q must be relative to the workspace and inside it", in.path)
	}
	var err error
	if in.sarifFile != "" {
		in.sarifFile, err = fileInput("sarif-file", in.sarifFile)
	}
	// The action's container sees only the workspace of the job's files.
	if in.resultsFile != "" && err == nil {
		_, err = fileInput("results-file", in.resultsFile)
	}
	if in.cacheFile != "" && err == nil {
		in.cacheFile, err = fileInput("cache-file", in.cacheFile)
	}
	return in, err
}

// fileInput is the input name, the path of a file relative to the
// workspace and inside it, cleaned.
func fileInput(name, v string) (string, error) {
	p, ok := inWorkspace(v)
	if !ok || p == "." || strings.HasSuffix(v, "/") {
		return "", fmt.Errorf("input %s: %q must be the path of a file relative to the workspace and inside it", name, v)
	}
	return p, nil
}

// inWorkspace cleans p, a path relative to the workspace, and says whether
// it stays inside the workspace: not absolute, and no ".." that climbs out.
// (Symbolic links are the business of whoever opens the path.)
func inWorkspace(p string) (string, bool) {
	if strings.ContainsRune(p, 0) || !filepath.IsLocal(p) {
		return "", false
	}
	return path.Clean(filepath.ToSlash(p)), true
}

// event is the part of a GitHub event payload phasegate reads.
type event struct {
	Action  string `json:"action"`
	Ref     string `json:"ref"`
	Deleted bool   `json:"deleted"`
	Before  string `json:"before"`
	After   string `json:"after"`
	Sender  struct {
		Login string `json:"login"`
	} `json:"sender"`
	Pusher struct {
		Name string `json:"name"`
	} `json:"pusher"`
	PullRequest *struct {
		Number int `json:"number"`
		User   struct {
			Login string `json:"login"`
		} `json:"user"`
		Head struct {
			SHA  string   `json:"sha"`
			Ref  string   `json:"ref"`
			Repo *repoRef `json:"repo"`
		} `json:"head"`
		Base struct {
			SHA  string   `json:"sha"`
			Repo *repoRef `json:"repo"`
		} `json:"base"`
	} `json:"pull_request"`
	MergeGroup *struct {
		HeadSHA string `json:"head_sha"`
		BaseSHA string `json:"base_sha"`
	} `json:"merge_group"`
	Repository struct {
		DefaultBranch string `json:"default_branch"`
	} `json:"repository"`
	WorkflowRun *struct {
		HeadSHA        string   `json:"head_sha"`
		HTMLURL        string   `json:"html_url"`
		Repository     *repoRef `json:"repository"`
		HeadRepository *repoRef `json:"head_repository"`
	} `json:"workflow_run"`
	// Issue and Comment are an issue_comment event's.
	Issue struct {
		Number int `json:"number"`
		Labels []struct {
			Name string `json:"name"`
		} `json:"labels"`
	} `json:"issue"`
	Comment struct {
		ID   int64  `json:"id"`
		Body string `json:"body"`
		User struct {
			Login string `json:"login"`
			Type  string `json:"type"`
		} `json:"user"`
	} `json:"comment"`
}

type repoRef struct {
	FullName string `json:"full_name"`
}

// forkHead is the repository a pull request's head lives in when it is not
// the repository the run belongs to ("" when it is, or the payload does not
// say). A pull request from a fork runs pull_request with a read-only token.
// head.repo.fork alone is not enough: a fork's own pull requests between
// its branches have it too, with a token that can write.
func (ev event) forkHead(repository string) string {
	if ev.PullRequest == nil || ev.PullRequest.Head.Repo == nil || ev.PullRequest.Head.Repo.FullName == "" {
		return ""
	}
	base := repository
	if ev.PullRequest.Base.Repo != nil && ev.PullRequest.Base.Repo.FullName != "" {
		base = ev.PullRequest.Base.Repo.FullName
	}
	if strings.EqualFold(ev.PullRequest.Head.Repo.FullName, base) {
		return ""
	}
	return ev.PullRequest.Head.Repo.FullName
}

// zeroSHA is the "before" of a push that created a branch.
func zeroSHA(s string) bool { return strings.Trim(s, "0") == "" }

// Main runs `phasegate action` and returns the exit code. getenv is
// os.Getenv in production; stdout is the step's log, where workflow commands
// go too: text that may carry what the change wrote is framed so that the
// runner reads no command from it (log.go).
func Main(ctx context.Context, getenv func(string) string, stdout io.Writer, opts Options) int {
	lw := &logWriter{w: stdout}
	a := githubactions.New(githubactions.WithGetenv(getenv), githubactions.WithWriter(lw))
	r := &run{a: a, getenv: getenv, log: lw, opts: opts}
	if why := outsideRunner(getenv); why != "" {
		a.Errorf("phasegate action runs inside a GitHub Actions workflow step, but %s (use `phasegate validate` or `phasegate gate` elsewhere)", why)
		return exitCouldNot
	}
	name := getenv("GITHUB_EVENT_NAME")
	switch name {
	case "push", "pull_request", "pull_request_target", "merge_group", "issue_comment", "schedule", "workflow_dispatch", "workflow_run":
	default:
		a.Noticef("phasegate: nothing to do for the %s event", name)
		return exitOK
	}
	in, err := readInputs(a)
	if err != nil {
		return r.fail(err)
	}
	if name == "schedule" || name == "workflow_dispatch" {
		return r.reconcile(ctx, in)
	}
	ev, err := readEvent(getenv("GITHUB_EVENT_PATH"))
	if err != nil {
		return r.fail(err)
	}
	switch name {
	case "issue_comment":
		return r.decide(ctx, in, ev)
	case "workflow_run":
		return r.publishResults(ctx, in, ev)
	}
	return r.checkCommit(ctx, name, in, ev)
}

// outsideRunner says why the environment is not a runner's step, "" when
// it is one: outside a runner there is no event to read and no file for
// the outputs, which go-githubactions panics writing.
func outsideRunner(getenv func(string) string) string {
	switch {
	case getenv("GITHUB_ACTIONS") != "true":
		return `GITHUB_ACTIONS is not "true"`
	case getenv("GITHUB_EVENT_NAME") == "":
		return "GITHUB_EVENT_NAME is not set"
	case getenv("GITHUB_OUTPUT") == "":
		return "GITHUB_OUTPUT (the step's outputs file) is not set"
	}
	return ""
}

type run struct {
	a      *githubactions.Action
	getenv func(string) string
	log    *logWriter // the step's log (stdout)
	opts   Options

	owner, repo string
	gh          *runGitHub
	// sum is what the run did, for the job summary: Failed (an API call
	// failed: exit 2 after reporting) and ReadOnly (why the run writes
	// nothing to GitHub: a pull request from a fork, or a token GitHub
	// answered 403) steer the run too; runSummary adds the outcomes
	// posted and the statuses set.
	sum      report.RunSummary
	posted   []decide.PostedOutcome
	statuses []ghclient.Status
}

// fail reports an error that stops the run: it could not run.
func (r *run) fail(err error) int {
	r.a.Errorf("phasegate: %s", oneLine(err.Error()))
	return exitCouldNot
}

// apiError reports a failed GitHub call as an error annotation; the run
// goes on so that validation results are still reported.
func (r *run) apiError(what string, err error) {
	r.sum.Failed = true
	msg := "could not " + what + ": " + oneLine(err.Error())
	r.sum.Failures = append(r.sum.Failures, msg)
	r.a.Errorf("phasegate %s", msg)
}

// skip records and announces a check or step the run skipped.
func (r *run) skip(why string) {
	r.sum.Skipped = append(r.sum.Skipped, why)
	r.a.Noticef("phasegate: %s", oneLine(why))
}

// denied reports whether err is GitHub refusing a write for want of
// permission (403 "Resource not accessible by integration": a pull
// request's run from a fork, Dependabot's, or a job without the write
// permissions). The run then writes nothing more and exits by the verdict.
func (r *run) denied(err error) bool {
	if !ghclient.IsPermissionDenied(err) {
		return false
	}
	r.sum.ReadOnly = "the token cannot write to this repository (GitHub answered 403: " + oneLine(err.Error()) + "), so nothing more was attempted"
	r.a.Warningf("phasegate: %s. For pull requests from forks, save results-file and publish it from a workflow_run workflow (docs/action.md: Forks and read-only tokens); otherwise give the job statuses, issues and pull-requests write", r.sum.ReadOnly)
	return true
}

func oneLine(s string) string { return report.Terminal(strings.ReplaceAll(s, "\n", " ")) }

// commitRun holds what one check of a commit knows: the commit as the job
// checks it, and what the run publishes it with.
type commitRun struct {
	checkjob.Request
	in    inputs
	ev    event
	event string
	job   *checkjob.Job
}

// checkCommit checks the commit a push, pull request or merge group event
// names: it validates the checked directory, reports the findings (log,
// SARIF, annotations, job summary, step outputs), publishes the statuses
// and the new Phase Outcomes, and returns the exit code fail-on asks for.
func (r *run) checkCommit(ctx context.Context, eventName string, in inputs, ev event) int {
	cr, code := r.newCommitRun(eventName, in, ev)
	if cr == nil {
		return code
	}
	// Without a token the run reports its findings but reads and
	// publishes nothing, and exits 2.
	if cr.in.token == "" {
		r.sum.Failed = true
		r.sum.Failures = append(r.sum.Failures, "no GitHub token (input token): nothing was read from or published to GitHub")
		r.a.Errorf("%s", "phasegate has no GitHub token (input token): the findings are reported below, but no commit status, comment or label was published")
	} else {
		r.newClient(cr.in.token)
	}
	out, err := r.check(ctx, cr)
	if err != nil {
		return r.fail(err)
	}
	rep := out.Report
	r.writeReports(cr, rep, r.sarifReport(cr, rep))

	posted := 0
	if r.gh != nil {
		posted = r.publish(ctx, cr, out)
	}
	if cr.in.resultsFile != "" {
		r.saveResults(cr, rep)
	}
	r.summary(rep, cr)

	errs, warns := check.Count(rep.Findings)
	r.a.SetOutput("verdict", string(rep.Verdict.Verdict))
	r.a.SetOutput("errors", strconv.Itoa(errs))
	r.a.SetOutput("warnings", strconv.Itoa(warns))
	r.a.SetOutput("outcomes-posted", strconv.Itoa(posted))

	if r.sum.Failed {
		return exitCouldNot
	}
	return failOnCode(cr.in.failOn, rep.Verdict.Verdict, errs, warns)
}

// newCommitRun works out the commit to check, its base and the checked
// directory. It returns nil and the exit code when there is nothing to
// check (a push that deleted a branch, a merge_group action other than
// checks_requested) or the run cannot go on.
func (r *run) newCommitRun(eventName string, in inputs, ev event) (*commitRun, int) {
	switch {
	case eventName == "push" && (ev.Deleted || ev.After != "" && zeroSHA(ev.After)):
		r.a.Noticef("phasegate: the push deleted %s: there is no commit to check", oneLine(ev.Ref))
		return nil, exitOK
	case eventName == "merge_group" && ev.Action != "" && ev.Action != "checks_requested":
		r.a.Noticef("phasegate: merge_group %s: nothing to check", oneLine(ev.Action))
		return nil, exitOK
	}
	if !r.repository() {
		return nil, exitCouldNot
	}
	cr := &commitRun{in: in, ev: ev, event: eventName}
	cr.SHA = r.getenv("GITHUB_SHA")
	cr.setRange()
	cr.Root = filepath.Join(r.workspace(), filepath.FromSlash(in.path))
	if p := path.Clean(filepath.ToSlash(in.path)); p != "." {
		cr.Prefix = p + "/"
	}
	if eventName == "pull_request_target" && ev.PullRequest != nil {
		if err := r.checkedHead(cr); err != nil {
			return nil, r.fail(err)
		}
	}
	if cr.Fork = ev.forkHead(r.getenv("GITHUB_REPOSITORY")); cr.Fork != "" && eventName == "pull_request" {
		r.sum.ReadOnly = "this pull request comes from the fork " + cr.Fork + ", whose pull_request runs get a read-only token"
		r.a.Noticef("phasegate: %s: the findings are annotated and summarised, and nothing is published here. Save results-file and publish it from a workflow_run workflow (docs/action.md: Forks and read-only tokens)", oneLine(r.sum.ReadOnly))
	}
	return cr, exitOK
}

// repository sets the run's repository from GITHUB_REPOSITORY, saying so
// when it is not owner/name.
func (r *run) repository() bool {
	var ok bool
	r.owner, r.repo, ok = strings.Cut(r.getenv("GITHUB_REPOSITORY"), "/")
	if !ok || r.owner == "" || r.repo == "" {
		r.a.Errorf("%s", "phasegate: GITHUB_REPOSITORY is not owner/name")
		return false
	}
	return true
}

// workspace is GITHUB_WORKSPACE, the checkout ("." when unset).
func (r *run) workspace() string { return cmp.Or(r.getenv("GITHUB_WORKSPACE"), ".") }

// setRange sets the checked head, its base and the pull request from the
// event: a pull request's head and base, a merge group's, or a push's after
// and before (none when the push created the branch). cr.SHA keeps
// GITHUB_SHA when the event names no head.
func (cr *commitRun) setRange() {
	ev := cr.ev
	switch {
	case ev.PullRequest != nil:
		cr.SHA, cr.Base = ev.PullRequest.Head.SHA, ev.PullRequest.Base.SHA
		if n := ev.PullRequest.Number; n > 0 {
			cr.PR = &ghclient.PR{Number: n, Author: ev.PullRequest.User.Login, State: "open", HeadSHA: cr.SHA, BaseSHA: cr.Base}
		}
	case ev.MergeGroup != nil:
		cr.SHA, cr.Base = ev.MergeGroup.HeadSHA, ev.MergeGroup.BaseSHA
	default:
		cr.SHA = cmp.Or(ev.After, cr.SHA)
		if !zeroSHA(ev.Before) {
			cr.Base = ev.Before
		}
	}
}

// newClient makes the run's GitHub client; false when it could not.
func (r *run) newClient(token string) bool {
	o := ghclient.Options{Token: token, BaseURL: r.getenv("GITHUB_API_URL"), Version: r.opts.Version}
	if r.opts.Client != nil {
		r.opts.Client(&o)
	}
	c, err := ghclient.New(o)
	if err != nil {
		r.apiError("create a GitHub client", err)
		return false
	}
	r.gh = &runGitHub{Client: c, files: map[string]fileRead{}}
	return true
}

// runGitHub is the run's client, reading each file of the default branch
// once: the checking job and the decision handler judge by the one
// configuration the run read.
type runGitHub struct {
	*ghclient.Client
	mu    sync.Mutex
	files map[string]fileRead
}

type fileRead struct {
	data  []byte
	found bool
}

// FileContent is ghclient.Client.FileContent, remembered for the default
// branch (ref ""); a failed read is not.
func (g *runGitHub) FileContent(ctx context.Context, owner, repo, path, ref string) ([]byte, bool, error) {
	if ref != "" {
		return g.Client.FileContent(ctx, owner, repo, path, ref)
	}
	key := strings.ToLower(owner+"/"+repo) + ":" + path
	g.mu.Lock()
	defer g.mu.Unlock()
	if f, ok := g.files[key]; ok {
		return f.data, f.found, nil
	}
	data, found, err := g.Client.FileContent(ctx, owner, repo, path, ref)
	if err == nil {
		g.files[key] = fileRead{data: data, found: found}
	}
	return data, found, err
}

// check runs the checking job (checkjob.Job.Check, the App's) on the
// checked directory of the checkout: the configuration of the default
// branch, the change from the checkout's history when it has the base
// commit (else the API's), the checker, and the outcomes the change
// carries, vetted. The report's files are relative to the checked
// directory; an error means the commit could not be checked.
func (r *run) check(ctx context.Context, cr *commitRun) (checkjob.Checked, error) {
	j, err := r.job(cr.in)
	if err != nil {
		return checkjob.Checked{}, err
	}
	root, base := cr.Root, cr.Base
	cr.Owner, cr.Repo, cr.Ref, cr.Version, cr.RootName, cr.job = r.owner, r.repo, pushedRef(cr), r.opts.Version, cr.in.path, j
	cr.Actors = []string{cr.ev.Sender.Login, cr.ev.Pusher.Name, r.getenv("GITHUB_ACTOR"), r.getenv("GITHUB_TRIGGERING_ACTOR")}
	cr.Local = func(ctx context.Context) (map[string]check.Change, error) {
		changed, err := history.Changed(ctx, root, base)
		out := make(map[string]check.Change, len(changed))
		for p, c := range changed {
			out[p] = check.Change(c)
		}
		return out, err
	}
	var gh checkjob.GitHub
	if r.gh != nil {
		gh = r.gh
	} else {
		r.a.Warningf("%s", "phasegate: without a token the configuration cannot be read from the default branch; the defaults apply")
	}
	save, err := r.useCache(j, cr.in)
	if err != nil {
		return checkjob.Checked{}, err
	}
	if j.Cache != nil {
		base, _ := artifact.ContextRoot(root) // the directory check.Validator.Run reads
		j.Known = history.KnownIDs(base)
	}
	out, err := j.Check(ctx, gh, cr.Request)
	save(err == nil)
	for _, why := range out.Skipped {
		r.skip(why)
	}
	return out, err
}

func (r *run) job(in inputs) (*checkjob.Job, error) {
	v, err := check.NewValidator()
	if err != nil {
		return nil, fmt.Errorf("loading schemas: %w", err)
	}
	return &checkjob.Job{Handler: r.handler(in), Validator: v, ConfigPath: in.config, Workflow: true}, nil
}

// useCache gives the job the units' results of cache-file, if set, and
// returns what writes them back after a check that ran (ok). The file is
// read and written through an os.Root of the workspace (no link leads out
// of it); one that cannot be written is a warning: the check stands
// without it.
func (r *run) useCache(j *checkjob.Job, in inputs) (save func(ok bool), err error) {
	if in.cacheFile == "" {
		return func(bool) {}, nil
	}
	root, err := os.OpenRoot(r.workspace())
	if err != nil {
		return nil, fmt.Errorf("input cache-file: %w", err)
	}
	if err := root.MkdirAll(path.Dir(filepath.ToSlash(in.cacheFile)), 0o755); err != nil {
		root.Close()
		return nil, fmt.Errorf("input cache-file: %w", err)
	}
	uf, err := checkjob.OpenUnitFile(root, in.cacheFile)
	if err == nil {
		j.CacheScope, err = checkjob.ProgramScope(r.opts.Version)
	}
	if err != nil {
		root.Close()
		return nil, fmt.Errorf("input cache-file: %w", err)
	}
	j.Cache = uf
	return func(ok bool) {
		defer root.Close()
		if !ok {
			return
		}
		if err := uf.Save(); err != nil {
			r.a.Warningf("phasegate: %s", report.Terminal(err.Error()))
		}
	}, nil
}

// sarifReport is rep for SARIF: code scanning reads every path as relative
// to the repository root (the workspace), so the files relative to the
// checked directory are rebased; the configuration's path is already the
// repository's.
func (r *run) sarifReport(cr *commitRun, rep report.Report) report.Report {
	// The checker's files are relative to the checked directory, or to the
	// directory holding the marker directory it lies in
	// (artifact.ContextRoot, as check.Validator.Run places it).
	prefix := cr.Prefix
	if base, ctxPrefix := artifact.ContextRoot(cr.Root); ctxPrefix != "" {
		if rel, err := filepath.Rel(r.workspace(), base); err == nil {
			prefix = strings.TrimPrefix(filepath.ToSlash(rel)+"/", "./")
		}
	}
	sarif := rep
	sarif.Findings = make([]check.Finding, len(rep.Findings))
	for i, f := range rep.Findings {
		if f.File != "" && f.Rule != checkjob.RuleConfig {
			f.File = path.Join(prefix, f.File)
		}
		sarif.Findings[i] = f
	}
	check.Sort(sarif.Findings)
	if abs, err := filepath.Abs(r.workspace()); err == nil {
		sarif.SourceRoot = report.DirURI(abs)
	}
	return sarif
}

// writeReports writes the log in the format input, the SARIF file and the
// annotations. Annotations name files as the repository does, as SARIF does.
// The report is framed (log.go): its lines start with paths the change
// chose, and the annotations after it must stay commands.
func (r *run) writeReports(cr *commitRun, rep, sarif report.Report) {
	if cr.in.format == "sarif" {
		rep = sarif
	}
	if cr.in.format != "github" {
		var b bytes.Buffer
		err := report.Write(&b, cr.in.format, rep)
		if err == nil {
			err = r.log.framed(b.Bytes())
		}
		if err != nil {
			r.a.Errorf("phasegate: %s", oneLine(err.Error()))
		}
	}
	if cr.in.sarifFile != "" {
		var b bytes.Buffer
		err := report.SARIF(&b, sarif)
		if err == nil {
			err = writeInWorkspace(r.workspace(), cr.in.sarifFile, b.Bytes())
		}
		if err != nil {
			r.sum.Failed = true
			r.fail(fmt.Errorf("writing the sarif-file %s: %w", cr.in.sarifFile, err))
		} else {
			r.a.SetOutput("sarif-file", cr.in.sarifFile)
		}
	}
	r.annotate(sarif.Findings)
}

// failOnCode is the exit code the fail-on input asks for: 1 on a HOLD
// verdict ("hold"), on any error ("error") or on any error or warning
// ("warning"), 0 otherwise ("never").
func failOnCode(failOn string, verdict gate.Verdict, errs, warns int) int {
	if failOn == "hold" && verdict == gate.Hold || failOn == "error" && errs > 0 || failOn == "warning" && errs+warns > 0 {
		return exitFindings
	}
	return exitOK
}

// writeInWorkspace writes data to name, a clean '/'-separated path inside
// the workspace, creating its parent directories. Everything is opened
// through an os.Root, so a symbolic link in the checkout (which the change
// under check controls) cannot send the write out of the workspace.
func writeInWorkspace(workspace, name string, data []byte) error {
	root, err := os.OpenRoot(workspace)
	if err != nil {
		return err
	}
	defer root.Close()
	if err := root.MkdirAll(path.Dir(name), 0o755); err != nil {
		return err
	}
	return root.WriteFile(name, data, 0o644)
}

// maxAnnotations per severity: GitHub shows 10 of each type per step; a few
// more make the log useful, the job summary lists them all.
const maxAnnotations = 25

// annotate emits one annotation per finding, errors first, at file, line and
// column, with the rule as title.
func (r *run) annotate(fs []check.Finding) {
	for _, sev := range []check.Severity{check.SeverityError, check.SeverityWarning} {
		n := 0
		for _, f := range fs {
			if f.Severity != sev {
				continue
			}
			if n++; n > maxAnnotations {
				continue
			}
			emit := r.a.WithFieldsMap(report.Annotation(f)).Warningf
			if sev == check.SeverityError {
				emit = r.a.WithFieldsMap(report.Annotation(f)).Errorf
			}
			emit("%s", report.Terminal(f.Message))
		}
		if n > maxAnnotations {
			r.a.Noticef("phasegate: %d more %s findings are in the job summary and the log", n-maxAnnotations, sev)
		}
	}
}

func (r *run) summary(rep report.Report, cr *commitRun) {
	if r.getenv("GITHUB_STEP_SUMMARY") == "" {
		return
	}
	links := report.SummaryLinks{Commit: cr.SHA}
	if server := r.getenv("GITHUB_SERVER_URL"); server != "" && cr.SHA != "" {
		links.BlobBase = strings.TrimSuffix(server, "/") + "/" + r.owner + "/" + r.repo + "/blob/" + cr.SHA + "/" + cr.Prefix
	}
	links.Run = r.runSummary(cr.SHA)
	var b strings.Builder
	if err := report.Markdown(&b, rep, links); err != nil {
		r.a.Errorf("phasegate: %s", oneLine(err.Error()))
		return
	}
	r.a.AddStepSummary(b.String())
}

// runURL links a status to this workflow run.
func (r *run) runURL() string {
	server, id := r.getenv("GITHUB_SERVER_URL"), r.getenv("GITHUB_RUN_ID")
	if server == "" || id == "" {
		return ""
	}
	return strings.TrimSuffix(server, "/") + "/" + r.owner + "/" + r.repo + "/actions/runs/" + id
}

// runSummary is what the run did on GitHub, for the job summary.
func (r *run) runSummary(sha string) *report.RunSummary {
	rs := r.sum
	rs.StatusSHA = sha
	for _, p := range r.posted {
		rs.Posted = append(rs.Posted, report.PostedLink{Source: p.Source, Issue: p.Issue, URL: p.Comment.HTMLURL})
	}
	for _, s := range r.statuses {
		rs.Statuses = append(rs.Statuses, report.StatusLine{Context: s.Context, State: s.State, Description: ghclient.StatusDescription(s.Description), URL: s.TargetURL})
	}
	return &rs
}

// checkedHead refuses a pull_request_target run that publishes for a head
// it did not check: that event checks out the base branch, so the
// workspace must hold the pull request's head (or GitHub's merge commit of
// it) for the statuses on the head to mean anything.
func (r *run) checkedHead(cr *commitRun) error {
	head := cr.ev.PullRequest.Head.SHA
	checked, parents, err := history.Head(cr.Root)
	if err != nil {
		checked, parents = r.getenv("GITHUB_SHA"), nil
	}
	if strings.EqualFold(checked, head) || len(parents) > 1 && slices.Contains(parents, strings.ToLower(head)) {
		return nil
	}
	return fmt.Errorf("refusing to publish for pull request #%d: this pull_request_target run checked %s (the base branch), not the pull request's head %s, and a status on the head must be about the head. "+
		"Run phasegate on pull_request instead; for pull requests from forks, save results-file there and publish it from a workflow_run workflow (see docs/action.md, Forks and read-only tokens)",
		cr.ev.PullRequest.Number, outcome.ShortSHA(checked), outcome.ShortSHA(head))
}
