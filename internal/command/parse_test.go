package command

import (
	"fmt"
	"strings"
	"testing"
)

// parseCase is one comment body and the commands it must yield. In want,
// Raw is not compared (it is checked against the body's line), and Reason
// is compared as a substring.
type parseCase struct {
	name string
	body string
	want []Command
}

func runParseCases(t *testing.T, cases []parseCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			res := ParseAll(tc.body)
			checkResult(t, tc.body, res)
			got := res.Commands
			if len(got) != len(tc.want) {
				t.Fatalf("Parse(%q) = %d commands, want %d:\n%s", tc.body, len(got), len(tc.want), dump(got))
			}
			for i, w := range tc.want {
				g := got[i]
				if g.Line != w.Line || g.Kind != w.Kind || g.Phase != w.Phase || g.ID != w.ID || g.Option != w.Option ||
					g.Recommended != w.Recommended || g.Rationale != w.Rationale || g.RationaleTruncated != w.RationaleTruncated ||
					g.Suggestion != w.Suggestion || !strings.Contains(g.Reason, w.Reason) || (w.Reason == "" && g.Reason != "") {
					t.Errorf("command %d of %q:\n got %s\nwant %s", i, tc.body, dump([]Command{g}), dump([]Command{w}))
				}
				checkReparse(t, g)
			}
			checkOracle(t, tc.body, got)
			checkRendered(t, tc.body, got)
		})
	}
}

func dump(cs []Command) string {
	var b strings.Builder
	for _, c := range cs {
		fmt.Fprintf(&b, "{Line: %d, Kind: %s, Phase: %q, ID: %q, Option: %q, Recommended: %v, Rationale: %q, Truncated: %v, Reason: %q, Suggestion: %q}\n",
			c.Line, c.Kind, c.Phase, c.ID, c.Option, c.Recommended, c.Rationale, c.RationaleTruncated, c.Reason, c.Suggestion)
	}
	return b.String()
}

func resolve(line int, id, option string) Command {
	return Command{Line: line, Kind: Resolve, ID: id, Option: option}
}

func withRationale(c Command, r string) Command { c.Rationale = r; return c }

func inPhase(c Command, phase string) Command { c.Phase = phase; return c }

func bad(line int, reason string) Command { return Command{Line: line, Kind: Invalid, Reason: reason} }

func near(line int, suggestion string) Command {
	return Command{Line: line, Kind: Unknown, Suggestion: suggestion, Reason: "did you mean `" + suggestion + "`?"}
}

const (
	needBoth     = "`/resolve` needs a decision ID and an option, e.g. `/resolve D-001 approve`"
	needOption   = "needs an option after the decision ID"
	notID        = "is not a decision ID"
	idFirst      = "the ID comes first"
	notOption    = "cannot be an option"
	emptyPhase   = "the phase before `:` is empty"
	twoColons    = "has more than one `:`"
	noIDAfter    = "has no decision ID after the `:`"
	notPhase     = "is not a phase name"
	controlChar  = "control character"
	notSubcomand = "is not a `/phasegate` subcommand"
)

