package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/phasegate/phasegate/internal/check"
	"github.com/phasegate/phasegate/internal/outcome"
	"github.com/phasegate/phasegate/internal/report"
	"github.com/phasegate/phasegate/internal/testutil"
	"github.com/phasegate/phasegate/internal/testutil/outcometest"
)

// wfcmdTree holds artifacts whose paths and quoted text try to issue
// workflow commands when phasegate prints them in a workflow's log
// (docs/security.md, attack 12).
var wfcmdTree = map[string]string{
	"::stop-commands::x/.pace/day-1/gate-report.yaml": "day: one\n",
	"::error::pwned/.pace/day-1/gate-report.yaml":     "day: 1\n",
	".pace/day-1/gate-report.yaml":                    strings.Replace(validGateReport, "gate_decision: SHIP", `gate_decision: "##[error]v1 pwned"`, 1),
	"more/.pace/day-1/gate-report.yaml":               strings.Replace(validGateReport, "gate_decision: SHIP", `gate_decision: "##[stop-commands]y"`, 1),
}

// frameToken is what a token of phasegate's frames looks like
// (crypto/rand.Text).
var frameToken = regexp.MustCompile(`^[A-Z2-7]{26}$`)

// TestWorkflowCommandsFromValidate reads validate's and gate's output as
// the Actions runner does: inside a workflow (GITHUB_ACTIONS=true) the text
// report is one frame that the attack cannot end, the github format issues
// exactly phasegate's annotations, json and sarif issue nothing; outside a
// workflow the text report is printed as it is.
func TestWorkflowCommandsFromValidate(t *testing.T) {
	dir := testutil.WriteTree(t, t.TempDir(), wfcmdTree)
	tests := []struct {
		name     string
		command  string
		format   string
		workflow bool
		framed   bool // one frame around the output
		annotate bool // the output is the findings' annotations and the notice
	}{
		{name: "validate text in a workflow", command: "validate", format: "text", workflow: true, framed: true},
		{name: "gate text in a workflow", command: "gate", format: "text", workflow: true, framed: true},
		{name: "validate github in a workflow", command: "validate", format: "github", workflow: true, annotate: true},
		{name: "gate github in a workflow", command: "gate", format: "github", workflow: true, annotate: true},
		{name: "validate json in a workflow", command: "validate", format: "json", workflow: true},
		{name: "gate json in a workflow", command: "gate", format: "json", workflow: true},
		{name: "validate sarif in a workflow", command: "validate", format: "sarif", workflow: true},
		{name: "validate text outside a workflow", command: "validate", format: "text"},
		{name: "validate github outside a workflow", command: "validate", format: "github", annotate: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := map[string]string{}
			if tt.workflow {
				env["GITHUB_ACTIONS"] = "true"
			}
			got := runEnv(t, env, tt.command, "--format", tt.format, dir)
			if got.code != ExitFindings {
				t.Fatalf("exit %d, want %d; stderr:\n%s", got.code, ExitFindings, got.stderr)
			}
			plain := runEnv(t, map[string]string{}, tt.command, "--format", tt.format, dir).stdout
			l := testutil.RunWorkflowCommands(got.stdout)
			switch {
			case tt.framed:
				inner := checkOneFrame(t, l)
				if inner != plain {
					t.Errorf("the frame holds something else than the report:\n%s\nwant:\n%s", inner, plain)
				}
			case tt.workflow && got.stdout != plain:
				t.Errorf("the %s format changed in a workflow:\n%s\nwant:\n%s", tt.format, got.stdout, plain)
			case !tt.workflow && strings.HasPrefix(got.stdout, "::stop-commands::"):
				t.Errorf("framed outside a workflow:\n%s", got.stdout)
			}
			if !tt.workflow && !tt.annotate {
				return // no runner reads it
			}
			if len(l.Regions) > 0 && !tt.framed {
				t.Errorf("commands stopped: %+v\n%s", l.Regions, got.stdout)
			}
			var want []string
			if tt.annotate {
				want = annotationsOf(t, dir)
			}
			checkEffective(t, l, want)
		})
	}
}

