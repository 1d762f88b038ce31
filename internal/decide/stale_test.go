package decide

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/phasegate/phasegate/internal/ghfake"
	"github.com/phasegate/phasegate/internal/ledger"
	"github.com/phasegate/phasegate/internal/outcome"
)

// TestCovers: what a push must change to make a resolution stale under
// decisions.invalidate_on_push: unit.
func TestCovers(t *testing.T) {
	t.Parallel()
	o := &ledger.Outcome{Source: ".devwork/feature-042/requirements.outcome.yaml", Outcome: &outcome.Outcome{Produced: []outcome.Produced{
		{Artifact: "PREQ", Location: "issue body"},
		{Artifact: "plan", Location: "docs/plans/feature-042.md"},
		{Artifact: "code", Location: "./src/avatar/"},
		{Artifact: "escape", Location: "../etc/passwd"},
		{Artifact: "url", Location: "https://example.com/x"},
	}}}
	root := &ledger.Outcome{Source: "root.outcome.yaml", Outcome: &outcome.Outcome{}}
	tests := []struct {
		name string
		o    *ledger.Outcome
		file string
		want bool
	}{
		{name: "a file of the outcome's directory", o: o, file: ".devwork/feature-042/preq.md", want: true},
		{name: "a file below it", o: o, file: ".devwork/feature-042/notes/a.md", want: true},
		{name: "the next phase's outcome beside it", o: o, file: ".devwork/feature-042/technical-plan.outcome.yaml", want: false},
		{name: "a sibling directory with the same prefix", o: o, file: ".devwork/feature-0420/preq.md", want: false},
		{name: "a produced file", o: o, file: "docs/plans/feature-042.md", want: true},
		{name: "under a produced directory", o: o, file: "src/avatar/upload.go", want: true},
		{name: "a produced location that is no path", o: o, file: "issue body", want: false},
		{name: "a path outside the repository is never a location", o: o, file: "etc/passwd", want: false},
		{name: "elsewhere", o: o, file: "README.md", want: false},
		{name: "an outcome at the root covers everything but outcomes", o: root, file: "README.md", want: true},
		{name: "an outcome at the root and another outcome", o: root, file: "next.outcome.yaml", want: false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := covers(tc.o, tc.file); got != tc.want {
				t.Errorf("covers(%s) = %v, want %v", tc.file, got, tc.want)
			}
		})
	}
}

// TestStaleModes: decisions.invalidate_on_push decides which pushes after
// an approval make phasegate/decisions pending again on the new head.
func TestStaleModes(t *testing.T) {
	t.Parallel()
	const moved = "abad1deaabad1deaabad1deaabad1deaabad1dea"
	tests := []struct {
		name, config string
		option       string // D-001's resolution; "" approve
		changed      string
		want         string // the state on the new head
	}{
		{name: "unit, a reject and a file of the outcome's directory", option: "reject", changed: "outcomes/preq.md", want: "failure"},
		{name: "unit, a file of the outcome's directory", changed: "outcomes/preq.md", want: "pending"},
		{name: "unit, a file elsewhere", changed: "src/app.go", want: "success"},
		{name: "unit, the next phase's outcome", changed: "outcomes/feature-042-technical-plan.outcome.yaml", want: "success"},
		{name: "all, a file elsewhere", config: "all", changed: "src/app.go", want: "pending"},
		{name: "none, a file of the outcome's directory", config: "none", changed: "outcomes/preq.md", want: "success"},
		{name: "unit, history rewritten", changed: "", want: "pending"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel() // its own fake GitHub
			w := newWorld(t)
			if tc.config != "" {
				w.fake.SetFile(owner, repo, "main", ".github/phasegate.yml", []byte("decisions:\n  invalidate_on_push: "+tc.config+"\n"))
			}
			w.postOutcome(seed, source, bot)
			option, before := "approve", "success"
			if tc.option != "" {
				option, before = tc.option, "failure"
			}
			w.say("alice", "/resolve D-001 "+option)
			if st, _ := w.fake.LatestStatus(owner, repo, headSHA, ContextDecisions); st.State != before {
				t.Fatalf("after the resolution: %+v, want %s", st, before)
			}
			w.fake.SetFile(owner, repo, moved, source, []byte(seed))
			w.fake.Push(owner, repo, ghfake.Push{Ref: "feature-100", After: moved, Actor: "agent-bot"})
			cmp := ghfake.Comparison{Files: []ghfake.File{{Filename: tc.changed, Status: "modified"}}}
			if tc.changed == "" {
				cmp = ghfake.Comparison{Status: "diverged", AheadBy: 1, BehindBy: 1, Files: []ghfake.File{{Filename: "src/app.go", Status: "modified"}}}
			}
			w.fake.SetComparison(owner, repo, headSHA, moved, cmp)
			if err := w.h.SyncPullRequest(context.Background(), w.gh, owner, repo, prNumber); err != nil {
				t.Fatal(err)
			}
			st, _ := w.fake.LatestStatus(owner, repo, moved, ContextDecisions)
			if st.State != tc.want {
				t.Errorf("phasegate/decisions on the new head = %+v, want %s", st, tc.want)
			}
			if tc.want == "pending" && (!strings.Contains(st.Description, "D-001 (approve on "+headSHA[:12]+") is stale") || !strings.Contains(st.Description, "/resolve D-001 approve")) {
				t.Errorf("description %q does not name the decision, the commit and the command", st.Description)
			}
		})
	}
}

