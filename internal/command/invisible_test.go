package command

import (
	"fmt"
	"strings"
	"testing"
)

// hiddenChar is the start of the reason for a command line that holds an
// invisible or bidirectional control character, followed by its code
// point.
func hiddenChar(code string) string {
	return "this command contains an invisible or bidirectional control character, " + code
}

// TestParseInvisibleCharacters: commands are what they look like. A
// direction control or another invisible character anywhere on a command
// line makes what phasegate would read differ from what a person sees
// (`/resolve D-` U+202E `100` U+202C ` approve` shows as
// `/resolve D-001 approve` but named D-100), so such a line is Invalid,
// with a reason that names the character; it is never stripped and read.
// The nearest legitimate lines (emoji, non-Latin and right-to-left text in
// the rationale) are read as before.
func TestParseInvisibleCharacters(t *testing.T) {
	var cases []parseCase
	bidi := []struct {
		r    rune
		name string
	}{
		{0x061c, "ARABIC LETTER MARK"}, {0x200e, "LEFT-TO-RIGHT MARK"}, {0x200f, "RIGHT-TO-LEFT MARK"},
		{0x202a, "LEFT-TO-RIGHT EMBEDDING"}, {0x202b, "RIGHT-TO-LEFT EMBEDDING"}, {0x202c, "POP DIRECTIONAL FORMATTING"},
		{0x202d, "LEFT-TO-RIGHT OVERRIDE"}, {0x202e, "RIGHT-TO-LEFT OVERRIDE"}, {0x2066, "LEFT-TO-RIGHT ISOLATE"},
		{0x2067, "RIGHT-TO-LEFT ISOLATE"}, {0x2068, "FIRST STRONG ISOLATE"}, {0x2069, "POP DIRECTIONAL ISOLATE"},
	}
	for _, b := range bidi {
		code := fmt.Sprintf("U+%04X (%s)", b.r, b.name)
		cases = append(cases,
			parseCase{name: "bidi in the id " + code, body: "/resolve D-" + string(b.r) + "100 approve", want: []Command{bad(1, hiddenChar(code))}},
			parseCase{name: "bidi as an entity " + code, body: fmt.Sprintf("/resolve D-001 approve &#x%X; shown", b.r), want: []Command{bad(1, hiddenChar(code)+", written as an HTML character reference")}},
		)
	}
	cases = append(cases, []parseCase{
		// The attack of issue 18: GitHub shows `/resolve D-001 approve`;
		// read with the override dropped, it named D-100.
		{name: "override that turns D-100 into D-001", body: "/resolve D-\u202e100\u202c approve", want: []Command{bad(1, hiddenChar("U+202E (RIGHT-TO-LEFT OVERRIDE)"))}},
		{name: "isolate around the option", body: "/resolve D-001 \u2067evorppa\u2069", want: []Command{bad(1, hiddenChar("U+2067"))}},
		{name: "override in the verb", body: "/reso\u202elve D-001 approve", want: []Command{bad(1, hiddenChar("U+202E"))}},
		{name: "override in the phase", body: "/resolve requi\u202erements:D-001 approve", want: []Command{bad(1, hiddenChar("U+202E"))}},
		// A control in the rationale after the option makes the whole line
		// Invalid too: a reader takes in the line as one and cannot see
		// where the parser's words end (`approve.` is the option approve,
		// any space character separates words), a control right after the
		// option lays out the text shown next to it, and the rationale is
		// recorded and passed on as written. No one types these by hand,
		// so refusing the line costs nothing and leaves nothing to guess.
		{name: "override in the rationale after the option", body: "/resolve D-001 approve \u202eevil", want: []Command{bad(1, hiddenChar("U+202E"))}},
		{name: "mark in the rationale after the option", body: "/resolve D-001 approve looks good \u200f", want: []Command{bad(1, hiddenChar("U+200F"))}},
		{name: "bidi after decisions", body: "/decisions \u202e", want: []Command{bad(1, hiddenChar("U+202E"))}},
		{name: "bidi after help", body: "/phasegate help\u2066", want: []Command{bad(1, hiddenChar("U+2066"))}},
		{name: "the first of several is named", body: "/resolve D-0\u200b01 approve \u202e", want: []Command{bad(1, hiddenChar("U+200B (ZERO WIDTH SPACE)"))}},
		{name: "inside an html comment on the line", body: "/resolve D-001 approve <!-- \u202e -->", want: []Command{bad(1, hiddenChar("U+202E"))}},

		// other format characters
		{name: "zero width space in the id", body: "/resolve D-0\u200b01 approve", want: []Command{bad(1, hiddenChar("U+200B (ZERO WIDTH SPACE)"))}},
		{name: "zero width space between words", body: "/resolve \u200bD-001 approve", want: []Command{bad(1, hiddenChar("U+200B"))}},
		{name: "zero width non-joiner in the option", body: "/resolve D-001 app\u200crove", want: []Command{bad(1, hiddenChar("U+200C (ZERO WIDTH NON-JOINER)"))}},
		{name: "zero width joiner in the option", body: "/resolve D-001 app\u200drove", want: []Command{bad(1, hiddenChar("U+200D (ZERO WIDTH JOINER)"))}},
		{name: "zero width joiner between ascii letters of the rationale", body: "/resolve D-001 approve o\u200dk", want: []Command{bad(1, hiddenChar("U+200D"))}},
		{name: "word joiner in the verb", body: "/reso\u2060lve D-001 approve", want: []Command{bad(1, hiddenChar("U+2060 (WORD JOINER)"))}},
		{name: "byte order mark between words", body: "/resolve \ufeffD-001 approve", want: []Command{bad(1, hiddenChar("U+FEFF (ZERO WIDTH NO-BREAK SPACE)"))}},
		{name: "byte order mark in a later line's command", body: "Hi\n/resolve D-001\ufeff approve", want: []Command{bad(2, hiddenChar("U+FEFF"))}},
		{name: "soft hyphen in the option", body: "/resolve D-001 app\u00adrove", want: []Command{bad(1, hiddenChar("U+00AD (SOFT HYPHEN)"))}},
		{name: "mongolian vowel separator", body: "/resolve D-001\u180e approve", want: []Command{bad(1, hiddenChar("U+180E"))}},
		{name: "invisible times", body: "/resolve D-001 approve 2\u20622", want: []Command{bad(1, hiddenChar("U+2062"))}},
		{name: "interlinear annotation", body: "/resolve D-001 approve \ufff9x\ufffa", want: []Command{bad(1, hiddenChar("U+FFF9"))}},
		{name: "tag characters in the rationale", body: "/resolve D-001 approve \U000E0049\U000E0067\U000E006E\U000E006F\U000E0072\U000E0065", want: []Command{bad(1, hiddenChar("U+E0049 (a tag character)"))}},
		{name: "tag character in the id", body: "/resolve D-001\U000E0031 approve", want: []Command{bad(1, hiddenChar("U+E0031"))}},
		{name: "variation selector in the id", body: "/resolve D-001\ufe0f approve", want: []Command{bad(1, hiddenChar("U+FE0F (a variation selector)"))}},
		{name: "variation selector after an ascii letter of the rationale", body: "/resolve D-001 approve ok\ufe0e", want: []Command{bad(1, hiddenChar("U+FE0E"))}},
		{name: "first variation selector", body: "/resolve D-001\ufe00 approve", want: []Command{bad(1, hiddenChar("U+FE00 (a variation selector)"))}},
		{name: "first supplementary variation selector", body: "/resolve D-001\U000E0100 approve", want: []Command{bad(1, hiddenChar("U+E0100 (a variation selector)"))}},
		{name: "last supplementary variation selector", body: "/resolve D-001\U000E01EF approve", want: []Command{bad(1, hiddenChar("U+E01EF (a variation selector)"))}},
		{name: "cancel tag", body: "/resolve D-001 approve 🏴\U000E007F", want: []Command{bad(1, hiddenChar("U+E007F (a tag character)"))}},
		{name: "literal c1 control", body: "/resolve D-001 approve \u0085", want: []Command{bad(1, hiddenChar("U+0085"))}},
		{name: "combining grapheme joiner", body: "/resolve D-001 appr\u034fove", want: []Command{bad(1, hiddenChar("U+034F"))}},
		{name: "hangul filler as a word", body: "/resolve D-001 approve \u3164", want: []Command{bad(1, hiddenChar("U+3164"))}},
		{name: "zero width joiner before an emoji", body: "/resolve D-001 approve \u200d👍", want: []Command{bad(1, hiddenChar("U+200D"))}},
		{name: "zero width joiner after invalid utf-8", body: "/resolve D-001 approve \xff\u200d👍", want: []Command{bad(1, hiddenChar("U+200D"))}},
		{name: "zero width joiner before a no-break space", body: "/resolve D-001 approve 👍\u200d\u00a0", want: []Command{bad(1, hiddenChar("U+200D"))}},
		{name: "two joiners in a row", body: "/resolve D-001 approve 👨\u200d\u200d👩", want: []Command{bad(1, hiddenChar("U+200D"))}},

		// character references render as the character
		{name: "entity-encoded override in the id", body: "/resolve D-&#x202E;100&#x202C; approve", want: []Command{bad(1, hiddenChar("U+202E (RIGHT-TO-LEFT OVERRIDE), written as an HTML character reference"))}},
		{name: "decimal reference", body: "/resolve D-001 approve &#8238;x", want: []Command{bad(1, hiddenChar("U+202E"))}},
		{name: "upper-case hex reference with zeros", body: "/resolve D-001 approve &#X00202e;x", want: []Command{bad(1, hiddenChar("U+202E"))}},
		{name: "named reference", body: "/resolve D-001 approve &rlm;", want: []Command{bad(1, hiddenChar("U+200F"))}},
		{name: "named zero width space", body: "/resolve D-001 approve a&ZeroWidthSpace;b", want: []Command{bad(1, hiddenChar("U+200B"))}},
		{name: "named joiner even between emoji", body: "/resolve D-001 approve 👨&zwj;👩", want: []Command{bad(1, hiddenChar("U+200D"))}},
		{name: "named soft hyphen", body: "/resolve D-001 appr&shy;ove", want: []Command{bad(1, hiddenChar("U+00AD"))}},
		{name: "tag character reference", body: "/resolve D-001 approve &#xE0041;", want: []Command{bad(1, hiddenChar("U+E0041"))}},
		{name: "a control after references", body: "/resolve D-001 approve &#233;&eacute;\u202e", want: []Command{bad(1, hiddenChar("U+202E"))}},
		{name: "one-digit reference", body: "/resolve D-001 approve &#7;", want: []Command{bad(1, hiddenChar("U+0007"))}},
		{name: "seven-digit decimal reference", body: "/resolve D-001 approve &#0008238;", want: []Command{bad(1, hiddenChar("U+202E"))}},
		{name: "lower-case hex reference", body: "/resolve D-001 approve &#xfeff;", want: []Command{bad(1, hiddenChar("U+FEFF"))}},
		{name: "control character reference", body: "/resolve D-001 approve &#27;[31m", want: []Command{bad(1, hiddenChar("U+001B"))}},
		{name: "c1 control reference", body: "/resolve D-001 approve &#x85;", want: []Command{bad(1, hiddenChar("U+0085"))}},

		// the nearest legitimate lines
		{name: "plain command", body: "/resolve D-001 approve", want: []Command{resolve(1, "D-001", "approve")}},
		{name: "emoji in the rationale", body: "/resolve D-001 approve 👍🏽 ❤️ 🇫🇷 1️⃣ 👨\u200d👩\u200d👧 🏳️\u200d🌈 👩🏾\u200d💻", want: []Command{
			withRationale(resolve(1, "D-001", "approve"), "👍🏽 ❤️ 🇫🇷 1️⃣ 👨\u200d👩\u200d👧 🏳️\u200d🌈 👩🏾\u200d💻")}},
		{name: "non-latin text in the rationale", body: "/resolve D-001 approve 承認します。Согласен. ठीक है", want: []Command{
			withRationale(resolve(1, "D-001", "approve"), "承認します。Согласен. ठीक है")}},
		{name: "arabic in the rationale", body: "/resolve D-001 approve موافق على الخطة 2025", want: []Command{
			withRationale(resolve(1, "D-001", "approve"), "موافق على الخطة 2025")}},
		{name: "hebrew in the rationale", body: "/resolve D-100 approve מאושר, תודה", want: []Command{
			withRationale(resolve(1, "D-100", "approve"), "מאושר, תודה")}},
		{name: "persian with its non-joiner in the rationale", body: "/resolve D-001 approve می\u200cخواهم", want: []Command{
			withRationale(resolve(1, "D-001", "approve"), "می\u200cخواهم")}},
		{name: "right-to-left text on the line before", body: "שלום\n/resolve D-001 approve", want: []Command{resolve(2, "D-001", "approve")}},
		{name: "entities that show as text", body: "/resolve D-001 approve R&D &amp; caf&eacute; &#233; &#x41; &notanentity; &#x202E", want: []Command{
			withRationale(resolve(1, "D-001", "approve"), "R&D &amp; caf&eacute; &#233; &#x41; &notanentity; &#x202E")}},
		{name: "references to no character show U+FFFD", body: "/resolve D-001 approve &#0; &#xD800; &#x110000;", want: []Command{
			withRationale(resolve(1, "D-001", "approve"), "&#0; &#xD800; &#x110000;")}},
		{name: "an ampersand at the end", body: "/resolve D-001 approve a &", want: []Command{withRationale(resolve(1, "D-001", "approve"), "a &")}},
		{name: "a reference cut off at the end", body: "/resolve D-001 approve &#\n\n/resolve D-002 x &#x\n\n/resolve D-003 y &#12", want: []Command{
			withRationale(resolve(1, "D-001", "approve"), "&#"), withRationale(resolve(3, "D-002", "x"), "&#x"), withRationale(resolve(5, "D-003", "y"), "&#12")}},
		{name: "references that are not numbers", body: "/resolve D-001 approve &#; &#x; &#+8238; &#8_238; &#xG; &#12a;", want: []Command{
			withRationale(resolve(1, "D-001", "approve"), "&#; &#x; &#+8238; &#8_238; &#xG; &#12a;")}},
		{name: "invalid utf-8 is not a control character", body: "/resolve D-001 approve caf\x80\x9f", want: []Command{
			withRationale(resolve(1, "D-001", "approve"), "caf\ufffd\ufffd")}},
		{name: "a name cut off at the end", body: "/resolve D-001 approve a &amp", want: []Command{withRationale(resolve(1, "D-001", "approve"), "a &amp")}},
		{name: "a joiner after the emoji a reference stands for", body: "/resolve D-001 approve &#x1F468;\u200d👩 caf&eacute;\u200cé", want: []Command{
			withRationale(resolve(1, "D-001", "approve"), "&#x1F468;\u200d👩 caf&eacute;\u200cé")}},
		{name: "a tab in the rationale", body: "/resolve D-001 approve a\tb", want: []Command{
			withRationale(resolve(1, "D-001", "approve"), "a b")}},
		{name: "too many digits for a reference", body: "/resolve D-001 approve &#x000202E; &#00008238;", want: []Command{
			withRationale(resolve(1, "D-001", "approve"), "&#x000202E; &#00008238;")}},
		{name: "escaped entity shows as written", body: "/resolve D-001 approve &amp;#x202E;", want: []Command{
			withRationale(resolve(1, "D-001", "approve"), "&amp;#x202E;")}},
		{name: "no-break spaces", body: "/resolve\u00a0D-001\u00a0approve", want: []Command{resolve(1, "D-001", "approve")}},
		{name: "a control on a following line is not on the command line", body: "/resolve D-001 approve\nfine \u202eby me", want: []Command{
			withRationale(resolve(1, "D-001", "approve"), "fine by me")}},
		{name: "an invisible character before the slash makes no command", body: "x\n\u202e/resolve D-001 approve", want: nil},
		{name: "a near miss is still a suggestion", body: "/reslove\u200b D-001 approve", want: []Command{near(1, "/resolve")}},
		{name: "other bots' commands are still ignored", body: "/lgtm \u202e", want: nil},
	}...)
	runParseCases(t, cases)
}