// TestWorkflowCommandsFromDecisions: an outcome's decision ID is agent
// text at the start of a line of `phasegate decisions`; in a workflow the
// text is framed, and decide's log records too.
func TestWorkflowCommandsFromDecisions(t *testing.T) {
	w := newDecWorld(t)
	// The seed outcome, with a decision ID that stops commands.
	src := strings.Replace(outcometest.SeedFor(42), "id: D-001", `id: "::stop-commands::x##[error]pwned"`, 1)
	path := "outcomes/feature-042-requirements.outcome.yaml"
	body, _ := outcometest.Render(t, src, outcome.Meta{Source: path, Commit: decCommit, Actors: []string{"agent-bot"}})
	w.fake.SetFile(decOwner, decRepo, decCommit, path, []byte(src))
	w.fake.AddComment(decOwner, decRepo, 42, decBot, body)
	w.fake.LabelIssue(decOwner, decRepo, 42, "phasegate:pending")
	tests := []struct {
		name string
		args []string
	}{
		{name: "one issue", args: []string{"decisions", "--issue", "42"}},
		{name: "every pending issue", args: []string{"decisions"}},
		{name: "json", args: []string{"decisions", "--issue", "42", "--format", "json"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			plain := runEnv(t, w.env, tt.args...)
			if plain.code != ExitOK || !strings.Contains(plain.stdout, "::stop-commands::x##") {
				t.Fatalf("exit %d, stdout %s, stderr %s", plain.code, plain.stdout, plain.stderr)
			}
			env := maps.Clone(w.env)
			env["GITHUB_ACTIONS"] = "true"
			got := runEnv(t, env, tt.args...)
			l := testutil.RunWorkflowCommands(got.stdout)
			if slices.Contains(tt.args, "json") {
				// Never framed: it is read by programs.
				if got.stdout != plain.stdout || len(l.Regions) > 0 {
					t.Errorf("the json changed in a workflow:\n%s\nwant:\n%s", got.stdout, plain.stdout)
				}
			} else if inner := checkOneFrame(t, l); got.code != ExitOK || inner != plain.stdout {
				t.Errorf("exit %d; the frame holds:\n%s\nwant:\n%s", got.code, inner, plain.stdout)
			}
			checkEffective(t, l, nil)
			checkEffective(t, testutil.RunWorkflowCommands(got.stderr), nil)
		})
	}
}

// TestInternalErrorInAWorkflow: a panic's message, which may quote what it
// failed on, is framed in a workflow.
func TestInternalErrorInAWorkflow(t *testing.T) {
	var stderr bytes.Buffer
	env := map[string]string{"GITHUB_ACTIONS": "true"}
	code := Main([]string{"validate", t.TempDir()}, func(k string) string { return env[k] }, panickingWriter{}, &stderr)
	if code != ExitUsage {
		t.Errorf("exit code = %d, want %d", code, ExitUsage)
	}
	l := testutil.RunWorkflowCommands(stderr.String())
	if inner := checkOneFrame(t, l); !strings.HasPrefix(inner, "phasegate: internal error: writer exploded\n") {
		t.Errorf("the frame holds %q", inner)
	}
}

// runEnv is run with an environment.
func runEnv(t *testing.T, env map[string]string, args ...string) result {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := Main(args, func(k string) string { return env[k] }, &stdout, &stderr)
	return result{code: code, stdout: stdout.String(), stderr: stderr.String()}
}

// checkOneFrame asserts that the output is one frame of phasegate's, ended
// by its own token, and returns the text inside it.
func checkOneFrame(t *testing.T, l testutil.RunnerLog) string {
	t.Helper()
	if len(l.Regions) != 1 {
		t.Fatalf("%d stop-commands regions, want 1: %+v\n%s", len(l.Regions), l.Regions, strings.Join(l.Lines, "\n"))
	}
	reg := l.Regions[0]
	if !frameToken.MatchString(reg.Token) || reg.Start != 1 || reg.End != len(l.Lines) || l.Lines[reg.End-1] != "::"+reg.Token+"::" {
		t.Fatalf("the frame is %+v, want phasegate's token from the first line to the last:\n%s", reg, strings.Join(l.Lines, "\n"))
	}
	return strings.Join(l.Lines[1:reg.End-1], "\n") + "\n"
}

// checkEffective asserts that the effective commands are want ("name
// file line col title data" each), in order, and nothing else.
func checkEffective(t *testing.T, l testutil.RunnerLog, want []string) {
	t.Helper()
	var got []string
	for _, c := range l.Effective {
		got = append(got, strings.Join([]string{c.Name, c.Props["file"], c.Props["line"], c.Props["col"], c.Props["title"], c.Data}, " "))
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("effective commands:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	for _, c := range l.Rejected {
		t.Errorf("line %d: a stop-commands the runner refuses: %q", c.Line, l.Lines[c.Line-1])
	}
}

// annotationsOf are the annotations the github format must issue for the
// findings of dir (read from the json format): errors, then warnings, then
// the notice.
func annotationsOf(t *testing.T, dir string) []string {
	t.Helper()
	var rep struct {
		Artifacts int             `json:"artifacts"`
		Verdict   string          `json:"verdict"`
		Findings  []check.Finding `json:"findings"`
	}
	if err := json.Unmarshal([]byte(runEnv(t, map[string]string{}, "validate", "--format", "json", dir).stdout), &rep); err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, sev := range []check.Severity{check.SeverityError, check.SeverityWarning} {
		for _, f := range rep.Findings {
			if f.Severity == sev {
				title := fmt.Sprintf("phasegate %s (%s)", f.Rule, f.Kind)
				out = append(out, strings.Join([]string{string(sev), report.Terminal(f.File), fmt.Sprint(max(1, f.Line)), fmt.Sprint(max(1, f.Column)), title, report.Terminal(f.Message)}, " "))
			}
		}
	}
	if len(out) < 4 {
		t.Fatalf("%d findings: the attack wants several", len(out))
	}
	errs, warns := check.Count(rep.Findings)
	return append(out, fmt.Sprintf("notice    phasegate %d artifacts checked: %d errors, %d warnings — %s", rep.Artifacts, errs, warns, rep.Verdict))
}
