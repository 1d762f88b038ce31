// Package reconcile measures the reconcile pass over a busy repository (issue
// 20): 200 issues commented in the last 24 hours, 300 comments each, every
// one a phasegate thread with a pending decision, against the in-process fake
// GitHub (internal/ghfake) through the real client (internal/ghclient) and
// the real handler (internal/decide), as `phasegate serve` runs it. The first
// pass is the one after a restart (the whole 24-hour window); every later
// pass comes one interval after the previous one, after a few threads
// changed (a new comment each) and one of them got a /resolve whose delivery
// was lost. See bench/reconcile/README.md.
package reconcile

import (
	"fmt"
	"time"

	"github.com/phasegate/phasegate/internal/artifact"
	"github.com/phasegate/phasegate/internal/ghfake"
	"github.com/phasegate/phasegate/internal/outcome"
)

// The fixture.
const (
	Owner    = "acme"
	Repo     = "busy"
	Identity = "phasegate-bench[bot]"
	Token    = "bench-token"
	Approver = "alice"
)

// seedFor is a Phase Outcome for feature-<n>: one blocking approval.
func seedFor(n int) string {
	return fmt.Sprintf(`phase: requirements
feature: feature-%03d
produced:
  - artifact: PREQ
    location: issue body
findings: []
pending_decisions:
  - id: D-001
    type: approval
    question: "Approve PREQ for technical planning?"
    options: [approve, request-changes, reject]
    blocking: true
`, n)
}

// sha is a made-up commit id.
func sha(kind byte, i int) string { return fmt.Sprintf("%c%039x", kind, i) }

// outcomeComment renders the outcome comment of feature-<n> as phasegate
// posts it.
func outcomeComment(n, pr int, key []byte) (string, error) {
	src := seedFor(n)
	path := fmt.Sprintf("outcomes/feature-%03d-requirements.outcome.yaml", n)
	doc := artifact.Decode(path, artifact.KindByID("outcome.phase-outcome"), []byte(src), artifact.DefaultLimits)
	if !doc.Decoded {
		return "", fmt.Errorf("decoding the outcome of #%d: %v", n, doc.Problems)
	}
	o, err := outcome.Parse(doc.Value)
	if err != nil {
		return "", fmt.Errorf("parsing the outcome of #%d: %w", n, err)
	}
	canonical, err := outcome.Canonical(doc.Value)
	if err != nil {
		return "", fmt.Errorf("the canonical outcome of #%d: %w", n, err)
	}
	return outcome.Render(o, canonical, outcome.Meta{Source: path, Commit: sha('c', n), PR: pr, Key: key, Actors: []string{"agent-bot"}})
}

// chatter is the text of an ordinary comment: a few hundred bytes, like a
// review remark.
func chatter(issue, i int) string {
	return fmt.Sprintf("Comment %d on #%d: I had a look at the requirements again. The acceptance criteria read well; "+
		"the part about the export format could say which encodings are accepted, and the error messages should "+
		"name the file. Nothing blocking from my side, but please keep the changelog entry short.", i, issue)
}

// buildWorld fills the fake: the repository, one open pull request per
// issue carrying its outcome, and the issues, each labelled
// phasegate:pending, with its outcome comment and comments-1 more, spread
// over the 24 hours before the clock's time.
func buildWorld(f *ghfake.Server, clock *ghfake.ManualClock, o Options) error {
	f.AddToken(Token, Identity)
	f.AddUser(Identity, "Bot")
	f.AddRepo(Owner, Repo, "main")
	f.SetPermission(Owner, Repo, Approver, "write")
	f.SetPermission(Owner, Repo, "agent-bot", "write")
	f.SetFile(Owner, Repo, "main", ".github/phasegate.yml", []byte("identity: "+Identity+"\n"))
	start := clock.Now()
	clock.Advance(-24 * time.Hour)
	step := 24 * time.Hour / time.Duration(o.Issues*o.Comments+1)
	issues := make([]int, o.Issues)
	for i := range issues {
		issues[i] = f.AddIssue(Owner, Repo, fmt.Sprintf("feature-%03d", i+1), "", "agent-bot")
	}
	for i, n := range issues {
		pr := f.AddPullRequest(Owner, Repo, ghfake.PullRequest{HeadSHA: sha('d', n), BaseSHA: sha('b', 0), Author: "agent-bot"})
		path := fmt.Sprintf("outcomes/feature-%03d-requirements.outcome.yaml", n)
		f.AddCommit(Owner, Repo, ghfake.Commit{SHA: sha('c', n), Author: "agent-bot", Committer: "agent-bot",
			Files: []ghfake.File{{Filename: path, Status: "added"}}})
		f.SetFile(Owner, Repo, sha('c', n), path, []byte(seedFor(n)))
		f.SetFile(Owner, Repo, sha('d', n), path, []byte(seedFor(n)))
		f.SetPullRequestFiles(Owner, Repo, pr, []ghfake.File{{Filename: path, Status: "added"}})
		body, err := outcomeComment(n, pr, o.Key)
		if err != nil {
			return err
		}
		f.AddComment(Owner, Repo, n, Identity, body)
		f.LabelIssue(Owner, Repo, n, "phasegate:pending")
		_ = i
	}
	// The chatter, interleaved across the issues as a busy day's would be.
	for c := 1; c < o.Comments; c++ {
		for _, n := range issues {
			clock.Advance(step)
			f.AddComment(Owner, Repo, n, "reviewer", chatter(n, c))
		}
	}
	if d := start.Sub(clock.Now()); d > 0 {
		clock.Advance(d)
	}
	return nil
}