// TestInvisibleReason: the reason for a hidden character says what it is
// and what to do, names the character by its code point only (never
// echoing the comment's text), and can be posted as it is.
func TestInvisibleReason(t *testing.T) {
	for _, body := range []string{
		"/resolve D-\u202e100\u202c approve",
		"/resolve D-&#x202E;100&#x202C; approve",
		"/resolve @octocat\u200b <img src=x> approve",
		"/resolve D-001 approve \U000E0040\U000E007F",
	} {
		cs := Parse(body)
		if len(cs) != 1 || cs[0].Kind != Invalid {
			t.Fatalf("Parse(%q) = %s", body, dump(cs))
		}
		r := cs[0].Reason
		if !strings.Contains(r, "invisible or bidirectional control character, U+") || !strings.HasSuffix(r, "; retype the command without it") {
			t.Errorf("Parse(%q): reason %q", body, r)
		}
		if bad := unsafeReason(r); bad != "" || strings.ContainsAny(r, "@<&") || strings.Contains(r, "octocat") {
			t.Errorf("Parse(%q): reason %q is not safe to post: %s", body, r, bad)
		}
	}
}

// TestShownOracle: the oracle of checkShown does flag a command carried
// out from a line that renders an invisible or direction control, written
// as itself or as a character reference.
func TestShownOracle(t *testing.T) {
	tests := []struct {
		name string
		raw  string
		bad  bool
	}{
		{name: "override", raw: "/resolve D-\u202e100\u202c approve", bad: true},
		{name: "override as a reference", raw: "/resolve D-&#x202E;100&#x202C; approve", bad: true},
		{name: "named mark", raw: "/resolve D-001 approve &rlm;", bad: true},
		{name: "tag", raw: "/resolve D-001 approve \U000E0041", bad: true},
		{name: "plain", raw: "/resolve D-001 approve", bad: false},
		{name: "emoji sequence", raw: "/resolve D-001 approve 👨\u200d👩\u200d👧 ❤️", bad: false},
		{name: "reference in a code span", raw: "/resolve D-001 approve `&#x202E;`", bad: false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := resolve(1, "D-001", "approve")
			c.Raw = tc.raw
			if got := shownViolation(c); (got != "") != tc.bad {
				t.Errorf("shownViolation = %q, want a violation: %v", got, tc.bad)
			}
		})
	}
}
