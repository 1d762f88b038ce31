package server

import (
	"errors"
	"strings"
	"testing"
)

const (
	sha1st = "1111111111111111111111111111111111111111"
	sha2nd = "2222222222222222222222222222222222222222"
)

func pushEvent(ref, before, after string, deleted bool) []byte {
	r := repoJSON(owner, repo)
	r["html_url"] = "https://github.com/" + owner + "/" + repo
	return mustJSON(map[string]any{
		"ref": ref, "before": before, "after": after, "deleted": deleted, "created": false, "forced": false,
		"pusher": map[string]any{"name": "agent-bot", "email": "agent@example.com"}, "commits": []any{},
		"installation": map[string]any{"id": installation}, "repository": r, "sender": userJSON("agent-bot"),
	})
}

func checkSuiteEvent(action, head, branch, before string) []byte {
	return mustJSON(map[string]any{
		"action": action,
		"check_suite": map[string]any{"id": 5, "head_sha": head, "head_branch": branch, "before": before, "after": head,
			"status": "queued", "pull_requests": []any{}, "app": map[string]any{"id": appID, "slug": "phasegate"}},
		"installation": map[string]any{"id": installation}, "repository": repoJSON(owner, repo), "sender": userJSON("alice"),
	})
}

func checkRunEvent(action, head string) []byte {
	return mustJSON(map[string]any{
		"action": action,
		"check_run": map[string]any{"id": 9, "name": "phasegate/contracts", "head_sha": head, "status": "completed",
			"check_suite": map[string]any{"id": 5, "head_branch": "feature", "head_sha": head}},
		"installation": map[string]any{"id": installation}, "repository": repoJSON(owner, repo), "sender": userJSON("alice"),
	})
}

func reviewEvent(action string, number int, head string) []byte {
	return mustJSON(map[string]any{
		"action": action,
		"review": map[string]any{"id": 3, "state": "approved", "commit_id": head, "user": userJSON("carol")},
		"pull_request": map[string]any{"number": number, "head": map[string]any{"sha": head, "ref": "feature"},
			"base": map[string]any{"sha": sha1st}, "user": userJSON("agent-bot")},
		"installation": map[string]any{"id": installation}, "repository": repoJSON(owner, repo), "sender": userJSON("carol"),
	})
}

func forkPullRequestEvent(number int, head string) []byte {
	return mustJSON(map[string]any{
		"action": "opened", "number": number,
		"installation": map[string]any{"id": installation}, "repository": repoJSON(owner, repo), "sender": userJSON("stranger"),
		"pull_request": map[string]any{"number": number, "user": userJSON("stranger"),
			"head": map[string]any{"sha": head, "ref": "patch-1", "repo": map[string]any{"full_name": "stranger/shop"}},
			"base": map[string]any{"sha": sha1st}},
	})
}

// checkJobWant is what a check job holds.
type checkJobWant struct {
	kind                                           string
	pr                                             int
	sha, base, baseRef, ref, pusher, fork, repoURL string
}

