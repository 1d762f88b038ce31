package server

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/phasegate/phasegate/internal/checkjob"
	"github.com/phasegate/phasegate/internal/decide"
	"github.com/phasegate/phasegate/internal/ghfake"
)

// TestAppRedTeamChangeListedInPart is attack 2 of issue 30: GitHub lists
// at most 3,000 files of a pull request, in path order, so 3,005 padding
// files that sort before .github/ push an edit of .github/phasegate.yml
// (ignore everything) out of the listing. The App reads the whole change
// from the trees instead, and the edit of its gate holds the pull request
// like any other (it used to be a change.truncated warning and a neutral
// check).
func TestAppRedTeamChangeListedInPart(t *testing.T) {
	t.Parallel()
	h := newHarness(t, func(c *Config) { c.NewDecider = nil; c.Publish = decide.PublishChecks })
	f := h.fake
	const cfg = ".github/phasegate.yml"
	base := map[string]string{"README.md": "# shop\n", cfg: "rules: {}\n"}
	head := map[string]string{"README.md": "# shop\n", cfg: "ignore: [\"**\"]\n"}
	var files []ghfake.File
	for i := range 3005 {
		p := fmt.Sprintf("-pad/%04d.txt", i)
		head[p] = "x\n"
		files = append(files, ghfake.File{Filename: p, Status: "added"})
	}
	files = append(files, ghfake.File{Filename: cfg, Status: "modified"})
	f.SetTreeFiles(owner, repo, appBaseSHA, base)
	f.SetTreeFiles(owner, repo, appHead1, head)
	pr := f.AddPullRequest(owner, repo, ghfake.PullRequest{HeadSHA: appHead1, BaseSHA: appBaseSHA, HeadRef: "loosen", BaseRef: "main", Author: "agent-bot"})
	f.SetPullRequestFiles(owner, repo, pr, files)
	f.SetCompare(owner, repo, appBaseSHA, appHead1, files)
	h.start()
	h.waitReady()
	if code, answer := h.send(delivery{event: "pull_request", body: prOpenEvent("opened", pr, appHead1, appBaseSHA, "loosen", "agent-bot")}); code != http.StatusAccepted {
		t.Fatalf("answer %d %q", code, answer)
	}
	if d := h.waitJobs(1)[0]; d.outcome != "ok" {
		t.Fatalf("job %+v; logs:\n%s", d, h.logs.String())
	}
	c := newest(t, f, appHead1, decide.ContextContracts)
	held := false
	for _, a := range c.Annotations {
		held = held || (a.Title == checkjob.RuleGateChange && a.Path == cfg && a.Level == "failure")
	}
	if c.Conclusion != "failure" || !held {
		t.Fatalf("contracts %s (%s), want failure with a %s annotation on %s:\n%s", c.Conclusion, c.Title, checkjob.RuleGateChange, cfg, c.Summary[:min(len(c.Summary), 2000)])
	}
	if strings.Contains(c.Summary, "change.truncated") {
		t.Fatalf("a change read in full still says it was truncated:\n%s", c.Summary)
	}
}