// TestStaleFailsClosed: when GitHub cannot compare the commit an approval
// was given on with the new head, phasegate/decisions is error, never
// success.
func TestStaleFailsClosed(t *testing.T) {
	t.Parallel()
	const moved = "abad1deaabad1deaabad1deaabad1deaabad1dea"
	w := newWorld(t)
	w.postOutcome(seed, source, bot)
	w.say("alice", "/resolve D-001 approve")
	w.fake.SetFile(owner, repo, moved, source, []byte(seed))
	w.fake.Push(owner, repo, ghfake.Push{Ref: "feature-100", After: moved, Actor: "agent-bot"})
	w.fake.FailNext(20, 500, "/compare/"+headSHA+"...") // the approval's commit with the new head
	if err := w.h.SyncPullRequest(context.Background(), w.gh, owner, repo, prNumber); err == nil {
		t.Error("SyncPullRequest succeeded although the comparison failed")
	}
	if st, _ := w.fake.LatestStatus(owner, repo, moved, ContextDecisions); st.State != "error" {
		t.Errorf("phasegate/decisions on the new head = %+v, want error", st)
	}
}

// TestChangedSinceApproval: the page of an issue lists what a push after an
// approval changed that the decision covers, read from the comparison of
// the commit it was given on with the pull request's new head.
func TestChangedSinceApproval(t *testing.T) {
	t.Parallel()
	const moved = "abad1deaabad1deaabad1deaabad1deaabad1dea"
	given := "given on " + headSHA[:12] + "; the head is now " + moved[:12]
	tests := []struct {
		name string
		cmp  ghfake.Comparison
		want []string
	}{
		{name: "a file the decision covers", cmp: ghfake.Comparison{Files: []ghfake.File{{Filename: "outcomes/preq.md", Status: "modified"}}},
			want: []string{given, "outcomes/preq.md"}},
		{name: "a file elsewhere", cmp: ghfake.Comparison{Files: []ghfake.File{{Filename: "src/app.go", Status: "modified"}}}},
		{name: "history rewritten", cmp: ghfake.Comparison{Status: "diverged", AheadBy: 1, BehindBy: 1, Files: []ghfake.File{{Filename: "src/app.go", Status: "modified"}}},
			want: []string{given, "the branch's history was rewritten since"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel() // its own fake GitHub
			w := newWorld(t)
			w.postOutcome(seed, source, bot)
			w.say("alice", "/resolve D-001 approve")
			w.fake.SetFile(owner, repo, moved, source, []byte(seed))
			w.fake.Push(owner, repo, ghfake.Push{Ref: "feature-100", After: moved, Actor: "agent-bot"})
			w.fake.SetComparison(owner, repo, headSHA, moved, tc.cmp)
			ctx := context.Background()
			in, err := w.h.Inspect(ctx, w.gh, owner, repo, w.issue)
			if err != nil {
				t.Fatal(err)
			}
			o := in.State.Outcomes[0]
			got, err := w.h.ChangedSinceApproval(ctx, w.gh, owner, repo, in, o, o.Decision("D-001"))
			if err != nil || !slices.Equal(got, tc.want) {
				t.Errorf("ChangedSinceApproval = %q, %v; want %q", got, err, tc.want)
			}
		})
	}
}
