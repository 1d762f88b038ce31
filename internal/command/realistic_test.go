package command

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// summary is a one-line form of a command for the realistic table:
// "L<line> <command>", then "| <rationale>" when there is one, or
// "L<line> invalid: <reason>" / "L<line> unknown <suggestion>".
func summary(c Command) string {
	switch c.Kind {
	case Invalid:
		return fmt.Sprintf("L%d invalid: %s", c.Line, c.Reason)
	case Unknown:
		return fmt.Sprintf("L%d unknown %s", c.Line, c.Suggestion)
	}
	s := fmt.Sprintf("L%d %s", c.Line, c.String())
	if c.Recommended {
		s += " (recommended)"
	}
	if c.Rationale != "" {
		s += " | " + strings.ReplaceAll(c.Rationale, "\n", "⏎")
	}
	return s
}

// realisticComments are comments as people write them on GitHub issues,
// with the commands phasegate must read from each.
var realisticComments = []struct {
	name string
	body string
	want []string
}{
	{
		name: "approval with a reason",
		body: "Read through the PREQ with @alice this morning.\r\n\r\n/resolve D-001 approve\r\nScope is right and the acceptance criteria are testable.\r\n\r\nThanks for the quick turnaround!",
		want: []string{"L3 /resolve D-001 approve | Scope is right and the acceptance criteria are testable."},
	},
	{
		name: "two decisions, one recommended",
		body: "/resolve D-001 approve LGTM\n/resolve D-002 recommended\n\n(the avatar sizing can wait)",
		want: []string{"L1 /resolve D-001 approve | LGTM", "L2 /resolve D-002 recommended (recommended)"},
	},
	{
		name: "email reply quoting the outcome",
		body: "Approved.\n\n/resolve D-001 approve\n\nOn Tue, Jun 3, 2025 at 10:12 AM phasegate[bot] <notifications@github.com> wrote:\n\n> #### Pending decisions: 2 (1 blocking)\n>\n> /resolve D-001 reject\n> /resolve D-002 capture\n>\n> —\n> Reply to this email directly or view it on GitHub.",
		want: []string{"L3 /resolve D-001 approve"},
	},
	{
		name: "explaining the commands in code",
		body: "For anyone new here: you decide by commenting, e.g.\n\n```\n/resolve D-001 approve\n/resolve D-001 request-changes the tests are missing\n```\n\nor inline like `/resolve D-002 capture`. The bot answers with ✅.",
		want: nil,
	},
	{
		name: "issue template comments left in",
		body: "<!--\nChoose one and remove the others:\n/resolve D-001 approve\n/resolve D-001 reject\n-->\n\n/resolve D-001 request-changes\nPlease split the login story.",
		want: []string{"L7 /resolve D-001 request-changes | Please split the login story."},
	},
	{
		name: "prow commands alongside",
		body: "/lgtm\n/approve\n/resolve D-001 approve\n/hold cancel",
		want: []string{"L3 /resolve D-001 approve"},
	},
	{
		name: "typos",
		body: "/reslove D-001 aprove\n/decision",
		want: []string{"L1 unknown /resolve", "L2 unknown /decisions"},
	},
	{
		name: "copied table row from the outcome comment",
		body: "| D-001 | approval | Approve PREQ for technical planning? | **yes** | approve · request-changes · reject | `/resolve D-001 approve` |",
		want: nil,
	},
	{
		name: "phase prefix for a repeated id",
		body: "The planning outcome reuses D-001, so to be explicit:\n\n/resolve requirements:D-001 approve\n/resolve technical-plan:D-001 request-changes needs a rollback plan",
		want: []string{"L3 /resolve requirements:D-001 approve", "L4 /resolve technical-plan:D-001 request-changes | needs a rollback plan"},
	},
	{
		name: "logs in a collapsed section",
		body: "CI log, for context:\n\n<details><summary>log</summary>\n\n````text\n$ phasegate action\n/resolve D-001 approve\n```\nnot the end\n```\n````\n\n</details>\n\n/decisions",
		want: []string{"L15 /decisions"},
	},
	{
		name: "quoting an earlier resolution",
		body: "> Resolved: **D-001 → approve**, by @octocat\n\nAgreed, and:\n/resolve D-002 discard\nNot worth a separate issue.",
		want: []string{"L4 /resolve D-002 discard | Not worth a separate issue."},
	},
	{
		name: "phone keyboard spaces",
		body: "/resolve\u00a0D-001\u00a0approve\u00a0👍",
		want: []string{"L1 /resolve D-001 approve | 👍"},
	},
	{
		name: "mistakes",
		body: "/resolve D-001\n\n/resolve approve D-002\n\n/resolve D-003 request changes",
		want: []string{
			"L1 invalid: `/resolve D-001` needs an option after the decision ID, e.g. `/resolve D-001 approve`, or `/resolve D-001 recommended` for the recommended option",
			"L3 invalid: `approve` is not a decision ID: the ID comes first, e.g. `/resolve D-002 approve`",
			"L5 /resolve D-003 request | changes",
		},
	},
	{
		name: "help and list",
		body: "How does this work?\n/phasegate help\n/decisions",
		want: []string{"L2 /phasegate help", "L3 /decisions"},
	},
}

func TestParseRealistic(t *testing.T) {
	for _, tc := range realisticComments {
		t.Run(tc.name, func(t *testing.T) {
			res := ParseAll(tc.body)
			checkResult(t, tc.body, res)
			checkOracle(t, tc.body, res.Commands)
			var got []string
			for _, c := range res.Commands {
				got = append(got, summary(c))
			}
			if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("Parse:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
			}
		})
	}
}

// TestParsePhasegateComments: the comments phasegate itself posts (a Phase
// Outcome, one rendered from hostile agent text, a resolution) hold no
// command, although they show commands and agent text that starts with
// "/resolve": the table cells are not paragraphs that start with "/", the
// agent's slashes follow a zero-width space, and the YAML is fenced.
func TestParsePhasegateComments(t *testing.T) {
	for _, name := range []string{"outcome-comment.md", "outcome-comment-hostile.md", "resolution-comment.md"} {
		t.Run(name, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join("testdata", name))
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(string(data), "/resolve") && name != "resolution-comment.md" {
				t.Fatalf("%s shows no command", name)
			}
			if res := ParseAll(string(data)); len(res.Commands) != 0 {
				t.Errorf("Parse = %s", dump(res.Commands))
			}
		})
	}
}