func TestParseGrammar(t *testing.T) {
	runParseCases(t, []parseCase{
		{name: "empty body", body: "", want: nil},
		{name: "prose only", body: "Looks good to me.\nThanks!", want: nil},
		{name: "resolve", body: "/resolve D-001 approve", want: []Command{resolve(1, "D-001", "approve")}},
		{name: "verb is case-insensitive", body: "/Resolve D-001 approve\n/RESOLVE D-002 capture\n/rEsOlVe D-003 discard", want: []Command{
			resolve(1, "D-001", "approve"), resolve(2, "D-002", "capture"), resolve(3, "D-003", "discard")}},
		{name: "id is normalised to upper case", body: "/resolve d-001 approve", want: []Command{resolve(1, "D-001", "approve")}},
		{name: "option is kept as written", body: "/resolve D-001 Approve", want: []Command{resolve(1, "D-001", "Approve")}},
		{name: "hyphenated option", body: "/resolve D-001 request-changes", want: []Command{resolve(1, "D-001", "request-changes")}},
		{name: "longer ids", body: "/resolve QA-D-002 defer\n/resolve decision-7 go\n/resolve D1-12 x", want: []Command{
			resolve(1, "QA-D-002", "defer"), resolve(2, "DECISION-7", "go"), resolve(3, "D1-12", "x")}},
		{name: "phase prefix", body: "/resolve requirements:D-001 approve", want: []Command{inPhase(resolve(1, "D-001", "approve"), "requirements")}},
		{name: "phase prefix is lower-cased", body: "/resolve Technical-Plan:d-001 approve", want: []Command{inPhase(resolve(1, "D-001", "approve"), "technical-plan")}},
		{name: "recommended", body: "/resolve D-002 recommended", want: []Command{{Line: 1, Kind: Resolve, ID: "D-002", Option: "recommended", Recommended: true}}},
		{name: "recommended in any case, with a phase", body: "/resolve requirements:D-002 Recommended", want: []Command{
			{Line: 1, Kind: Resolve, Phase: "requirements", ID: "D-002", Option: "Recommended", Recommended: true}}},
		{name: "rationale on the line", body: "/resolve D-001 approve  the plan covers every story ", want: []Command{
			withRationale(resolve(1, "D-001", "approve"), "the plan covers every story")}},
		{name: "sentence punctuation after the option", body: "/resolve D-001 approve.\n\n/resolve D-002 capture, it matters\n\n/resolve D-003 reject!", want: []Command{
			resolve(1, "D-001", "approve"), withRationale(resolve(3, "D-002", "capture"), "it matters"), resolve(5, "D-003", "reject")}},
		{name: "colon or comma after the id", body: "/resolve D-001: approve\n\n/resolve D-002, capture", want: []Command{
			resolve(1, "D-001", "approve"), resolve(3, "D-002", "capture")}},
		{name: "colon after the verb", body: "/resolve: D-001 approve", want: []Command{resolve(1, "D-001", "approve")}},
		{name: "decisions", body: "/decisions", want: []Command{{Line: 1, Kind: Decisions}}},
		{name: "decisions ignores words after it", body: "/Decisions please", want: []Command{{Line: 1, Kind: Decisions}}},
		{name: "help", body: "/phasegate help", want: []Command{{Line: 1, Kind: Help}}},
		{name: "phasegate alone is help", body: "/PhaseGate", want: []Command{{Line: 1, Kind: Help}}},
		{name: "help in upper case", body: "/phasegate HELP me", want: []Command{{Line: 1, Kind: Help}}},
		{name: "on any line", body: "Thanks for the plan.\n\n/resolve D-001 approve\n\nCheers", want: []Command{resolve(3, "D-001", "approve")}},
		{name: "inside a paragraph", body: "I read it twice.\n/resolve D-001 approve\nShip it.", want: []Command{
			withRationale(resolve(2, "D-001", "approve"), "Ship it.")}},
		{name: "one command per line", body: "/resolve D-001 approve /resolve D-002 capture", want: []Command{
			withRationale(resolve(1, "D-001", "approve"), "/resolve D-002 capture")}},
		{name: "several commands", body: "/resolve D-001 approve\n/resolve D-002 capture\n/decisions\n/phasegate help", want: []Command{
			resolve(1, "D-001", "approve"), resolve(2, "D-002", "capture"), {Line: 3, Kind: Decisions}, {Line: 4, Kind: Help}}},
		{name: "up to three spaces of indentation", body: "   /resolve D-001 approve", want: []Command{resolve(1, "D-001", "approve")}},
		{name: "not after other text", body: "Type /resolve D-001 approve to approve.", want: nil},
		{name: "not in inline code at the start", body: "`/resolve D-001 approve`", want: nil},
		{name: "not in a list item", body: "- /resolve D-001 approve\n1. /resolve D-002 approve", want: nil},
		{name: "not in emphasis", body: "**/resolve D-001 approve**", want: nil},
		{name: "not in a heading", body: "# /resolve D-001 approve", want: nil},
		{name: "a setext heading is a paragraph", body: "/resolve D-001 approve\n---", want: []Command{resolve(1, "D-001", "approve")}},
		{name: "a list item's paragraph", body: "- first\n  /resolve D-001 approve", want: []Command{resolve(2, "D-001", "approve")}},
		{name: "paths are not commands", body: "/usr/local/bin is on the PATH\n/etc/hosts", want: nil},
		{name: "slash alone", body: "/\n/ resolve D-001 approve", want: nil},
	})
}

