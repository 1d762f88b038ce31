package action

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/phasegate/phasegate/internal/check"
	"github.com/phasegate/phasegate/internal/config"
	"github.com/phasegate/phasegate/internal/report"
	"github.com/phasegate/phasegate/internal/testutil"
)

// Attack 12 of docs/security.md: workflow commands from untrusted text. The
// runner reads every line of the step's log that starts with "::" (or holds
// "##[") as a workflow command. An agent names a directory
// `::stop-commands::x`; the text report starts a line with the file's path,
// the runner stops processing commands, and every annotation phasegate
// prints after it is ignored: the findings vanish from the pull request.
// Other directory names and quoted artifact text forge annotations.

// wfcmdAttack is a change whose artifacts are all invalid, under directories
// and with contents an attacker chose.
var wfcmdAttack = map[string]string{
	"::stop-commands::x/.pace/day-1/gate-report.yaml": "day: one\n",
	"::error::pwned/.pace/day-3/gate-report.yaml":     "day: 3\n",
	".pace/day-2/gate-report.yaml":                    gateDecision("##[error]v1 pwned"),
	".pace/day-4/gate-report.yaml":                    gateDecision("##[stop-commands]y"),
}

// gateDecision is a gate report whose only fault is its gate_decision.
func gateDecision(decision string) string {
	return strings.Replace(goodGate, "gate_decision: SHIP", "gate_decision: "+strconv.Quote(decision), 1)
}

// stopTokenForm is what phasegate's stop-commands tokens look like
// (crypto/rand.Text: 26 base32 characters, 130 random bits).
var stopTokenForm = regexp.MustCompile(`^[A-Z2-7]{26}$`)

func TestRedTeamWorkflowCommandInjection(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		format string
		files  map[string]string
	}{
		{name: "a directory named ::stop-commands::x", format: "text", files: map[string]string{
			"::stop-commands::x/.pace/day-1/gate-report.yaml": "day: one\n",
			".pace/day-2/gate-report.yaml":                    "day: two\n",
		}},
		{name: "names and quoted text, text report", format: "text", files: wfcmdAttack},
		{name: "names and quoted text, json report", format: "json", files: wfcmdAttack},
		{name: "names and quoted text, sarif report", format: "sarif", files: wfcmdAttack},
		{name: "names and quoted text, annotations only", format: "github", files: wfcmdAttack},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel() // each case has its own fake GitHub and repository
			f := newRepoFixture(t)
			base := f.commit(map[string]string{"README.md": "shop\n"})
			head := f.commit(tt.files)
			code, log := f.runAction(f.env("push", pushEvent(base, head), map[string]string{"INPUT_FORMAT": tt.format}))
			if code != exitFindings {
				t.Fatalf("exit %d, want %d; log:\n%s", code, exitFindings, log)
			}
			checkRunnerLog(t, log, expectedFindings(t, f.dir))
		})
	}

	// The attacker guesses the token that ends phasegate's frame: common
	// words, its own stop token, and even every token of an earlier run
	// (as though the log had leaked), in both command forms.
	t.Run("guessed tokens", func(t *testing.T) {
		t.Parallel() // its own fake GitHub and repository
		f := newRepoFixture(t)
		base := f.commit(map[string]string{"README.md": "shop\n"})
		head := f.commit(wfcmdAttack)
		env := map[string]string{"INPUT_FORMAT": "text"}
		_, first := f.runAction(f.env("push", pushEvent(base, head), env))
		earlier := runnerTokens(t, first)
		guesses := []string{"x", "y", "phasegate", "end", "stop-commands"}
		guesses = append(guesses, earlier...)
		files := map[string]string{}
		for i, g := range guesses {
			// One finding each: an invalid gate_decision.
			files[fmt.Sprintf("::%s::/%d/.pace/day-1/gate-report.yaml", g, i)] = gateDecision("::error::guess")
			files[fmt.Sprintf("v1/##[%s]/%d/.pace/day-1/gate-report.yaml", g, i)] = gateDecision("##[" + g + "]")
		}
		head = f.commit(files)
		_, log := f.runAction(f.env("push", pushEvent(base, head), env))
		l := checkRunnerLog(t, log, expectedFindings(t, f.dir))
		for _, g := range guesses {
			v2, v1 := false, strings.Contains(log, "##["+g+"]")
			for _, line := range l.Lines {
				v2 = v2 || strings.HasPrefix(line, "::"+g+"::/")
			}
			if !v2 || !v1 {
				t.Errorf("the log lacks the guess %q at the start of a line (%v) or as ##[%s] (%v)", g, v2, g, v1)
			}
		}
		for _, tok := range runnerTokens(t, log) {
			for _, e := range earlier {
				if strings.EqualFold(tok, e) {
					t.Errorf("a token of the earlier run came back: %s", tok)
				}
			}
		}
	})

	// decide's log records (an issue_comment run) reach the step's log only
	// inside a frame of phasegate's.
	t.Run("decide logs", func(t *testing.T) {
		t.Parallel() // its own fake GitHub and repository
		rt := newRedTeam(t, "")
		rt.open(map[string]string{rtSource: seedOutcome})
		body := "/resolve D-001 approve"
		id := rt.fake.AddComment(rtOwner, rtRepo, rt.issue, "bob", body) // bob has read: refused
		ev := map[string]any{"action": "created", "issue": map[string]any{"number": rt.issue},
			"comment":    map[string]any{"id": id, "body": body, "user": map[string]any{"login": "bob", "type": "User"}},
			"repository": map[string]any{"default_branch": "main"}}
		code, log := rt.runAction(rt.env("issue_comment", ev))
		if code != exitOK {
			t.Fatalf("exit %d; log:\n%s", code, log)
		}
		l := checkRunnerLog(t, log, nil)
		framed := false
		for _, reg := range l.Regions {
			if reg.End == 0 {
				continue
			}
			for _, line := range l.Lines[reg.Start : reg.End-1] {
				framed = framed || strings.Contains(line, "refused: not authorised")
			}
		}
		if !framed {
			t.Errorf("decide's record of the refusal is not in a frame of the step's log:\n%s", log)
		}
	})
}

