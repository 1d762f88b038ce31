package decide

import (
	"cmp"
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/phasegate/phasegate/internal/ghclient"
	"github.com/phasegate/phasegate/internal/outcome"
)

// Where phasegate records its gates and anchors on a commit (Handler.Publish).
const (
	// PublishStatuses writes commit statuses: the action's way (its token
	// cannot own check runs that no workflow could forge).
	PublishStatuses = "statuses"
	// PublishChecks writes check runs of the App: only the App that
	// created a check run can update it, and a ruleset can require a check
	// from that App alone. The App's default.
	PublishChecks = "checks"
	// PublishBoth writes both, for branch protection that requires the
	// statuses while a ruleset moves to the checks.
	PublishBoth = "both"
)

// PublishModes are the accepted values of Handler.Publish (and serve's
// --publish).
var PublishModes = []string{PublishChecks, PublishStatuses, PublishBoth}

// externalPrefix marks the state a check run records in its external_id,
// so that the state reads back exactly (a check run has no "pending" or
// "error" conclusion).
const externalPrefix = "phasegate:"

// Record is what a check run of the App records in its external_id:
// "phasegate:<state>", then for phasegate/contracts ";in=<digest>" (the
// checked input's, checkjob.Input) and ";pr=<n>" (the pull request it was
// checked as). 99 characters at most.
type Record struct {
	State string
	// Input is the digest of the input the result stands for ("": not
	// recorded, as before issue 30: it matches no input).
	Input string
	// PR is the pull request the commit was checked as (0: none).
	PR int
}

// ExternalID is the check run's external_id of r.
func (r Record) ExternalID() string {
	id := externalPrefix + r.State
	if r.Input != "" {
		id += ";in=" + r.Input
	}
	if r.PR > 0 {
		id += ";pr=" + strconv.Itoa(r.PR)
	}
	return id
}

// RecordOf reads a check run's external_id back (false: not one of
// phasegate's). Only a check run of the App's own can be trusted to say
// what phasegate recorded; the caller checks whose it is.
func RecordOf(externalID string) (Record, bool) {
	rest, ok := strings.CutPrefix(externalID, externalPrefix)
	if !ok {
		return Record{}, false
	}
	parts := strings.Split(rest, ";")
	r := Record{State: parts[0]}
	for _, p := range parts[1:] {
		k, v, _ := strings.Cut(p, "=")
		switch k {
		case "in":
			r.Input = v
		case "pr":
			if n, err := strconv.Atoi(v); err == nil && n > 0 {
				r.PR = n
			}
		}
	}
	return r, true
}

func (h *Handler) useChecks() bool {
	return h.Publish == PublishChecks || h.Publish == PublishBoth
}

// writeRecord sets s on sha: a commit status, a check run of the App, or
// both (Handler.Publish).
func (h *Handler) writeRecord(ctx context.Context, gh GitHub, owner, repo, sha string, s ghclient.Status) error {
	_, err := h.publishRecord(ctx, gh, owner, repo, sha, s, 0, CheckRunOf(sha, s))
	return err
}

// publishRecord writes s on sha when statuses are published, and the check
// run cr when checks are (completing check run id, or a new one when id is
// 0, whose id it returns).
func (h *Handler) publishRecord(ctx context.Context, gh GitHub, owner, repo, sha string, s ghclient.Status, id int64, cr ghclient.CheckRun) (int64, error) {
	if h.Publish == "" || h.Publish == PublishStatuses || h.Publish == PublishBoth {
		if err := gh.CreateStatus(ctx, owner, repo, sha, s); err != nil {
			return 0, fmt.Errorf("setting %s on %s: %w", s.Context, outcome.ShortSHA(sha), err)
		}
	}
	switch {
	case !h.useChecks():
		return 0, nil
	case id != 0:
		if err := gh.UpdateCheckRun(ctx, owner, repo, id, cr); err != nil {
			return 0, fmt.Errorf("completing the %s check run on %s: %w", cr.Name, outcome.ShortSHA(sha), err)
		}
		return id, nil
	}
	id, err := gh.CreateCheckRun(ctx, owner, repo, cr)
	if err != nil {
		return 0, fmt.Errorf("creating the %s check run on %s: %w", cr.Name, outcome.ShortSHA(sha), err)
	}
	return id, nil
}

