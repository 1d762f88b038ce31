package action

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"

	"github.com/phasegate/phasegate/internal/decide"
)

// setup reads the repository and makes the GitHub client: the decision
// commands cannot run without one.
func (r *run) setup(in inputs) bool {
	if !r.repository() {
		return false
	}
	if in.token == "" {
		r.a.Errorf("%s", "phasegate has no GitHub token (input token): decision commands cannot be handled")
		return false
	}
	return r.newClient(in.token)
}

func (r *run) handler(in inputs) *decide.Handler {
	return &decide.Handler{Key: []byte(r.getenv("PHASEGATE_SIGNING_KEY")), ConfigPath: in.config, Now: r.opts.Now, Logger: r.logger()}
}

// decide handles an issue_comment event: a created comment's commands. The
// workflow's concurrency group (one per issue) serialises runs on an issue.
func (r *run) decide(ctx context.Context, in inputs, ev event) int {
	if !r.setup(in) {
		return exitCouldNot
	}
	if ev.Action != "created" {
		r.a.Noticef("phasegate: comment %s, not created: nothing to do (only new comments are acted on)", oneLine(ev.Action))
		return exitOK
	}
	var labels []string
	if ev.Issue.Labels != nil {
		labels = []string{}
		for _, l := range ev.Issue.Labels {
			labels = append(labels, l.Name)
		}
	}
	res, err := r.handler(in).HandleComment(ctx, r.gh, decide.Event{
		Owner: r.owner, Repo: r.repo, Issue: ev.Issue.Number, Delivery: "run-" + r.getenv("GITHUB_RUN_ID"), Labels: labels,
		Comment: decide.Comment{ID: ev.Comment.ID, Author: ev.Comment.User.Login, Bot: ev.Comment.User.Type == "Bot", Body: ev.Comment.Body},
	})
	r.resolutions(res)
	if err != nil {
		r.a.Errorf("phasegate could not finish handling comment %d (the scheduled reconcile will): %s", ev.Comment.ID, oneLine(err.Error()))
		return exitCouldNot
	}
	r.a.Infof("phasegate: %d resolutions, %d replies, %d captured issues\n", res.Resolutions, res.Replies, res.Captured)
	return exitOK
}

// reconcile (schedule, workflow_dispatch) applies every command on the
// pending issues that has no answer yet: a lost event loses nothing.
func (r *run) reconcile(ctx context.Context, in inputs) int {
	if !r.setup(in) {
		return exitCouldNot
	}
	res, err := r.handler(in).ReconcileRepo(ctx, r.gh, r.owner, r.repo)
	r.resolutions(res)
	if res.Tampered > 0 {
		r.a.Warningf("phasegate: %d edited phasegate comments no longer count", res.Tampered)
	}
	if err != nil {
		r.a.Errorf("phasegate could not finish reconciling: %s", oneLine(err.Error()))
		return exitCouldNot
	}
	r.a.Infof("phasegate reconcile: %d resolutions, %d replies, %d captured issues, %d already answered\n", res.Resolutions, res.Replies, res.Captured, res.Skipped)
	return exitOK
}

// resolutions sets the resolutions output and warns when a resolution's
// dispatch was refused.
func (r *run) resolutions(res decide.Result) {
	r.a.SetOutput("resolutions", fmt.Sprint(res.Resolutions))
	if res.DispatchDenied > 0 {
		r.a.Warningf("%s", "phasegate: the token may not send repository_dispatch (it needs contents: write in the workflow's permissions), so the pipeline waiting for this decision was not told; the resolution itself stands")
	}
}

// readEvent reads the event payload at p (GITHUB_EVENT_PATH).
func readEvent(p string) (event, error) {
	var ev event
	if p == "" {
		return ev, fmt.Errorf("GITHUB_EVENT_PATH is not set")
	}
	data, err := readLimited(p, "the event", maxEvent)
	if err == nil {
		if err = json.Unmarshal(data, &ev); err != nil {
			err = fmt.Errorf("decoding the event %s: %w", p, err)
		}
	}
	return ev, err
}

// readLimited reads the file p, what names it, refusing one larger than
// limit bytes without reading more.
func readLimited(p, what string, limit int) ([]byte, error) {
	f, err := os.Open(p)
	if err != nil {
		return nil, fmt.Errorf("reading %s %s: %w", what, p, err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, int64(limit)+1))
	if err == nil && len(data) > limit {
		err = fmt.Errorf("larger than %d bytes", limit)
	}
	if err != nil {
		return nil, fmt.Errorf("reading %s %s: %w", what, p, err)
	}
	return data, nil
}