func TestParseInvalid(t *testing.T) {
	runParseCases(t, []parseCase{
		{name: "no id", body: "/resolve", want: []Command{bad(1, needBoth)}},
		{name: "no id, trailing spaces", body: "/resolve   ", want: []Command{bad(1, needBoth)}},
		{name: "no option", body: "/resolve D-001", want: []Command{bad(1, "`/resolve D-001` "+needOption)}},
		{name: "no option after a phase", body: "/resolve requirements:d-001", want: []Command{bad(1, "`/resolve requirements:D-001` "+needOption)}},
		{name: "option before id", body: "/resolve approve D-001", want: []Command{bad(1, "`approve` is not a decision ID: "+idFirst+", e.g. `/resolve D-001 approve`")}},
		{name: "not an id", body: "/resolve D001 approve", want: []Command{bad(1, "`D001` "+notID)}},
		{name: "id with a letter at the end", body: "/resolve D-001a approve", want: []Command{bad(1, notID)}},
		{name: "id with a double hyphen", body: "/resolve D--001 approve", want: []Command{bad(1, notID)}},
		{name: "id in a link", body: "/resolve [D-001](#x) approve", want: []Command{bad(1, "the first word after `/resolve` "+notID)}},
		{name: "mention as id is not echoed", body: "/resolve @octocat approve", want: []Command{bad(1, "the first word after `/resolve` "+notID)}},
		{name: "empty phase", body: "/resolve :D-001 approve", want: []Command{bad(1, emptyPhase)}},
		{name: "too many colons", body: "/resolve a:b:D-001 approve", want: []Command{bad(1, "`a:b:D-001` "+twoColons)}},
		{name: "space after the phase colon", body: "/resolve requirements: D-001 approve", want: []Command{bad(1, "`requirements:` "+noIDAfter)}},
		{name: "bad phase", body: "/resolve re<q>:D-001 approve", want: []Command{bad(1, "the phase "+notPhase)}},
		{name: "bad id after a phase", body: "/resolve requirements:approve D-001", want: []Command{bad(1, "`approve` "+notID)}},
		{name: "option in bold", body: "/resolve D-001 **approve**", want: []Command{bad(1, "the word after the decision ID "+notOption)}},
		{name: "option in backticks", body: "/resolve D-001 `approve`", want: []Command{bad(1, notOption)}},
		{name: "option with an escape", body: "/resolve D-001 appro\\ve", want: []Command{bad(1, notOption)}},
		{name: "option that is only punctuation", body: "/resolve D-001 ...", want: []Command{bad(1, notOption)}},
		{name: "option too long", body: "/resolve D-001 " + strings.Repeat("a", 65), want: []Command{bad(1, notOption)}},
		{name: "option of the longest length", body: "/resolve D-001 " + strings.Repeat("a", 64), want: []Command{resolve(1, "D-001", strings.Repeat("a", 64))}},
		{name: "longest word is quoted", body: "/resolve " + strings.Repeat("a", 64) + " approve", want: []Command{bad(1, "`"+strings.Repeat("a", 64)+"` "+notID)}},
		{name: "longer word is not quoted", body: "/resolve " + strings.Repeat("a", 65) + " approve", want: []Command{bad(1, "the first word after `/resolve` "+notID)}},
		{name: "word with a dot is quoted", body: "/resolve v1.2 approve", want: []Command{bad(1, "`v1.2` "+notID)}},
		{name: "id too long", body: "/resolve D-" + strings.Repeat("1", 63) + " approve", want: []Command{bad(1, notID)}},
		{name: "control character", body: "/resolve D-001 approve\x07", want: []Command{bad(1, controlChar)}},
		{name: "control character in help", body: "/phasegate help\x00", want: []Command{bad(1, controlChar)}},
		{name: "delete", body: "/resolve D-001 approve\x7f", want: []Command{bad(1, controlChar)}},
		{name: "last c1 control", body: "/resolve D-001 approve\u009f", want: []Command{bad(1, controlChar)}},
		{name: "unit separator", body: "/resolve D-001 approve\x1f", want: []Command{bad(1, controlChar)}},
		{name: "escape sequence", body: "/resolve D-001 \x1b[31mapprove", want: []Command{bad(1, controlChar)}},
		{name: "unknown subcommand", body: "/phasegate frobnicate", want: []Command{{Line: 1, Kind: Unknown, Suggestion: "/phasegate help", Reason: "`frobnicate` " + notSubcomand}}},
		{name: "phasegate resolve", body: "/phasegate resolve D-001 approve", want: []Command{{Line: 1, Kind: Unknown, Suggestion: "/resolve", Reason: "write `/resolve D-001 approve`"}}},
		{name: "phasegate decisions", body: "/phasegate decisions", want: []Command{{Line: 1, Kind: Unknown, Suggestion: "/decisions", Reason: "write `/decisions`"}}},
	})
}

func TestParseNearMiss(t *testing.T) {
	runParseCases(t, []parseCase{
		{name: "transposition", body: "/reslove D-001 approve", want: []Command{near(1, "/resolve")}},
		{name: "missing letter", body: "/resolv D-001 approve", want: []Command{near(1, "/resolve")}},
		{name: "extra letter", body: "/resolved D-001 approve", want: []Command{near(1, "/resolve")}},
		{name: "upper case", body: "/RESLOVE D-001 approve", want: []Command{{Line: 1, Kind: Unknown, Suggestion: "/resolve", Reason: "`/RESLOVE` is not a phasegate command; did you mean `/resolve`?"}}},
		{name: "singular", body: "/decision", want: []Command{near(1, "/decisions")}},
		{name: "two edits", body: "/descisons", want: []Command{near(1, "/decisions")}},
		{name: "phasegate misspelled", body: "/phasegat help", want: []Command{near(1, "/phasegate help")}},
		{name: "subcommand misspelled", body: "/phasegate hlp", want: []Command{{Line: 1, Kind: Unknown, Suggestion: "/phasegate help", Reason: "`hlp` " + notSubcomand + "; did you mean `/phasegate help`?"}}},
		{name: "two letters more than phasegate", body: "/phasegatess", want: []Command{near(1, "/phasegate help")}},
		{name: "upper case, one edit", body: "/PHASEGATEA", want: []Command{near(1, "/phasegate help")}},
		{name: "three edits is too far", body: "/revlose D-001 approve\n/rslv D-001 approve", want: nil},
		{name: "other bots are ignored", body: "/lgtm\n/approve\n/assign @octocat\n/hold\n/retest\n/help\n/cc @a\n/remove lgtm\n/kind bug", want: nil},
		{name: "other words are ignored", body: "/shrug\n/giphy cats\n/me waves", want: nil},
	})
}

