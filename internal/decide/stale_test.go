package decide

import (
	"testing"

	"github.com/phasegate/phasegate/internal/ledger"
	"github.com/phasegate/phasegate/internal/outcome"
)

// TestCovers: what a push must change to make a resolution stale under
// decisions.invalidate_on_push: unit.
func TestCovers(t *testing.T) {
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
