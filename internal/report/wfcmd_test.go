package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/phasegate/phasegate/internal/check"
	"github.com/phasegate/phasegate/internal/gate"
	"github.com/phasegate/phasegate/internal/testutil"
)

// hostile are texts an agent controls (file paths, quoted artifact text)
// that try to issue workflow commands in a log.
var hostile = []struct {
	name, file, message string
}{
	{name: "stop-commands directory", file: "::stop-commands::x/.pace/day-1/gate-report.yaml", message: "m"},
	{name: "forged annotation directory", file: "::error file=a.yaml,line=1::pwned/g.yaml", message: "m"},
	{name: "guessed resume", file: "::x::/a.yaml", message: "::x::"},
	{name: "v1 in the message", file: "a.yaml", message: `got "##[stop-commands]y" and ##[error]pwned`},
	{name: "v1 in the path", file: "##[error file=b]pwned/a.yaml", message: "m"},
	{name: "newline then a command", file: "a\n::stop-commands::x.yaml", message: "bad\n::stop-commands::x\r::error::pwned"},
	{name: "escapes in the text", file: "100%,a:b.yaml", message: "%0A::error::pwned %25 %3A"},
	{name: "white space before the command", file: "\u3000::stop-commands::x/a.yaml", message: "\u00a0::error::pwned"},
}

func hostileReport(sev check.Severity, file, message string) Report {
	fs := []check.Finding{
		{File: file, Line: 3, Column: 4, Kind: "pace.gate-report", Rule: "schema", Severity: sev, Message: message},
		{File: "b.yaml", Line: 1, Column: 1, Kind: "pace.gate-report", Rule: "schema", Severity: check.SeverityError, Message: "after the attack"},
	}
	check.Sort(fs)
	return Report{Artifacts: 2, Findings: fs, Verdict: gate.FromFindings(fs), Pipeline: []check.Status{{Family: "pace", Unit: file, State: message}}}
}

// TestGitHubWorkflowCommands reads the github format as the runner does:
// exactly one annotation per finding, with its file, position, title and
// message as they were (terminal-safe), then the notice; nothing stops.
func TestGitHubWorkflowCommands(t *testing.T) {
	for _, sev := range []check.Severity{check.SeverityError, check.SeverityWarning} {
		for _, tt := range hostile {
			t.Run(string(sev)+"/"+tt.name, func(t *testing.T) {
				r := hostileReport(sev, tt.file, tt.message)
				l := testutil.RunWorkflowCommands(string(render(t, "github", r)))
				var got, want []string
				for _, c := range l.Effective {
					got = append(got, fmt.Sprintf("%s %q %s:%s %q %q", c.Name, c.Props["file"], c.Props["line"], c.Props["col"], c.Props["title"], c.Data))
				}
				for _, s := range []check.Severity{check.SeverityError, check.SeverityWarning} {
					for _, f := range r.Findings {
						if f.Severity == s {
							want = append(want, fmt.Sprintf("%s %q %d:%d %q %q", s, Terminal(f.File), f.Line, f.Column, "phasegate schema (pace.gate-report)", Terminal(f.Message)))
						}
					}
				}
				want = append(want, fmt.Sprintf("notice \"\" : \"phasegate\" %q", "2 artifacts checked: "+map[check.Severity]string{check.SeverityError: "2 errors, 0 warnings — HOLD", check.SeverityWarning: "1 error, 1 warning — HOLD"}[sev]))
				if strings.Join(got, "\n") != strings.Join(want, "\n") {
					t.Errorf("effective commands:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
				}
				if len(l.Regions)+len(l.Ignored)+len(l.Rejected) > 0 {
					t.Errorf("commands stopped: %+v", l)
				}
			})
		}
	}
}

// TestJSONHasNoWorkflowCommand: the json and sarif formats issue no
// workflow command whatever the findings say ("##[" is written with
// \u005b, no line starts with "::"), and the JSON decodes to the same text.
func TestJSONHasNoWorkflowCommand(t *testing.T) {
	for _, format := range []string{"json", "sarif"} {
		for _, tt := range hostile {
			t.Run(format+"/"+tt.name, func(t *testing.T) {
				out := render(t, format, hostileReport(check.SeverityError, tt.file, tt.message))
				if l := testutil.RunWorkflowCommands(string(out)); len(l.Effective)+len(l.Regions)+len(l.Rejected) > 0 {
					t.Errorf("the %s report issues commands: %+v\n%s", format, l, out)
				}
				if format != "json" {
					return
				}
				var back struct{ Findings []check.Finding }
				if err := json.Unmarshal(out, &back); err != nil {
					t.Fatal(err)
				}
				if got := back.Findings[0].File + back.Findings[1].File; !strings.Contains(got, tt.file) {
					t.Errorf("the files decode to %q, want %q among them", got, tt.file)
				}
			})
		}
	}
}

// TestStopCommands: the frame holds the text as it is, ends with a line of
// its own, and never uses a token that the text holds.
func TestStopCommands(t *testing.T) {
	tests := []struct {
		name   string
		text   string
		tokens []string // what the token function returns, in turn
		want   string
	}{
		{name: "empty text writes nothing", text: "", tokens: []string{"TOK"}, want: ""},
		{name: "text ending a line", text: "a\n::stop-commands::x\n", tokens: []string{"TOK"},
			want: "::stop-commands::TOK\na\n::stop-commands::x\n::TOK::\n"},
		{name: "text without a last newline", text: "a\n::error::b", tokens: []string{"TOK"},
			want: "::stop-commands::TOK\na\n::error::b\n::TOK::\n"},
		{name: "a token the text holds is never used", text: "::tok::\n", tokens: []string{"TOK", "", "OTHER"},
			want: "::stop-commands::OTHER\n::tok::\n::OTHER::\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			i := 0
			token := func() string { i++; return tt.tokens[i-1] }
			var b bytes.Buffer
			if err := StopCommands(&b, []byte(tt.text), token); err != nil {
				t.Fatal(err)
			}
			if b.String() != tt.want {
				t.Errorf("got %q, want %q", b.String(), tt.want)
			}
			if tt.want == "" {
				return
			}
			l := testutil.RunWorkflowCommands(b.String())
			if len(l.Effective) > 0 || len(l.Regions) != 1 || l.Regions[0].End != len(l.Lines) {
				t.Errorf("the runner reads %+v", l)
			}
		})
	}
}

// TestStopCommandsWriter frames every write on its own.
func TestStopCommandsWriter(t *testing.T) {
	var b bytes.Buffer
	n := 0
	w := StopCommandsWriter{W: &b, Token: func() string { n++; return fmt.Sprintf("T%d", n) }}
	for _, rec := range []string{"level=INFO msg=one\n", "msg=\"::stop-commands::x\"\n"} {
		if got, err := w.Write([]byte(rec)); err != nil || got != len(rec) {
			t.Fatalf("Write = %d, %v", got, err)
		}
	}
	want := "::stop-commands::T1\nlevel=INFO msg=one\n::T1::\n::stop-commands::T2\nmsg=\"::stop-commands::x\"\n::T2::\n"
	if b.String() != want {
		t.Errorf("got %q, want %q", b.String(), want)
	}
}