func TestParseMarkdown(t *testing.T) {
	ok := "/resolve D-009 approve"
	okCmd := func(line int) Command { return resolve(line, "D-009", "approve") }
	runParseCases(t, []parseCase{
		{name: "backtick fence", body: "```\n/resolve D-001 approve\n```\n" + ok, want: []Command{okCmd(4)}},
		{name: "tilde fence", body: "~~~\n/resolve D-001 approve\n~~~\n" + ok, want: []Command{okCmd(4)}},
		{name: "fence with info string", body: "```text\n/resolve D-001 approve\n```\n" + ok, want: []Command{okCmd(4)}},
		{name: "shorter closer does not close", body: "````\n```\n/resolve D-001 approve\n````\n" + ok, want: []Command{okCmd(5)}},
		{name: "longer closer closes", body: "```\n/resolve D-001 approve\n`````\n" + ok, want: []Command{okCmd(4)}},
		{name: "other fence char does not close", body: "```\n~~~\n/resolve D-001 approve\n```\n" + ok, want: []Command{okCmd(5)}},
		{name: "closer with text does not close", body: "```\n``` x\n/resolve D-001 approve\n```\n" + ok, want: []Command{okCmd(5)}},
		{name: "closer with trailing spaces closes", body: "```\n/resolve D-001 approve\n```   \n" + ok, want: []Command{okCmd(4)}},
		{name: "indented fence", body: "   ```\n/resolve D-001 approve\n   ```\n" + ok, want: []Command{okCmd(4)}},
		{name: "indented closer", body: "```\n/resolve D-001 approve\n   ```\n" + ok, want: []Command{okCmd(4)}},
		{name: "closer indented four is content", body: "```\n    ```\n/resolve D-001 approve\n```\n" + ok, want: []Command{okCmd(5)}},
		{name: "four spaces is not a fence", body: "    ```\n" + ok, want: []Command{okCmd(2)}},
		{name: "backtick in the info string: not a fence", body: "``` a`b\n" + ok, want: []Command{okCmd(2)}},
		{name: "tilde fence may have backticks in its info", body: "~~~ a`b\n/resolve D-001 approve\n~~~\n" + ok, want: []Command{okCmd(4)}},
		{name: "two backticks is not a fence", body: "``\n" + ok, want: []Command{okCmd(2)}},
		{name: "unclosed fence runs to the end", body: "```\n/resolve D-001 approve\n\n" + ok, want: nil},
		{name: "fence interrupts a paragraph", body: "text\n```\n/resolve D-001 approve\n```\n" + ok, want: []Command{okCmd(5)}},
		{name: "fence in a list item", body: "- item\n  ```\n  /resolve D-001 approve\n  ```\n\n" + ok, want: []Command{okCmd(6)}},
		{name: "fence on the list marker line", body: "1. ```\n   /resolve D-001 approve\n   ```\n\n" + ok, want: []Command{okCmd(5)}},
		{name: "list item ends its fence", body: "- ```\n/resolve D-001 approve", want: []Command{resolve(2, "D-001", "approve")}},
		{name: "fence in a quote", body: "> ```\n> /resolve D-001 approve\n> ```\n\n" + ok, want: []Command{okCmd(5)}},
		{name: "quote ends its fence", body: "> ```\n/resolve D-001 approve", want: []Command{resolve(2, "D-001", "approve")}},
		{name: "quote", body: "> /resolve D-001 approve\n\n" + ok, want: []Command{okCmd(3)}},
		{name: "indented quote", body: "   > /resolve D-001 approve\n\n" + ok, want: []Command{okCmd(3)}},
		{name: "nested quote", body: "> > /resolve D-001 approve\n\n" + ok, want: []Command{okCmd(3)}},
		{name: "quote without a space", body: ">/resolve D-001 approve\n\n" + ok, want: []Command{okCmd(3)}},
		{name: "email-style reply", body: "On Mon, Alice wrote:\n> Please decide.\n> /resolve D-001 reject\n\n" + ok, want: []Command{okCmd(5)}},
		{name: "lazy continuation of a quote is the author's", body: "> Should we ship?\n/resolve D-001 approve", want: []Command{resolve(2, "D-001", "approve")}},
		{name: "indented code", body: "    /resolve D-001 approve\n\n" + ok, want: []Command{okCmd(3)}},
		{name: "tab-indented code", body: "\t/resolve D-001 approve\n\n" + ok, want: []Command{okCmd(3)}},
		{name: "indented continuation line is not a command", body: "text\n    /resolve D-001 approve", want: nil},
		{name: "tab-indented continuation line is not a command", body: "text\n\t/resolve D-001 approve\n\ntext\n \t/resolve D-002 approve", want: nil},
		// A comment that a paragraph leaves open ends with it, also when a
		// raw HTML block follows at once (GitHub escapes the "<!--").
		{name: "unclosed inline comment ends at an html block", body: "a <!-- b\n<div>\n\n" + ok, want: []Command{okCmd(4)}},
		{name: "code in a list item", body: "- item\n\n      /resolve D-001 approve\n\n" + ok, want: []Command{okCmd(5)}},
		{name: "html comment block", body: "<!--\n/resolve D-001 approve\n-->\n" + ok, want: []Command{okCmd(4)}},
		{name: "html comment block with blank lines", body: "<!-- template:\n\n/resolve D-001 approve\n\n-->\n" + ok, want: []Command{okCmd(6)}},
		{name: "one-line html comment", body: "<!-- /resolve D-001 approve -->\n" + ok, want: []Command{okCmd(2)}},
		{name: "inline html comment across lines", body: "Thanks <!--\n/resolve D-001 approve\n--> bye\n" + ok, want: []Command{okCmd(4)}},
		{name: "unclosed inline comment hides the rest of the paragraph", body: "a <!-- b\n/resolve D-001 approve\n\n" + ok, want: []Command{okCmd(4)}},
		{name: "comment on the command line", body: ok + " <!-- a secret -->", want: []Command{okCmd(1)}},
		{name: "comment inside a word is not seen", body: "/resolve D-009 app<!-- x -->rove", want: []Command{okCmd(1)}},
		// GitHub escapes the "-->" of a paragraph ("--&gt;"), so only raw HTML closes the comment.
		{name: "comment left open in raw html hides what follows", body: "<div><!--\n</div>\n\n/resolve D-001 approve\n\n-->\n" + ok, want: nil},
		{name: "raw html closes a comment left open", body: "<div><!--\n</div>\n\n/resolve D-001 approve\n\n<div>-->\n\n" + ok, want: []Command{okCmd(8)}},
		{name: "script block", body: "<script>\n/resolve D-001 approve\n</script>\n" + ok, want: []Command{okCmd(4)}},
		{name: "details block", body: "<details>\n/resolve D-001 approve\n</details>\n\n" + ok, want: []Command{okCmd(5)}},
		{name: "paragraph inside details is hidden", body: "<details>\n<summary>Decisions</summary>\n\n" + ok + "\n\n</details>", want: nil},
		{name: "paragraph inside open details is hidden too", body: "<details open>\n\n" + ok + "\n\n</details>", want: nil},
		{name: "paragraph after details", body: "<details>\n<summary>Log</summary>\n\nx\n\n</details>\n\n" + ok, want: []Command{okCmd(8)}},
		{name: "html tag line interrupting nothing", body: "<custom-tag>\n/resolve D-001 approve\n\n" + ok, want: []Command{okCmd(4)}},
		{name: "html tag in a paragraph", body: "text\n<custom-tag>\n" + ok, want: []Command{okCmd(3)}},
		{name: "html block ends at a blank line", body: "<div>\n\n" + ok, want: []Command{okCmd(3)}},
	})
}

