package server

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/phasegate/phasegate/internal/decide"
)

// TestAppRedTeamArchiveObeysNoGitattributes is attack 1 of issue 30 on the
// App: past DefaultArchiveOver files the App reads the commit's archive,
// which GitHub builds with git archive, so the commit's own .gitattributes
// could hide a HOLD artifact (export-ignore) or rewrite one (export-subst).
// The App reads the tree the listing names, so the broken sentinel report
// still holds the push, and the rewritten plan is checked as committed.
func TestAppRedTeamArchiveObeysNoGitattributes(t *testing.T) {
	t.Parallel()
	h := newHarness(t, func(c *Config) { c.NewDecider = nil; c.Publish = decide.PublishChecks })
	f := h.fake
	const hidden = ".pace/day-1/sentinel-report.yaml"
	head := map[string]string{
		"README.md":      "# shop\n",
		".gitattributes": hidden + " export-ignore\n",
		hidden:           "verdict: HOLD\n", // no findings, no sentinel_decision: an error
	}
	for i := range DefaultArchiveOver + 1 {
		// Files the checker reads (sniffed), each its own blob: identical
		// ones would be fetched once (the tree cache keeps blobs by id).
		head[fmt.Sprintf("notes/%03d.yaml", i)] = fmt.Sprintf("note: %d\n", i)
	}
	f.SetTreeFiles(owner, repo, appBaseSHA, map[string]string{"README.md": "# shop\n"})
	f.SetTreeFiles(owner, repo, appHead1, head)
	h.start()
	h.waitReady()
	if code, answer := h.send(delivery{event: "push", body: pushEvent("refs/heads/work", appBaseSHA, appHead1, false)}); code != http.StatusAccepted {
		t.Fatalf("answer %d %q", code, answer)
	}
	if d := h.waitJobs(1)[0]; d.outcome != "ok" {
		t.Fatalf("job %+v; logs:\n%s", d, h.logs.String())
	}
	if n := f.CountCalls("GET", "/repos/"+owner+"/"+repo+"/tarball/"); n == 0 {
		t.Fatalf("the App never read the archive: the attack's path was not taken")
	}
	c := newest(t, f, appHead1, decide.ContextContracts)
	found := false
	for _, a := range c.Annotations {
		// The schema's finding: the file was read as committed, not found
		// unreadable (which fails closed, but is not what merges).
		found = found || (a.Path == hidden && a.Level == "failure" && a.Title == "schema")
	}
	if c.Conclusion != "failure" || !found {
		t.Fatalf("contracts %s (%s), want failure with an error on %s (hidden from the archive by .gitattributes):\n%s", c.Conclusion, c.Title, hidden, c.Summary[:min(len(c.Summary), 2000)])
	}
}
