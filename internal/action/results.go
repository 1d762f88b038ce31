package action

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/phasegate/phasegate/internal/check"
	"github.com/phasegate/phasegate/internal/checkjob"
	"github.com/phasegate/phasegate/internal/decide"
	"github.com/phasegate/phasegate/internal/gate"
	"github.com/phasegate/phasegate/internal/ghclient"
	"github.com/phasegate/phasegate/internal/history"
	"github.com/phasegate/phasegate/internal/outcome"
	"github.com/phasegate/phasegate/internal/report"
)

// A pull request from a fork runs pull_request with a read-only token, so
// its run cannot set the statuses that branch protection waits for. As the
// test-result publishing actions do, that run saves its results as a file
// (input results-file, uploaded with actions/upload-artifact), and a
// privileged run of a workflow_run workflow publishes them: it downloads
// the file, reads (never runs) a checkout of the head commit the
// unprivileged run checked, verified against the workflow_run payload, and
// sets phasegate/contracts from checking it and phasegate/decisions from
// the API (decide.SyncCommit).

const resultsVersion = 1

// maxResults bounds the results file read: it is a few hundred bytes, and
// it comes from a run the pull request's author controls.
const maxResults = 64 << 10

type results struct {
	Version     int    `json:"version"`
	Repository  string `json:"repository"`
	HeadSHA     string `json:"head_sha"`
	PullRequest int    `json:"pull_request,omitempty"`
	Event       string `json:"event"`
	Verdict     string `json:"verdict"`
	Description string `json:"description"`
	Artifacts   int    `json:"artifacts"`
	Errors      int    `json:"errors"`
	Warnings    int    `json:"warnings"`
	// Published: the run set both statuses itself; nothing is left to
	// publish.
	Published bool `json:"published"`
}

// saveResults writes the results file and the results-file output.
func (r *run) saveResults(cr *commitRun, rep report.Report) {
	errs, warns := check.Count(rep.Findings)
	res := results{Version: resultsVersion, Repository: r.owner + "/" + r.repo, HeadSHA: cr.SHA, PullRequest: cr.PRNumber(), Event: cr.event,
		Verdict: string(rep.Verdict.Verdict), Description: ghclient.StatusDescription(checkjob.ContractsTitle(rep)),
		Artifacts: rep.Artifacts, Errors: errs, Warnings: warns, Published: len(r.statuses) == 2}
	data, err := report.EncodeJSON(res)
	if err != nil {
		r.a.Errorf("phasegate: encoding the results: %s", oneLine(err.Error()))
		r.sum.Failed = true
		return
	}
	p := filepath.Join(r.workspace(), cr.in.resultsFile)
	name, _ := inWorkspace(cr.in.resultsFile) // checked by readInputs
	// Through an os.Root: a symbolic link in the checked-out change (a
	// fork's) cannot send the write out of the workspace.
	if err = writeInWorkspace(r.workspace(), name, data); err != nil {
		r.a.Errorf("phasegate: saving the results to %s: %s", report.Terminal(p), oneLine(err.Error()))
		r.sum.Notes = append(r.sum.Notes, "the results could not be saved to "+cr.in.resultsFile+": "+err.Error())
		r.sum.Failed = true
		return
	}
	// The output is the path as given: relative to the workspace, as the
	// steps outside the action's container (upload-artifact) see it.
	r.a.SetOutput("results-file", cr.in.resultsFile)
	if !res.Published {
		r.sum.Notes = append(r.sum.Notes, "the results were saved to "+cr.in.resultsFile+" for a workflow_run workflow to publish")
	}
}

