package server

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/phasegate/phasegate/internal/decide"
	"github.com/phasegate/phasegate/internal/ghfake"
)

// TestAppTreeLimitsBoundTheChange: serve's tree limits (Config.TreeLimits)
// bound the checking job's reading of a change from its trees, not only the
// commit's files: a change GitHub lists in part (301 files, past a
// comparison's 300) whose trees hold more entries than the limit fails the
// check naming it, before the commit's files are read.
func TestAppTreeLimitsBoundTheChange(t *testing.T) {
	t.Parallel()
	h := newHarness(t, func(c *Config) {
		c.NewDecider = nil
		c.Publish = decide.PublishChecks
		c.TreeLimits.MaxEntries = 100
	})
	f := h.fake
	base := map[string]string{"README.md": "# shop\n"}
	head := map[string]string{"README.md": "# shop\n"}
	for i := range 301 {
		head[fmt.Sprintf("-pad/%04d.txt", i)] = "x\n"
	}
	f.SetTreeFiles(owner, repo, appBaseSHA, base)
	f.SetTreeFiles(owner, repo, appHead1, head)
	pr := f.AddPullRequest(owner, repo, ghfake.PullRequest{HeadSHA: appHead1, BaseSHA: appBaseSHA, HeadRef: "pad", BaseRef: "main", Author: "agent-bot"})
	h.start()
	h.waitReady()
	if code, answer := h.send(delivery{event: "pull_request", body: prOpenEvent("opened", pr, appHead1, appBaseSHA, "pad", "agent-bot")}); code != http.StatusAccepted {
		t.Fatalf("answer %d %q", code, answer)
	}
	h.waitJobs(1)
	c := newest(t, f, appHead1, decide.ContextContracts)
	if c.Conclusion != "failure" || !strings.Contains(c.Summary, "its trees could not be compared") || !strings.Contains(c.Summary, "the limit is MaxEntries 100") {
		t.Fatalf("contracts %s (%s), want a failure naming the change's trees and MaxEntries 100:\n%s", c.Conclusion, c.Title, c.Summary[:min(len(c.Summary), 2000)])
	}
}
