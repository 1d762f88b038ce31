package ledger

import (
	"reflect"
	"strings"
	"testing"

	"github.com/phasegate/phasegate/internal/config"
	"github.com/phasegate/phasegate/internal/outcome"
)

// deployOutcome is an outcome of phase on issue with decisions given as
// "ID" (pending), "ID=option" (resolved) or "ID~" (not blocking).
func deployOutcome(phase string, issue int, decisions ...string) DeployOutcome {
	o := &Outcome{ID: phase, Outcome: &outcome.Outcome{Phase: phase}}
	for _, spec := range decisions {
		id, option, resolved := strings.Cut(spec, "=")
		d := &Decision{Decision: outcome.Decision{ID: strings.TrimSuffix(id, "~"), Blocking: !strings.HasSuffix(id, "~")}}
		if resolved {
			d.Resolution = &outcome.Resolution{Decision: id, Option: option}
		}
		o.Decisions = append(o.Decisions, d)
	}
	return DeployOutcome{Outcome: o, Issue: issue, Link: "https://github.example/acme/widgets/issues/" + strings.Repeat("1", issue%3+1)}
}

func TestDeploymentAnswer(t *testing.T) {
	t.Parallel()
	const sha, other = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
	checked := func(outcomes ...DeployOutcome) DeployState {
		return DeployState{SHA: sha, Checked: sha, Contracts: "SHIP", Read: sha, Outcomes: outcomes}
	}
	with := func(st DeployState, f func(*DeployState)) DeployState { f(&st); return st }
	uat := deployOutcome("uat", 7, "D-001")
	uat.Stale = []string{"D-001"}
	tests := []struct {
		name       string
		st         DeployState
		require    []string
		negative   []string
		want       string
		wantReason string
		wantWait   []string // "D-001#7", "D-001#7 stale"
	}{
		{name: "no outcome, contracts SHIP", st: checked(), want: DeployApprove},
		{name: "contracts ADVISORY, every decision resolved", st: with(checked(deployOutcome("qa", 5, "D-001=approve", "D-002=option-b")), func(s *DeployState) { s.Contracts = "ADVISORY" }), want: DeployApprove},
		{name: "a pending blocking decision waits", st: checked(deployOutcome("qa", 5, "D-001=approve", "D-002")), want: DeployWait,
			wantReason: "waiting for 1 blocking decision", wantWait: []string{"D-002#5"}},
		{name: "a non-blocking pending decision does not", st: checked(deployOutcome("qa", 5, "D-001=approve", "D-002~")), want: DeployApprove},
		{name: "a stale resolution waits, named stale", st: checked(uat), want: DeployWait, wantWait: []string{"D-001#7 stale"}},
		{name: "resolved negatively rejects", st: checked(deployOutcome("qa", 5, "D-001=reject", "D-002")), want: DeployReject, wantReason: "D-001 → reject (#5)"},
		{name: "configured negative option rejects", st: checked(deployOutcome("qa", 5, "D-001=decline")), negative: []string{"decline"}, want: DeployReject},
		{name: "default negative option approves once reconfigured", st: checked(deployOutcome("qa", 5, "D-001=reject")), negative: []string{"decline"}, want: DeployApprove},
		{name: "frozen thread rejects", st: with(checked(deployOutcome("qa", 5, "D-001=approve")), func(s *DeployState) { s.Frozen = "tampering on #5 (comment 9): edited" }),
			want: DeployReject, wantReason: "tampering on #5"},
		{name: "frozen rejects even with nothing pending elsewhere", st: with(checked(), func(s *DeployState) { s.Frozen = "tampering on #5 (comment 9): deleted" }), want: DeployReject},
		{name: "contracts HOLD waits", st: with(checked(deployOutcome("qa", 5, "D-001=approve")), func(s *DeployState) { s.Contracts = "HOLD" }),
			want: DeployWait, wantReason: "are HOLD"},
		{name: "an unknown verdict never approves", st: with(checked(), func(s *DeployState) { s.Contracts = "ship" }), want: DeployWait, wantReason: "are ship"},
		{name: "a commit never checked is never approved unchecked", st: with(checked(deployOutcome("qa", 5, "D-001=approve")), func(s *DeployState) { s.Checked, s.Contracts = "", "" }),
			want: DeployWait, wantReason: "has not checked commit aaaaaaaaaaaa"},
		{name: "the verdict of another commit is not this one's", st: with(checked(), func(s *DeployState) { s.Checked = other }),
			want: DeployWait, wantReason: "has not checked"},
		{name: "an answer for one commit is never reused for another", st: with(checked(deployOutcome("qa", 5, "D-001=approve")), func(s *DeployState) { s.Read = other }),
			want: DeployWait, wantReason: "not read for commit aaaaaaaaaaaa"},
		{name: "decisions read for another commit do not reject this one either", st: with(checked(deployOutcome("qa", 5, "D-001=reject")), func(s *DeployState) { s.Read = other }),
			want: DeployWait},
		{name: "no commit", st: DeployState{Contracts: "SHIP"}, want: DeployWait},
		{name: "unchecked lists what it also waits for", st: with(checked(deployOutcome("qa", 5, "D-003")), func(s *DeployState) { s.Checked = "" }),
			want: DeployWait, wantReason: "has not checked", wantWait: []string{"D-003#5"}},
		{name: "require: another phase's pending decision does not count", st: checked(deployOutcome("qa", 5, "D-001"), deployOutcome("uat", 7, "D-002=approve")),
			require: []string{"uat"}, want: DeployApprove},
		{name: "require: the required phase's pending decision waits", st: checked(deployOutcome("qa", 5, "D-001"), deployOutcome("uat", 7, "D-002")),
			require: []string{"uat"}, want: DeployWait, wantWait: []string{"D-002#7"}},
		{name: "require: another phase's negative resolution does not reject", st: checked(deployOutcome("qa", 5, "D-001=reject"), deployOutcome("uat", 7, "D-002=approve")),
			require: []string{"uat"}, want: DeployApprove},
		{name: "require: an alias names its phase", st: checked(deployOutcome("closeout", 8, "D-004")), require: []string{"deployed"}, want: DeployWait, wantWait: []string{"D-004#8"}},
		{name: "require: an outcome of no known phase always counts", st: checked(deployOutcome("mystery", 9, "D-005")), require: []string{"uat"}, want: DeployWait, wantWait: []string{"D-005#9"}},
		{name: "require: a frozen thread rejects whatever the phases", st: with(checked(deployOutcome("qa", 5, "D-001")), func(s *DeployState) { s.Frozen = "tampering on #5" }),
			require: []string{"uat"}, want: DeployReject},
		{name: "no require: every phase counts", st: checked(deployOutcome("qa", 5, "D-001"), deployOutcome("uat", 7, "D-002")),
			want: DeployWait, wantWait: []string{"D-001#5", "D-002#7"}},
		{name: "negative wins over pending", st: checked(deployOutcome("qa", 5, "D-001"), deployOutcome("uat", 7, "D-002=request-changes")), want: DeployReject},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got := DeploymentAnswer(tc.st, tc.require, config.DefaultPhases, tc.negative)
			if got.Action != tc.want || !strings.Contains(got.Reason, tc.wantReason) || got.Reason == "" {
				t.Errorf("answer %s (%q), want %s (%q)", got.Action, got.Reason, tc.want, tc.wantReason)
			}
			var wait []string
			for _, w := range got.Waiting {
				s := w.Decision + "#" + string(rune('0'+w.Issue))
				if w.Stale {
					s += " stale"
				}
				if w.Link == "" {
					t.Errorf("%s has no link to answer it", w.Decision)
				}
				wait = append(wait, s)
			}
			if got.Action == DeployWait && !reflect.DeepEqual(wait, tc.wantWait) {
				t.Errorf("waiting for %q, want %q", wait, tc.wantWait)
			}
			if got.Action != DeployWait && len(got.Waiting) > 0 {
				t.Errorf("a final answer lists waiting decisions %q", wait)
			}
		})
	}
}