func TestParseRationale(t *testing.T) {
	long := strings.Repeat("é", MaxRationale+10)
	runParseCases(t, []parseCase{
		{name: "following lines of the paragraph", body: "/resolve D-001 approve\nThe plan covers every story.\nShip it.", want: []Command{
			withRationale(resolve(1, "D-001", "approve"), "The plan covers every story.\nShip it.")}},
		{name: "line and following lines", body: "/resolve D-001 approve because\nthe tests pass", want: []Command{
			withRationale(resolve(1, "D-001", "approve"), "because\nthe tests pass")}},
		{name: "ends at a blank line", body: "/resolve D-001 approve\nreason\n\nunrelated", want: []Command{
			withRationale(resolve(1, "D-001", "approve"), "reason")}},
		{name: "ends at the next command", body: "/resolve D-001 approve\nreason one\n/resolve D-002 capture\nreason two", want: []Command{
			withRationale(resolve(1, "D-001", "approve"), "reason one"), withRationale(resolve(3, "D-002", "capture"), "reason two")}},
		{name: "ends at another bot's command", body: "/resolve D-001 approve\nreason\n/lgtm\nmore", want: []Command{
			withRationale(resolve(1, "D-001", "approve"), "reason")}},
		{name: "ends at an invalid command", body: "/resolve D-001 approve\nreason\n/resolve D-002\nmore", want: []Command{
			withRationale(resolve(1, "D-001", "approve"), "reason"), bad(3, needOption)}},
		{name: "a path does not end it", body: "/resolve D-001 approve\n/etc/config is fine", want: []Command{
			withRationale(resolve(1, "D-001", "approve"), "/etc/config is fine")}},
		{name: "ends at a fence", body: "/resolve D-001 approve\nreason\n```\ncode\n```", want: []Command{
			withRationale(resolve(1, "D-001", "approve"), "reason")}},
		{name: "ends at a quote", body: "/resolve D-001 approve\nreason\n> quoted", want: []Command{
			withRationale(resolve(1, "D-001", "approve"), "reason")}},
		{name: "ends at a list", body: "/resolve D-001 approve\nreason\n- item", want: []Command{
			withRationale(resolve(1, "D-001", "approve"), "reason")}},
		{name: "ends at a setext underline", body: "/resolve D-001 approve\nreason\n===", want: []Command{
			withRationale(resolve(1, "D-001", "approve"), "reason")}},
		{name: "indented continuation lines are trimmed", body: "/resolve D-001 approve\n      indented reason", want: []Command{
			withRationale(resolve(1, "D-001", "approve"), "indented reason")}},
		{name: "html comments are left out", body: "/resolve D-001 approve <!-- hidden --> shown\nalso <!-- hidden\nhidden --> shown", want: []Command{
			withRationale(resolve(1, "D-001", "approve"), "shown\nalso\nshown")}},
		{name: "markdown is kept as written", body: "/resolve D-001 approve **bold** and `code`", want: []Command{
			withRationale(resolve(1, "D-001", "approve"), "**bold** and `code`")}},
		{name: "none for decisions", body: "/decisions\nwhat is left?", want: []Command{{Line: 1, Kind: Decisions}}},
		{name: "capped", body: "/resolve D-001 approve " + long, want: []Command{
			{Line: 1, Kind: Resolve, ID: "D-001", Option: "approve", Rationale: long[:2*MaxRationale], RationaleTruncated: true}}},
		{name: "capped across lines", body: "/resolve D-001 approve\n" + long[:2*(MaxRationale-2)] + "\nmore", want: []Command{
			{Line: 1, Kind: Resolve, ID: "D-001", Option: "approve", Rationale: long[:2*(MaxRationale-2)] + "\nm", RationaleTruncated: true}}},
		{name: "no line break at the cap", body: "/resolve D-001 approve\n" + long[:2*(MaxRationale-1)] + "\nmore", want: []Command{
			{Line: 1, Kind: Resolve, ID: "D-001", Option: "approve", Rationale: long[:2*(MaxRationale-1)], RationaleTruncated: true}}},
		{name: "a line of the longest length is read", body: "/resolve D-001 approve\n" + strings.Repeat("x", MaxLineLen), want: []Command{
			{Line: 1, Kind: Resolve, ID: "D-001", Option: "approve", Rationale: strings.Repeat("x", MaxRationale), RationaleTruncated: true}}},
		{name: "slash lines that are no words", body: "/resolve D-001 approve\n/\n/ x\n/\u00a0y\n/:", want: []Command{
			withRationale(resolve(1, "D-001", "approve"), "/\n/ x\n/\u00a0y\n/:")}},
		{name: "direction controls are dropped from following lines", body: "/resolve D-001 approve\na\u061cb\u200ec\u200fd\u202ae\u202bf\u202cg\u202dh\u202ei\u2066j\u2067k\u2068l\u2069m\ufeffn", want: []Command{
			withRationale(resolve(1, "D-001", "approve"), "abcdefghijklmn")}},
		{name: "a long line ends it", body: "/resolve D-001 approve\nshort\n" + strings.Repeat("x", MaxLineLen+1) + "\nmore", want: []Command{
			withRationale(resolve(1, "D-001", "approve"), "short")}},
	})
}

