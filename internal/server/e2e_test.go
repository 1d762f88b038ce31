package server

import (
	"net/http"
	"strings"
	"testing"

	"github.com/phasegate/phasegate/internal/decide"
	"github.com/phasegate/phasegate/internal/ghfake"
	"github.com/phasegate/phasegate/internal/outcome"
	"github.com/phasegate/phasegate/internal/testutil/outcometest"
)

const (
	featureIssue = 42
	prNumber     = 100
	headSHA      = "feedfacefeedfacefeedfacefeedfacefeedface"
	addedSHA     = "0123456789abcdef0123456789abcdef01234567"
	source       = "outcomes/feature-042-requirements.outcome.yaml"
)

// seedFeature is a feature issue as the action leaves it after a push: the
// pull request that added the outcome, the outcome comment posted by the
// App, the issue labelled pending; alice may decide. It returns the
// outcome comment's id.
func seedFeature(t testing.TB, f *ghfake.Server) int64 {
	t.Helper()
	f.AddPullRequest(owner, repo, ghfake.PullRequest{Number: prNumber, HeadSHA: headSHA, BaseSHA: addedSHA, Author: "agent-bot"})
	f.AddCommit(owner, repo, ghfake.Commit{SHA: addedSHA, Author: "agent-bot", Committer: "agent-bot", Files: []ghfake.File{{Filename: source, Status: "added"}}})
	f.SetPermission(owner, repo, "alice", "write")
	id := postOutcome(t, f)
	f.LabelIssue(owner, repo, featureIssue, "phasegate:pending")
	return id
}

// postOutcome posts the seed outcome on the feature issue as the App, as
// the action (or the App) would have.
func postOutcome(t testing.TB, f *ghfake.Server) int64 {
	t.Helper()
	return postOutcomeOn(t, f, featureIssue, source, addedSHA)
}

// postOutcomeOn posts the seed outcome for feature-<issue> on that issue as
// the App, for a push of commit that added src.
func postOutcomeOn(t testing.TB, f *ghfake.Server, issue int, src, commit string) int64 {
	t.Helper()
	yaml := outcometest.SeedFor(issue)
	body, _ := outcometest.Render(t, yaml, outcome.Meta{Source: src, Commit: commit, PR: prNumber, Actors: []string{"agent-bot"}})
	f.SetFile(owner, repo, commit, src, []byte(yaml))
	// The pull request's head carries the file.
	f.SetFile(owner, repo, headSHA, src, []byte(yaml))
	f.AddPullRequestFile(owner, repo, prNumber, ghfake.File{Filename: src, Status: "added"})
	return f.AddComment(owner, repo, issue, appBot, body)
}

