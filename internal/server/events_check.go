package server

import (
	"fmt"
	"strings"
)

// needCommit names what the events about one commit must carry besides
// a repository (payload.matches).
func (p *payload) needCommit(event string, need func(string, bool)) {
	switch event {
	case "status":
		need("sha", p.SHA != "")
		need("context", p.Context != "")
		need("state", p.State != "")
	case "merge_group":
		need("merge_group.head_sha", p.MergeGroup != nil && p.MergeGroup.HeadSHA != "")
	case "push":
		need("ref", p.Ref != "")
		need("after", p.After != "")
	case "check_suite":
		need("check_suite.head_sha", p.CheckSuite != nil && p.CheckSuite.HeadSHA != "")
	case "check_run":
		need("check_run.head_sha", p.CheckRun != nil && p.CheckRun.HeadSHA != "")
	}
}

// repoURL is the repository's page as the payload names it, when it is a
// plain https URL ("" otherwise).
func repoURL(p *payload) string {
	if p.Repository == nil {
		return ""
	}
	u := p.Repository.HTMLURL
	if !strings.HasPrefix(u, "https://") && !strings.HasPrefix(u, "http://") || strings.ContainsAny(u, " \t\n\"'<>") {
		return ""
	}
	return strings.TrimSuffix(u, "/")
}

// checkFromPull fills what checking a pull request's head needs from the
// payload: its base, branch, author, and the fork it comes from.
func (j *job) checkFromPull(p *payload) {
	j.RepoURL = repoURL(p)
	pr := p.PullRequest
	if pr == nil {
		return
	}
	if hexSHA(pr.Base.SHA) {
		j.Base, j.BaseRef = strings.ToLower(pr.Base.SHA), pr.Base.Ref
	}
	j.Ref, j.Pusher = pr.Head.Ref, pr.User.Login
	if pr.Head.Repo != nil && !strings.EqualFold(pr.Head.Repo.FullName, j.Owner+"/"+j.Repo) {
		j.Fork = pr.Head.Repo.FullName
	}
}

// fromPush fills a check job for a pushed branch's new head; a deleted
// branch or a tag has nothing to check.
func (j *job) fromPush(p *payload) (ignored, error) {
	if p.Deleted || strings.Trim(p.After, "0") == "" {
		return "push deleted a branch", nil
	}
	if !strings.HasPrefix(p.Ref, "refs/heads/") {
		return ignored("push to " + clip(p.Ref) + ": not a branch"), nil
	}
	if !hexSHA(p.After) {
		return "", fmt.Errorf("%w: push.after is not a commit sha (%q)", errMalformed, clip(p.After))
	}
	j.SHA, j.Ref, j.RepoURL = strings.ToLower(p.After), p.Ref, repoURL(p)
	if hexSHA(p.Before) && strings.Trim(p.Before, "0") != "" {
		j.Base, j.BaseRef = strings.ToLower(p.Before), p.Ref
	}
	if p.Pusher != nil {
		j.Pusher = p.Pusher.Name
	}
	j.Kind = kindCheck
	return "", nil
}

// fromCheckSuite fills a check job for a check suite requested (a push) or
// re-requested, or a check run re-requested ("Re-run"): its head commit.
func (j *job) fromCheckSuite(p *payload) (ignored, error) {
	cs := p.CheckSuite
	if j.Event == "check_run" {
		if p.Action != "rerequested" {
			return ignored("check run " + clip(p.Action)), nil
		}
		cs = &checkSuite{HeadSHA: p.CheckRun.HeadSHA}
		if p.CheckRun.CheckSuite != nil {
			cs.HeadBranch, cs.Before = p.CheckRun.CheckSuite.HeadBranch, p.CheckRun.CheckSuite.Before
		}
	} else if p.Action != "requested" && p.Action != "rerequested" {
		return ignored("check suite " + clip(p.Action)), nil
	}
	if !hexSHA(cs.HeadSHA) {
		return "", fmt.Errorf("%w: %s head_sha is not a commit sha (%q)", errMalformed, j.Event, clip(cs.HeadSHA))
	}
	j.SHA, j.RepoURL = strings.ToLower(cs.HeadSHA), repoURL(p)
	if cs.HeadBranch != "" {
		j.Ref = "refs/heads/" + cs.HeadBranch
	}
	if hexSHA(cs.Before) && strings.Trim(cs.Before, "0") != "" {
		j.Base, j.BaseRef = strings.ToLower(cs.Before), j.Ref
	}
	j.Kind = kindCheck
	return "", nil
}

// fromReview fills a check job for a pull request review submitted or
// dismissed: an approval may let a change to the gate itself through
// (checkjob.RuleGateChange), a dismissal takes it back.
func (j *job) fromReview(p *payload) (ignored, error) {
	switch p.Action {
	case "submitted", "dismissed", "edited":
	default:
		return ignored("pull request review " + clip(p.Action)), nil
	}
	j.PR, j.SHA = p.PullRequest.Number, strings.ToLower(p.PullRequest.Head.SHA)
	if j.PR <= 0 || !hexSHA(j.SHA) {
		return "", fmt.Errorf("%w: pull_request_review without a pull request number or head", errMalformed)
	}
	j.checkFromPull(p)
	j.Kind = kindCheck
	return "", nil
}