func TestParseUnicode(t *testing.T) {
	runParseCases(t, []parseCase{
		{name: "crlf", body: "Thanks\r\n/resolve D-001 approve\r\nbecause\r\n\r\n/decisions\r\n", want: []Command{
			withRationale(resolve(2, "D-001", "approve"), "because"), {Line: 5, Kind: Decisions}}},
		{name: "lone cr", body: "Thanks\r/resolve D-001 approve\rbecause", want: []Command{
			withRationale(resolve(2, "D-001", "approve"), "because")}},
		{name: "crlf fence", body: "```\r\n/resolve D-001 approve\r\n```\r\n/resolve D-002 capture", want: []Command{resolve(4, "D-002", "capture")}},
		{name: "no-break spaces separate", body: "/resolve\u00a0D-001\u00a0approve\u00a0ok", want: []Command{withRationale(resolve(1, "D-001", "approve"), "ok")}},
		{name: "other spaces separate", body: "/resolve\u2003D-001\u3000approve\u202fok", want: []Command{withRationale(resolve(1, "D-001", "approve"), "ok")}},
		// Invisible characters are never dropped to read a command: the line
		// is Invalid (TestParseInvisibleCharacters).
		{name: "zero-width characters around words", body: "/resolve \u200bD-001\u200c \ufeffapprove\u2060", want: []Command{bad(1, hiddenChar("U+200B"))}},
		{name: "zero-width characters inside words", body: "/reso\u200blve D-0\u200d01 app\u00adrove", want: []Command{bad(1, hiddenChar("U+200B"))}},
		{name: "direction override inside a word", body: "/resolve D-001 \u202eevorppa", want: []Command{bad(1, hiddenChar("U+202E"))}},
		{name: "zero-width space before the slash: not a command", body: "\u200b/resolve D-001 approve", want: nil},
		{name: "no-break space before the slash: not a command", body: "\u00a0/resolve D-001 approve", want: nil},
		{name: "fullwidth solidus: not a command", body: "／resolve D-001 approve", want: nil},
		{name: "byte order mark at the start", body: "\ufeff/resolve D-001 approve", want: []Command{resolve(1, "D-001", "approve")}},
		{name: "emoji in the rationale", body: "/resolve D-001 approve 👍 ship it 👨‍👩‍👧 🚀", want: []Command{
			withRationale(resolve(1, "D-001", "approve"), "👍 ship it 👨‍👩‍👧 🚀")}},
		{name: "emoji as option", body: "/resolve D-001 👍", want: []Command{bad(1, notOption)}},
		{name: "non-ascii option", body: "/resolve D-001 approuvé", want: []Command{bad(1, "the word after the decision ID "+notOption)}},
		{name: "cyrillic lookalike in the id", body: "/resolve D-001 approve\n\n/resolve Д-001 approve", want: []Command{resolve(1, "D-001", "approve"), bad(3, notID)}},
		{name: "control characters and bidi are dropped from following lines", body: "/resolve D-001 approve\nok\x07 \u202eyes\u202c", want: []Command{
			withRationale(resolve(1, "D-001", "approve"), "ok yes")}},
		{name: "invalid utf-8 in the rationale", body: "/resolve D-001 approve caf\xe9", want: []Command{withRationale(resolve(1, "D-001", "approve"), "caf\ufffd")}},
		{name: "invalid utf-8 in the option", body: "/resolve D-001 appro\xffve", want: []Command{bad(1, notOption)}},
		{name: "invalid utf-8 in the verb", body: "/resolve\xff D-001 approve", want: nil},
	})
}