// readResults reads and strictly decodes a results file: at most
// maxResults bytes, one JSON object, no unknown field.
func readResults(p string) (results, error) {
	var res results
	data, err := readLimited(p, "the results file", maxResults)
	if err != nil {
		return res, err
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&res); err != nil {
		return res, fmt.Errorf("decoding the results file %s: %w", p, err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return res, fmt.Errorf("decoding the results file %s: data after the results", p)
	}
	switch {
	case res.Version != resultsVersion:
		return res, fmt.Errorf("the results file %s has version %d; this phasegate reads version %d (use the same phasegate version in both workflows)", p, res.Version, resultsVersion)
	case !fullSHA(res.HeadSHA):
		return res, fmt.Errorf("the results file %s names no full commit sha", p)
	case res.Verdict != string(gate.Ship) && res.Verdict != string(gate.Advisory) && res.Verdict != string(gate.Hold):
		return res, fmt.Errorf("the results file %s has verdict %q, not SHIP, ADVISORY or HOLD", p, report.Terminal(res.Verdict))
	case res.PullRequest < 0 || res.Artifacts < 0 || res.Errors < 0 || res.Warnings < 0:
		return res, fmt.Errorf("the results file %s has a negative count", p)
	}
	// One line of printable text, at most GitHub's 140 characters.
	res.Description = ghclient.StatusDescription(oneLine(res.Description))
	return res, nil
}

func fullSHA(s string) bool { return len(s) == 40 && strings.Trim(s, "0123456789abcdef") == "" }

// publishResults handles workflow_run: it publishes the results file that
// a read-only run saved, on the head commit that run checked.
func (r *run) publishResults(ctx context.Context, in inputs, ev event) int {
	if !r.setup(in) {
		return exitCouldNot
	}
	wr := ev.WorkflowRun
	if wr == nil {
		r.a.Errorf("%s", "phasegate: the workflow_run event has no workflow_run")
		return exitCouldNot
	}
	if in.resultsFile == "" {
		r.a.Errorf("%s", "phasegate: on workflow_run, the input results-file names the results file the pull request's run saved (download it with actions/download-artifact first)")
		return exitCouldNot
	}
	headline, code := r.publishFile(ctx, in, ev, r.owner+"/"+r.repo, cmp.Or(wr.HTMLURL, r.runURL()))
	if p := r.getenv("GITHUB_STEP_SUMMARY"); p != "" {
		rs := r.runSummary(wr.HeadSHA)
		var b strings.Builder
		if err := report.RunMarkdown(&b, headline, *rs); err == nil {
			r.a.AddStepSummary(b.String())
		}
	}
	return code
}

// verifyHead checks the artifacts of the head commit in the workspace,
// which must be a checkout of exactly that commit (actions/checkout with
// ref: the workflow_run's head_sha and persist-credentials: false:
// phasegate reads the files, it runs nothing of them), with the config of
// the default branch.
func (r *run) verifyHead(ctx context.Context, in inputs, sha string) (report.Report, error) {
	workspace := r.workspace()
	head, _, err := history.Head(workspace)
	if err != nil || head != sha {
		return report.Report{}, fmt.Errorf("the workspace is not a checkout of %s (check it out with actions/checkout, ref: the workflow_run's head_sha, persist-credentials: false): "+
			"the verdict is checked here, never taken from the pull request's own run", outcome.ShortSHA(sha))
	}
	j, err := r.job(in)
	if err != nil {
		return report.Report{}, err
	}
	out, err := j.Check(ctx, r.gh, checkjob.Request{Owner: r.owner, Repo: r.repo, SHA: sha, Root: filepath.Join(workspace, filepath.FromSlash(in.path))})
	if err != nil {
		return report.Report{}, fmt.Errorf("checking %s: %w", outcome.ShortSHA(sha), err)
	}
	return out.Report, nil
}

// publishFile verifies and publishes the results file; it returns the job
// summary's headline and the exit code.
func (r *run) publishFile(ctx context.Context, in inputs, ev event, repository, target string) (string, int) {
	wr := ev.WorkflowRun
	refuse := func(err error) (string, int) {
		r.sum.Failed = true
		r.a.Errorf("phasegate: refusing to publish: %s", oneLine(err.Error()))
		r.sum.Failures = append(r.sum.Failures, "refused to publish: "+err.Error())
		// A head that waits for statuses must not wait forever: say why on
		// it, with a state that never lets it merge.
		if fullSHA(wr.HeadSHA) && (wr.Repository == nil || strings.EqualFold(wr.Repository.FullName, repository)) {
			st := ghclient.Status{Context: decide.ContextContracts, State: "error", TargetURL: target,
				Description: "phasegate could not publish the pull request's results: " + oneLine(err.Error())}
			if err := r.setStatus(ctx, wr.HeadSHA, st); err != nil {
				r.apiError("set the "+decide.ContextContracts+" status", err)
			}
		}
		return "the results could not be published", exitCouldNot
	}
	if wr.Repository != nil && !strings.EqualFold(wr.Repository.FullName, repository) {
		return refuse(fmt.Errorf("the workflow run belongs to %s, not %s", report.Terminal(wr.Repository.FullName), repository))
	}
	if !fullSHA(wr.HeadSHA) {
		return refuse(fmt.Errorf("the workflow_run event names no head commit"))
	}
	res, err := readResults(filepath.Join(r.workspace(), in.resultsFile))
	if err != nil {
		return refuse(err)
	}
	if !strings.EqualFold(res.Repository, repository) {
		return refuse(fmt.Errorf("the results file is about %s, not %s", report.Terminal(res.Repository), repository))
	}
	if res.HeadSHA != wr.HeadSHA {
		return refuse(fmt.Errorf("the results file is about commit %s, but the workflow run checked %s", outcome.ShortSHA(res.HeadSHA), outcome.ShortSHA(wr.HeadSHA)))
	}
	if res.Published {
		r.a.Noticef("phasegate: the run of %s published its statuses itself: nothing to do", outcome.ShortSHA(res.HeadSHA))
		return "nothing to publish: the run published its statuses itself", exitOK
	}
	if wr.HeadRepository != nil && !strings.EqualFold(wr.HeadRepository.FullName, repository) {
		r.sum.Skipped = append(r.sum.Skipped, "outcome posting: the head comes from the fork "+wr.HeadRepository.FullName+", and phasegate never posts a fork's outcomes")
	}
	// The file's verdict is the pull request's own word: a fork's run uses
	// the fork's workflow file, so it can save SHIP for anything. The
	// contracts status comes from checking the head here, in a checkout of
	// it (read, never run); the file only says which head.
	rep, err := r.verifyHead(ctx, in, res.HeadSHA)
	if err != nil {
		return refuse(err)
	}
	if verdict := rep.Verdict.Verdict; verdict != gate.Verdict(res.Verdict) {
		r.a.Warningf("phasegate: the results file says %s but checking %s gives %s: publishing %s", report.Terminal(res.Verdict), outcome.ShortSHA(res.HeadSHA), verdict, verdict)
	}
	if err := r.setStatus(ctx, res.HeadSHA, contractsStatus(rep, target)); err != nil {
		r.apiError("set the "+decide.ContextContracts+" status", err)
	}
	// phasegate/decisions comes from the API, never from the file: the
	// open pull request whose head this is, read back from GitHub.
	opts := decide.CommitOptions{TargetURL: target}
	if res.PullRequest > 0 {
		pr, err := r.gh.PullRequest(ctx, r.owner, r.repo, res.PullRequest)
		if err == nil && pr.State == "open" && pr.HeadSHA == res.HeadSHA {
			opts.PR = &pr
		}
	}
	r.syncDecisions(ctx, r.handler(in), res.HeadSHA, opts)
	what := "commit " + outcome.ShortSHA(res.HeadSHA)
	if opts.PR != nil {
		what = fmt.Sprintf("pull request #%d (%s)", opts.PR.Number, outcome.ShortSHA(res.HeadSHA))
	}
	r.a.Infof("phasegate: published %s for %s\n", res.Verdict, what)
	if r.sum.Failed {
		return "published " + res.Verdict + " for " + what + ", with failures", exitCouldNot
	}
	return "published " + res.Verdict + " for " + what, exitOK
}
