package action

import (
	"fmt"
	"strings"
	"testing"
)

// TestOutsideARunnerFailsClearly: `phasegate action` run where no runner
// set up the step (a shell, a cron job, a container started by hand) exits
// 2 with one error naming what is missing, before it reads or writes
// anything on GitHub, and never panics: go-githubactions panics writing an
// output without GITHUB_OUTPUT, after the run has already set statuses.
func TestOutsideARunnerFailsClearly(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		unset map[string]string
		want  string
	}{
		{name: "no GITHUB_OUTPUT", unset: map[string]string{"GITHUB_OUTPUT": ""}, want: "GITHUB_OUTPUT (the step's outputs file) is not set"},
		{name: "no GITHUB_ACTIONS", unset: map[string]string{"GITHUB_ACTIONS": ""}, want: `GITHUB_ACTIONS is not "true"`},
		{name: "GITHUB_ACTIONS false", unset: map[string]string{"GITHUB_ACTIONS": "false"}, want: `GITHUB_ACTIONS is not "true"`},
		{name: "no event", unset: map[string]string{"GITHUB_EVENT_NAME": ""}, want: "GITHUB_EVENT_NAME is not set"},
		{name: "nothing at all", unset: map[string]string{"GITHUB_ACTIONS": "", "GITHUB_EVENT_NAME": "", "GITHUB_OUTPUT": "", "GITHUB_STEP_SUMMARY": ""}, want: `GITHUB_ACTIONS is not "true"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newRepoFixture(t)
			base := f.commit(map[string]string{"README.md": "x\n"})
			head := f.commit(map[string]string{".pace/day-1/gate-report.yaml": goodGate})
			code, log, panicked := func() (code int, log string, panicked any) {
				defer func() { panicked = recover() }()
				code, log = f.runAction(f.env("push", pushEvent(base, head), tc.unset))
				return code, log, nil
			}()
			if panicked != nil {
				t.Fatalf("panicked: %v", panicked)
			}
			want := fmt.Sprintf("::error::phasegate action runs inside a GitHub Actions workflow step, but %s (use `phasegate validate` or `phasegate gate` elsewhere)\n", tc.want)
			if code != exitCouldNot || log != want {
				t.Errorf("exit %d, log\n%q\nwant exit %d and\n%q", code, log, exitCouldNot, want)
			}
			if calls := f.fake.Calls(); len(calls) > 0 {
				t.Errorf("called GitHub outside a runner: %v", calls)
			}
			if strings.Contains(log, "goroutine") {
				t.Errorf("a stack trace:\n%s", log)
			}
		})
	}
}