func TestParseLimits(t *testing.T) {
	var many strings.Builder
	for i := 1; i <= MaxCommands+5; i++ {
		fmt.Fprintf(&many, "/resolve D-%03d approve\n", i)
	}
	res := ParseAll(many.String())
	if len(res.Commands) != MaxCommands || !res.Truncated || res.Commands[MaxCommands-1].ID != fmt.Sprintf("D-%03d", MaxCommands) {
		t.Errorf("%d commands: got %d, truncated %v", MaxCommands+5, len(res.Commands), res.Truncated)
	}
	exact := strings.Repeat("/decisions\n", MaxCommands)
	if res := ParseAll(exact); len(res.Commands) != MaxCommands || res.Truncated {
		t.Errorf("%d commands: got %d, truncated %v", MaxCommands, len(res.Commands), res.Truncated)
	}

	longCmd := "/resolve D-001 approve " + strings.Repeat("x", MaxLineLen)
	res = ParseAll(longCmd + "\n\n/resolve D-002 capture")
	if len(res.Commands) != 1 || res.Commands[0].ID != "D-002" || res.LongLines != 1 {
		t.Errorf("long line: %s long lines %d", dump(res.Commands), res.LongLines)
	}
	fits := "/resolve D-001 approve " + strings.Repeat("x", MaxLineLen-len("/resolve D-001 approve "))
	if res := ParseAll(fits); len(res.Commands) != 1 || res.LongLines != 0 {
		t.Errorf("line of exactly %d bytes: %d commands", MaxLineLen, len(res.Commands))
	}

	deep := strings.Repeat("> ", MaxDepth+1) + "x\n/resolve D-001 approve"
	if res := ParseAll(deep); len(res.Commands) != 0 || !res.TooDeep {
		t.Errorf("nesting deeper than %d: %s too deep %v", MaxDepth, dump(res.Commands), res.TooDeep)
	}
	shallow := strings.Repeat("> ", MaxDepth) + "x\n\n/resolve D-001 approve"
	if res := ParseAll(shallow); len(res.Commands) != 1 || res.TooDeep {
		t.Errorf("nesting %d deep: %s too deep %v", MaxDepth, dump(res.Commands), res.TooDeep)
	}
	hugeQuote := strings.Repeat("> ", MaxBody/2) + "\n/resolve D-001 approve"
	if res := ParseAll(hugeQuote[len(hugeQuote)-MaxBody:]); !res.TooDeep || len(res.Commands) != 0 {
		t.Errorf("%d bytes of quote markers: too deep %v, %s", MaxBody, res.TooDeep, dump(res.Commands))
	}
	deepAfter := "/resolve D-001 approve\n\n" + strings.Repeat("> ", MaxDepth+1) + "x"
	if res := ParseAll(deepAfter); !res.TooDeep || len(res.Commands) != 0 {
		t.Errorf("a command before nesting deeper than %d: too deep %v, %s", MaxDepth, res.TooDeep, dump(res.Commands))
	}

	atMax := "/resolve D-001 approve\n\n" + strings.Repeat("a short paragraph\n\n", MaxBody/19-2)
	atMax += strings.Repeat("x", MaxBody-len(atMax))
	if res := ParseAll(atMax); len(res.Commands) != 1 || res.TooLong {
		t.Errorf("body of exactly %d bytes: %s too long %v", MaxBody, dump(res.Commands), res.TooLong)
	}
	if res := ParseAll(atMax + "x"); len(res.Commands) != 0 || !res.TooLong {
		t.Errorf("body of %d bytes: %s too long %v", MaxBody+1, dump(res.Commands), res.TooLong)
	}
}

func TestCommandString(t *testing.T) {
	tests := []struct {
		name   string
		body   string
		want   string
		target string
		key    string
	}{
		{name: "resolve", body: "/RESOLVE d-001 Approve because", want: "/resolve D-001 Approve", target: "D-001", key: "approve"},
		{name: "phase", body: "/resolve Requirements:d-001 approve", want: "/resolve requirements:D-001 approve", target: "requirements:D-001", key: "approve"},
		{name: "decisions", body: "/decisions now", want: "/decisions"},
		{name: "help", body: "/phasegate", want: "/phasegate help"},
		{name: "invalid", body: "/resolve", want: ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cs := Parse(tc.body)
			if len(cs) != 1 {
				t.Fatalf("%d commands", len(cs))
			}
			if got := cs[0].String(); got != tc.want {
				t.Errorf("String() = %q, want %q", got, tc.want)
			}
			if got := cs[0].Target(); tc.target != "" && got != tc.target {
				t.Errorf("Target() = %q, want %q", got, tc.target)
			}
			if got := cs[0].OptionKey(); got != tc.key {
				t.Errorf("OptionKey() = %q, want %q", got, tc.key)
			}
			if again := Parse(cs[0].String()); tc.want != "" && (len(again) != 1 || again[0].String() != tc.want) {
				t.Errorf("String() does not read back: %s", dump(again))
			}
		})
	}
	for k := Kind(0); k <= Unknown+1; k++ {
		if k.String() == "" {
			t.Errorf("Kind(%d) has no name", k)
		}
	}
}

func TestIsID(t *testing.T) {
	tests := []struct {
		id   string
		want bool
	}{
		{id: "D-001", want: true},
		{id: "d-1", want: true},
		{id: "QA-D-002", want: true},
		{id: "decision-7", want: true},
		{id: "D1-2", want: true},
		{id: "D-" + strings.Repeat("0", 62), want: true},
		{id: "D-" + strings.Repeat("0", 63), want: false},
		{id: "", want: false},
		{id: "D", want: false},
		{id: "D-", want: false},
		{id: "D001", want: false},
		{id: "1-001", want: false},
		{id: "-001", want: false},
		{id: "D--001", want: false},
		{id: "D-001-", want: false},
		{id: "D-00a", want: false},
		{id: "D_001", want: false},
		{id: "D-001 ", want: false},
		{id: "Д-001", want: false},
		{id: "approve", want: false},
	}
	for _, tc := range tests {
		t.Run(tc.id, func(t *testing.T) {
			if got := IsID(tc.id); got != tc.want {
				t.Errorf("IsID(%q) = %v, want %v", tc.id, got, tc.want)
			}
		})
	}
}