// TestCommandEndToEnd drives a /resolve through the webhook, the real
// decision handler and the real GitHub client against the fake GitHub.
func TestCommandEndToEnd(t *testing.T) {
	t.Parallel()
	h := newHarness(t, func(c *Config) { c.NewDecider = nil }) // the real decide.Handler
	f := h.fake
	// The repository's config names no identity: the App's own (learnt
	// from GET /app) is the one whose comments count.
	outcomeID := seedFeature(t, f)
	const command = "Read it through.\n/resolve D-001 approve"
	commentID := f.AddComment(owner, repo, featureIssue, "alice", command)

	h.start()
	h.waitReady()
	payload := commentEvent("created", featureIssue, commentID, "alice", "alice", command)
	const id = "e2e-delivery"
	if code, body := h.send(delivery{event: "issue_comment", id: id, body: payload}); code != http.StatusAccepted {
		t.Fatalf("answer %d %q", code, body)
	}
	if d := h.waitJobs(1)[0]; d.outcome != "ok" {
		t.Fatalf("job %+v; logs:\n%s", d, h.logs.String())
	}
	if code, body := h.send(delivery{event: "issue_comment", id: id, body: payload}); code != http.StatusOK || body != "duplicate" {
		t.Fatalf("replay: %d %q", code, body)
	}

	var resolutions []ghfake.Comment
	for _, c := range f.Comments(owner, repo, featureIssue) {
		if strings.Contains(c.Body, "phasegate:resolution v1") {
			resolutions = append(resolutions, c)
		}
	}
	if len(resolutions) != 1 {
		t.Fatalf("%d resolution comments, want 1", len(resolutions))
	}
	r := resolutions[0]
	if r.User != appBot || !strings.Contains(r.Body, "decision=D-001") || !strings.Contains(r.Body, "option=approve") || !strings.Contains(r.Body, "by=alice") {
		t.Fatalf("resolution by %s:\n%s", r.User, r.Body)
	}
	var reactions []string
	for _, re := range f.Reactions(commentID) {
		reactions = append(reactions, re.Content+" by "+re.User)
	}
	if got := strings.Join(reactions, ","); got != "" {
		t.Fatalf("reactions %s, want none: the resolution comment is the answer", got)
	}
	if st, ok := f.LatestStatus(owner, repo, headSHA, decide.ContextDecisions); !ok || st.State != "success" || st.Creator != appBot {
		t.Fatalf("%s = %+v", decide.ContextDecisions, st)
	}
	logged := false
	for _, l := range h.logs.lines("resolved") {
		logged = logged || l["decision"] == "D-001" && l["delivery"] == id && l["installation"] == float64(installation) && l["repository"] == "acme/shop"
	}
	if !logged {
		t.Fatalf("no log line with the delivery, installation, repository and decision:\n%s", h.logs.String())
	}

	// Someone edits the outcome comment: a tamper report.
	f.EditComment(outcomeID, "nothing to see here")
	if code, _ := h.send(delivery{event: "issue_comment", body: commentEvent("edited", featureIssue, outcomeID, appBot, "mallory", "nothing to see here")}); code != http.StatusAccepted {
		t.Fatalf("tamper delivery: %d", code)
	}
	if d := h.waitJobs(1)[0]; d.kind != kindTamper || d.outcome != "ok" {
		t.Fatalf("job %+v", d)
	}
	if _, m := h.get("/metrics"); !strings.Contains(m, `phasegate_tamper_reports_total{action="edited"} 1`) {
		t.Fatal("tamper not counted")
	}
}

// TestMergeGroupEndToEnd: a merge queue waits for phasegate/decisions on
// the merge group's commit; merge_group checks_requested sets it there,
// through the real decision handler, as a function of that commit.
func TestMergeGroupEndToEnd(t *testing.T) {
	t.Parallel()
	const groupSHA = "9999999999999999999999999999999999999999"
	h := newHarness(t, func(c *Config) { c.NewDecider = nil })
	f := h.fake
	seedFeature(t, f)
	// The merge group's commit carries the outcome the pull request added.
	f.SetCompare(owner, repo, "main", groupSHA, []ghfake.File{{Filename: source, Status: "added"}})
	// The App checks the merge group's change from its base_sha.
	f.SetCompare(owner, repo, addedSHA, groupSHA, []ghfake.File{{Filename: source, Status: "added"}})
	f.SetFile(owner, repo, groupSHA, source, []byte(outcometest.SeedFor(featureIssue)))
	h.start()
	h.waitReady()
	if code, body := h.send(delivery{event: "merge_group", id: "mg-1", body: mergeGroupEvent("checks_requested", groupSHA, addedSHA)}); code != http.StatusAccepted {
		t.Fatalf("answer %d %q", code, body)
	}
	if d := h.waitJobs(1)[0]; d.outcome != "ok" {
		t.Fatalf("job %+v; logs:\n%s", d, h.logs.String())
	}
	st, ok := f.LatestStatus(owner, repo, groupSHA, decide.ContextDecisions)
	if !ok || st.State != "pending" || st.Creator != appBot || !strings.Contains(st.TargetURL, "#issuecomment-") {
		t.Fatalf("%s on merge_group.head_sha = %+v (set %v), want pending by the App, linking the outcome", decide.ContextDecisions, st, ok)
	}
}