// expectedFindings are the findings of the workspace, checked as the action
// checks it (the default config: the fake has none on main).
func expectedFindings(t *testing.T, dir string) []check.Finding {
	t.Helper()
	v, err := check.NewValidator()
	if err != nil {
		t.Fatal(err)
	}
	res, err := v.Run(context.Background(), dir, check.Options{Config: config.Default(), RootName: "."})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Findings) < 2 || len(res.Findings) > maxAnnotations {
		t.Fatalf("%d findings: the attack wants several, and every one annotated", len(res.Findings))
	}
	return res.Findings
}

// checkRunnerLog reads the action's log as the runner does and asserts that
// (a) every finding is an effective annotation, with its file, position,
// title and message; (b) no other command is effective but phasegate's own
// notices, warnings and errors about the run (no file, phasegate's words);
// (c) every stop-commands region is one phasegate opened, with a token of
// its own, and it is ended by that token and nothing else.
func checkRunnerLog(t *testing.T, log string, findings []check.Finding) testutil.RunnerLog {
	t.Helper()
	l := testutil.RunWorkflowCommands(log)
	for _, reg := range l.Regions {
		switch {
		case !stopTokenForm.MatchString(reg.Token):
			t.Errorf("line %d: commands stopped with a token phasegate did not make: %q", reg.Start, reg.Token)
		case reg.End == 0:
			t.Errorf("line %d: the region of %s never ends: every later command is ignored", reg.Start, reg.Token)
		case l.Lines[reg.End-1] != "::"+reg.Token+"::":
			t.Errorf("line %d: %q ended the region of line %d, not phasegate's %q", reg.End, l.Lines[reg.End-1], reg.Start, "::"+reg.Token+"::")
		}
	}
	for _, c := range l.Rejected {
		t.Errorf("line %d: the runner refuses the stop-commands %q", c.Line, l.Lines[c.Line-1])
	}
	type key struct{ name, file, line, col, title, message string }
	want := map[key]int{}
	for _, f := range findings {
		title := "phasegate " + f.Rule
		if f.Kind != "" {
			title += " (" + f.Kind + ")"
		}
		want[key{string(f.Severity), report.Terminal(f.File), strconv.Itoa(max(f.Line, 1)), strconv.Itoa(max(f.Column, 1)), title, report.Terminal(f.Message)}]++
	}
	for _, c := range l.Effective {
		k := key{c.Name, c.Props["file"], c.Props["line"], c.Props["col"], c.Props["title"], c.Data}
		switch {
		case want[k] > 0:
			want[k]--
		case !c.V1 && (c.Name == "notice" || c.Name == "warning" || c.Name == "error") && c.Props["file"] == "" && strings.HasPrefix(c.Data, "phasegate"):
			// phasegate's own words about the run
		default:
			t.Errorf("line %d: an effective command phasegate did not mean: %q", c.Line, l.Lines[c.Line-1])
		}
	}
	for k, n := range want {
		if n > 0 {
			t.Errorf("finding %s:%s:%s %s %q is not an effective annotation (%d missing)", k.file, k.line, k.col, k.name, k.message, n)
		}
	}
	if t.Failed() {
		t.Logf("the runner's reading: %d effective commands, %d ignored, stop regions %+v; log:\n%s", len(l.Effective), len(l.Ignored), l.Regions, log)
	}
	return l
}

// runnerTokens are the stop-commands tokens of a log, each used once.
func runnerTokens(t *testing.T, log string) []string {
	t.Helper()
	var out []string
	seen := map[string]bool{}
	for _, reg := range testutil.RunWorkflowCommands(log).Regions {
		if seen[strings.ToLower(reg.Token)] {
			t.Errorf("the token %s framed two regions", reg.Token)
		}
		seen[strings.ToLower(reg.Token)] = true
		out = append(out, reg.Token)
	}
	return out
}