func TestSuggest(t *testing.T) {
	options := []string{"approve", "request-changes", "reject"}
	tests := []struct {
		name       string
		word       string
		candidates []string
		want       string
		ok         bool
	}{
		{name: "transposition", word: "aprpove", candidates: options, want: "approve", ok: true},
		{name: "missing letter", word: "aprove", candidates: options, want: "approve", ok: true},
		{name: "two edits", word: "aprov", candidates: options, want: "approve", ok: true},
		{name: "case", word: "APPROVE", candidates: options, want: "approve", ok: true},
		{name: "case of the candidate", word: "reject", candidates: []string{"Reject"}, want: "Reject", ok: true},
		{name: "closest wins", word: "rejects", candidates: options, want: "reject", ok: true},
		{name: "first of equals wins", word: "cat", candidates: []string{"bat", "cab"}, want: "bat", ok: true},
		{name: "hyphen forgotten", word: "requestchanges", candidates: options, want: "request-changes", ok: true},
		{name: "space instead of hyphen", word: "request changes", candidates: options, want: "request-changes", ok: true},
		{name: "too far", word: "maybe", candidates: options, ok: false},
		{name: "three edits", word: "aprv", candidates: options, ok: false},
		{name: "short word, one edit", word: "hlp", candidates: []string{"help"}, want: "help", ok: true},
		{name: "two letters, one edit", word: "no", candidates: []string{"go"}, ok: false},
		{name: "two letters, case", word: "GO", candidates: []string{"no", "go"}, want: "go", ok: true},
		{name: "short word, two edits", word: "hp", candidates: []string{"help"}, ok: false},
		{name: "one letter", word: "x", candidates: []string{"y"}, ok: false},
		{name: "empty word", word: "", candidates: []string{"a"}, ok: false},
		{name: "no candidates", word: "approve", candidates: nil, ok: false},
		{name: "empty candidate", word: "ab", candidates: []string{""}, ok: false},
		{name: "unicode", word: "ÄPROVE", candidates: []string{"äprove"}, want: "äprove", ok: true},
		{name: "long word", word: strings.Repeat("a", 65), candidates: []string{strings.Repeat("a", 65)}, ok: false},
		{name: "long candidate skipped", word: "approve", candidates: []string{strings.Repeat("a", 65), "approve"}, want: "approve", ok: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := Suggest(tc.word, tc.candidates)
			if got != tc.want || ok != tc.ok {
				t.Errorf("Suggest(%q, %q) = %q, %v; want %q, %v", tc.word, tc.candidates, got, ok, tc.want, tc.ok)
			}
		})
	}
}

func TestOSADistance(t *testing.T) {
	tests := []struct {
		a, b string
		want int
	}{
		{a: "", b: "", want: 0},
		{a: "abc", b: "abc", want: 0},
		{a: "abc", b: "acb", want: 1},
		{a: "ca", b: "abc", want: 3}, // optimal string alignment, not unrestricted Damerau–Levenshtein
		{a: "kitten", b: "sitting", want: 3},
		{a: "resolve", b: "reslove", want: 1},
		{a: "resolve", b: "remove", want: 2},
		{a: "decisions", b: "descisons", want: 2},
	}
	for _, tc := range tests {
		t.Run(tc.a+"/"+tc.b, func(t *testing.T) {
			if got := osaDistance([]rune(tc.a), []rune(tc.b), 100); got != tc.want {
				t.Errorf("osaDistance(%q, %q) = %d, want %d", tc.a, tc.b, got, tc.want)
			}
			if got := osaDistance([]rune(tc.a), []rune(tc.b), 1); tc.want >= 1 && got < 1 {
				t.Errorf("bounded osaDistance(%q, %q) = %d", tc.a, tc.b, got)
			}
		})
	}
}

// TestOracle: the goldmark oracle of the fuzz targets does flag a command
// on a line of code, raw HTML or an HTML comment.
func TestOracle(t *testing.T) {
	tests := []struct {
		name string
		body string
		line int
		want string
	}{
		{name: "fenced", body: "```\n/resolve D-001 approve\n```", line: 2, want: "fenced code"},
		{name: "fenced in a list", body: "- ```\n  /resolve D-001 approve", line: 2, want: "fenced code"},
		{name: "indented", body: "    /resolve D-001 approve", line: 1, want: "indented code"},
		{name: "html block", body: "<div>\n/resolve D-001 approve", line: 2, want: "an HTML block"},
		{name: "html comment block", body: "<!--\n/resolve D-001 approve\n-->", line: 2, want: "an HTML block"},
		{name: "html comment closing line", body: "<!--\nx\n/resolve D-001 approve -->", line: 3, want: "an HTML block"},
		{name: "inline html comment", body: "a <!--\n/resolve D-001 approve\n-->", line: 2, want: "an HTML comment"},
		{name: "paragraph", body: "a\n/resolve D-001 approve", line: 2, want: ""},
		{name: "after a fence", body: "```\n```\n/resolve D-001 approve", line: 3, want: ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := resolve(tc.line, "D-001", "approve")
			c.Raw = splitLines(tc.body)[tc.line-1]
			got := oracleViolation(tc.body, []Command{c})
			if (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
				t.Errorf("oracleViolation = %q, want %q", got, tc.want)
			}
		})
	}
}

// OptionKey is Option lower-cased, for comparing with a decision's options.
func (c Command) OptionKey() string { return strings.ToLower(c.Option) }
