package action

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"

	"github.com/phasegate/phasegate/internal/decide"
)

// commentEvent is the part of an issue_comment payload phasegate reads.
type commentEvent struct {
	Action string `json:"action"`
	Issue  struct {
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

// setup reads the inputs and the repository and makes the GitHub client: the
// decision commands cannot run without one.
func (r *run) setup() (inputs, bool) {
	in, err := readInputs(r.a)
	if err != nil {
		r.a.Errorf("phasegate: %s", oneLine(err.Error()))
		return in, false
	}
	if !r.repository() {
		return in, false
	}
	if in.token == "" {
		r.a.Errorf("%s", "phasegate has no GitHub token (input token): decision commands cannot be handled")
		return in, false
	}
	if err := r.newClient(in.token); err != nil {
		r.a.Errorf("phasegate could not create a GitHub client: %s", oneLine(err.Error()))
		return in, false
	}
	return in, true
}

func (r *run) handler(in inputs) *decide.Handler {
	return &decide.Handler{Key: r.signingKey(), ConfigPath: in.config, Now: r.opts.Now, Logger: r.logger()}
}

// decide handles an issue_comment event: a created comment's commands. The
// workflow's concurrency group (one per issue) serialises runs on an issue.
func (r *run) decide(ctx context.Context) int {
	in, ok := r.setup()
	if !ok {
		return exitCouldNot
	}
	var ev commentEvent
	if err := readJSON(r.getenv("GITHUB_EVENT_PATH"), &ev); err != nil {
		r.a.Errorf("phasegate: %s", oneLine(err.Error()))
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
	r.a.SetOutput("resolutions", fmt.Sprint(res.Resolutions))
	if res.DispatchDenied > 0 {
		r.a.Warningf("%s", "phasegate: the token may not send repository_dispatch (it needs contents: write in the workflow's permissions), so the pipeline waiting for this decision was not told; the resolution itself stands")
	}
	if err != nil {
		r.a.Errorf("phasegate could not finish handling comment %d (the scheduled reconcile will): %s", ev.Comment.ID, oneLine(err.Error()))
		return exitCouldNot
	}
	r.a.Infof("phasegate: %d resolutions, %d replies, %d captured issues\n", res.Resolutions, res.Replies, res.Captured)
	return exitOK
}

// reconcile (schedule, workflow_dispatch) applies every command on the
// pending issues that has no answer yet: a lost event loses nothing.
func (r *run) reconcile(ctx context.Context) int {
	in, ok := r.setup()
	if !ok {
		return exitCouldNot
	}
	res, err := r.handler(in).ReconcileRepo(ctx, r.gh, r.owner, r.repo)
	r.a.SetOutput("resolutions", fmt.Sprint(res.Resolutions))
	if res.DispatchDenied > 0 {
		r.a.Warningf("%s", "phasegate: the token may not send repository_dispatch (it needs contents: write in the workflow's permissions), so the pipeline waiting for this decision was not told; the resolution itself stands")
	}
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

func readJSON(p string, v any) error {
	if p == "" {
		return fmt.Errorf("GITHUB_EVENT_PATH is not set")
	}
	f, err := os.Open(p)
	if err != nil {
		return fmt.Errorf("reading the event %s: %w", p, err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxEvent+1))
	if err != nil {
		return fmt.Errorf("reading the event %s: %w", p, err)
	}
	if len(data) > maxEvent {
		return fmt.Errorf("reading the event %s: larger than %d bytes", p, maxEvent)
	}
	if err := json.Unmarshal(data, v); err != nil {
		return fmt.Errorf("decoding the event %s: %w", p, err)
	}
	return nil
}