// TestClassifyCheckEvents: every event that asks for a commit to be checked
// becomes one check job naming the commit, its base and branch, or is
// ignored with a reason, or refused as malformed.
func TestClassifyCheckEvents(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, event string
		body        []byte
		wantIgnored string
		wantErr     bool
		want        checkJobWant
	}{
		{name: "push to a branch", event: "push", body: pushEvent("refs/heads/feature", sha1st, sha2nd, false),
			want: checkJobWant{kind: kindCheck, sha: sha2nd, base: sha1st, baseRef: "refs/heads/feature", ref: "refs/heads/feature", pusher: "agent-bot", repoURL: "https://github.com/acme/shop"}},
		{name: "push creating a branch has no base", event: "push", body: pushEvent("refs/heads/feature", "0000000000000000000000000000000000000000", sha2nd, false),
			want: checkJobWant{kind: kindCheck, sha: sha2nd, ref: "refs/heads/feature", pusher: "agent-bot", repoURL: "https://github.com/acme/shop"}},
		{name: "push deleting a branch", event: "push", body: pushEvent("refs/heads/feature", sha1st, "0000000000000000000000000000000000000000", true),
			wantIgnored: "push deleted a branch"},
		{name: "push of a tag", event: "push", body: pushEvent("refs/tags/v1", sha1st, sha2nd, false),
			wantIgnored: "push to refs/tags/v1: not a branch"},
		{name: "push with a bad sha", event: "push", body: pushEvent("refs/heads/x", sha1st, "../../etc", false), wantErr: true},
		{name: "check suite requested", event: "check_suite", body: checkSuiteEvent("requested", sha2nd, "feature", sha1st),
			want: checkJobWant{kind: kindCheck, sha: sha2nd, base: sha1st, baseRef: "refs/heads/feature", ref: "refs/heads/feature"}},
		{name: "check suite re-requested", event: "check_suite", body: checkSuiteEvent("rerequested", sha2nd, "feature", sha1st),
			want: checkJobWant{kind: kindCheck, sha: sha2nd, base: sha1st, baseRef: "refs/heads/feature", ref: "refs/heads/feature"}},
		{name: "check suite completed", event: "check_suite", body: checkSuiteEvent("completed", sha2nd, "feature", sha1st),
			wantIgnored: "check suite completed"},
		{name: "check run re-requested", event: "check_run", body: checkRunEvent("rerequested", sha2nd),
			want: checkJobWant{kind: kindCheck, sha: sha2nd, ref: "refs/heads/feature"}},
		{name: "check run created", event: "check_run", body: checkRunEvent("created", sha2nd), wantIgnored: "check run created"},
		{name: "review submitted", event: "pull_request_review", body: reviewEvent("submitted", 7, sha2nd),
			want: checkJobWant{kind: kindCheck, pr: 7, sha: sha2nd, base: sha1st, ref: "feature", pusher: "agent-bot"}},
		{name: "review dismissed", event: "pull_request_review", body: reviewEvent("dismissed", 7, sha2nd),
			want: checkJobWant{kind: kindCheck, pr: 7, sha: sha2nd, base: sha1st, ref: "feature", pusher: "agent-bot"}},
		{name: "a pull request from a fork", event: "pull_request", body: forkPullRequestEvent(8, sha2nd),
			want: checkJobWant{kind: kindCheck, pr: 8, sha: sha2nd, base: sha1st, ref: "patch-1", pusher: "stranger", fork: "stranger/shop"}},
		{name: "a pull request ready for review", event: "pull_request", body: pullRequestEvent("ready_for_review", 7, sha2nd),
			want: checkJobWant{kind: kindCheck, pr: 7, sha: sha2nd}},
		{name: "a pull request closed", event: "pull_request", body: pullRequestEvent("closed", 7, sha2nd),
			wantIgnored: "pull request closed"},
		{name: "a pull request's base edited", event: "pull_request", body: prEvent30("edited", 7, sha2nd, "main", sha1st, "scratch"),
			want: checkJobWant{kind: kindCheck, pr: 7, sha: sha2nd, base: sha1st, baseRef: "main", ref: "work", pusher: "agent-bot", repoURL: "https://github.com/acme/shop"}},
		{name: "a pull request's title edited", event: "pull_request", body: prEvent30("edited", 7, sha2nd, "main", sha1st, ""),
			wantIgnored: "pull request edited: not its base"},
		{name: "a pull request edited with a null base change", event: "pull_request",
			body:        []byte(strings.Replace(string(prEvent30("edited", 7, sha2nd, "main", sha1st, "")), `"action":"edited"`, `"action":"edited","changes":{"base":null}`, 1)),
			wantIgnored: "pull request edited: not its base"},
		{name: "a push body sent as check_suite", event: "check_suite", body: pushEvent("refs/heads/x", sha1st, sha2nd, false), wantErr: true},
		{name: "a review body sent as pull_request", event: "pull_request", body: reviewEvent("submitted", 7, sha2nd), wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			j, why, err := classify(tt.event, "d-1", tt.body, appBot)
			switch {
			case tt.wantErr:
				if !errors.Is(err, errMalformed) {
					t.Fatalf("err %v, want malformed", err)
				}
				return
			case err != nil:
				t.Fatalf("classify: %v", err)
			case tt.wantIgnored != "":
				if string(why) != tt.wantIgnored || j != nil {
					t.Fatalf("ignored %q (job %v), want %q", why, j, tt.wantIgnored)
				}
				return
			case j == nil:
				t.Fatalf("ignored: %s", why)
			}
			got := checkJobWant{kind: j.Kind, pr: j.PR, sha: j.SHA, base: j.Base, baseRef: j.BaseRef, ref: j.Ref, pusher: j.Pusher, fork: j.Fork, repoURL: j.RepoURL}
			if got != tt.want {
				t.Fatalf("job %+v\nwant %+v", got, tt.want)
			}
			if j.Owner != owner || j.Repo != repo || j.Installation != installation {
				t.Fatalf("job names %s/%s (installation %d)", j.Owner, j.Repo, j.Installation)
			}
		})
	}
}