// recordHistory is phasegate's records of the given contexts on sha,
// newest first: the App's check runs when it publishes checks (only the App
// can write them, so they are what counts), else the commit's statuses;
// with both, the check runs and then the statuses.
func (h *Handler) recordHistory(ctx context.Context, gh GitHub, owner, repo, sha string, contexts ...string) ([]ghclient.Status, error) {
	if !h.useChecks() {
		return gh.StatusHistory(ctx, owner, repo, sha, contexts...)
	}
	var runs []ghclient.CheckRun
	for _, name := range contexts {
		got, err := gh.CheckRunHistory(ctx, owner, repo, sha, name)
		if err != nil {
			return nil, err
		}
		runs = append(runs, got...)
	}
	sort.SliceStable(runs, func(i, j int) bool { return runs[i].ID > runs[j].ID })
	out := make([]ghclient.Status, 0, len(runs))
	for _, r := range runs {
		out = append(out, StatusOf(r))
	}
	if h.Publish == PublishBoth {
		// Moving from statuses to checks: the anchors written as statuses
		// before still count (after the App's check runs).
		sts, err := gh.StatusHistory(ctx, owner, repo, sha, contexts...)
		if err != nil {
			return nil, err
		}
		out = append(out, sts...)
	}
	return out, nil
}

func (h *Handler) latestRecord(ctx context.Context, gh GitHub, owner, repo, sha, context string) (ghclient.Status, bool, error) {
	if !h.useChecks() {
		return gh.LatestStatus(ctx, owner, repo, sha, context)
	}
	hs, err := h.recordHistory(ctx, gh, owner, repo, sha, context)
	if err != nil || len(hs) == 0 {
		return ghclient.Status{}, false, err
	}
	return hs[0], true, nil
}

// CheckRunOf is the completed check run that records s on sha: success and
// failure as themselves, error as failure, and pending as action_required
// (a person must act: a required check that is never success meanwhile),
// with the state itself in external_id.
func CheckRunOf(sha string, s ghclient.Status) ghclient.CheckRun {
	conclusion := s.State
	switch s.State {
	case "pending":
		conclusion = "action_required"
	case "error":
		conclusion = "failure"
	}
	title := cmp.Or(s.Description, s.State)
	summary := fmt.Sprintf("**%s**: %s", s.State, s.Description)
	if s.TargetURL != "" {
		summary += "\n\nDetails: " + s.TargetURL
	}
	return ghclient.CheckRun{Name: s.Context, HeadSHA: sha, Status: "completed", Conclusion: conclusion,
		DetailsURL: s.TargetURL, ExternalID: Record{State: s.State}.ExternalID(), Title: ghclient.StatusDescription(title), Summary: summary}
}

// StatusOf reads a check run back as the record it is: its state from
// external_id (else from its conclusion), its title as the description, the
// App's login as the creator.
func StatusOf(r ghclient.CheckRun) ghclient.Status {
	rec, ok := RecordOf(r.ExternalID)
	state := rec.State
	if !ok {
		switch {
		case r.Status != "completed" || r.Conclusion == "action_required":
			state = "pending"
		case r.Conclusion == "success" || r.Conclusion == "neutral" || r.Conclusion == "skipped":
			state = "success"
		default:
			state = "failure"
		}
	}
	creator := ""
	if r.AppSlug != "" {
		creator = r.AppSlug + "[bot]"
	}
	return ghclient.Status{State: state, Context: r.Name, Description: r.Title, TargetURL: r.DetailsURL, Creator: creator}
}
