package command

import (
	"strings"
	"unicode/utf8"
)

// Limits. A comment body from GitHub is at most 65,536 characters; Parse
// refuses a body longer than MaxBody bytes without reading it, and bounds
// the rest of its work with these limits, whatever the body.
const (
	// MaxCommands is the number of commands read from one comment; the
	// rest are ignored and Result.Truncated is set.
	MaxCommands = 20
	// MaxLineLen is the longest line, in bytes, that can hold a command.
	// A longer line is never a command (Result.LongLines counts those that
	// start like one), nor part of a rationale.
	MaxLineLen = 10000
	// MaxRationale is the longest rationale, in characters; a longer one
	// is cut and Command.RationaleTruncated is set.
	MaxRationale = 1000
	// MaxToken is the longest command word, decision ID, phase or option,
	// in bytes.
	MaxToken = 64
	// MaxDepth is the deepest nesting of block quotes and list items read.
	// A comment nested deeper yields no command, and Result.TooDeep is
	// set.
	MaxDepth = 32
	// MaxBody is the longest body read, in bytes: GitHub stores at most
	// 65,536 characters, of at most 4 bytes each. A longer body yields no
	// command, and Result.TooLong is set.
	MaxBody = 4 * 65536
)

// RecommendedWord is the option word that stands for the decision's
// recommended option: `/resolve D-002 recommended`.
const RecommendedWord = "recommended"

// Kind is what a command line asks for.
type Kind uint8

const (
	// Resolve is `/resolve [<phase>:]<ID> <option> [rationale…]`.
	Resolve Kind = iota + 1
	// Decisions is `/decisions`: list what is pending on the issue.
	Decisions
	// Help is `/phasegate help` (or `/phasegate` alone).
	Help
	// Invalid is a phasegate command that cannot be carried out as
	// written (Reason says why).
	Invalid
	// Unknown is a slash word that is not a phasegate command but is close
	// to one (`/reslove`, `/decision`), or `/phasegate` followed by a word
	// other than help (`/phasegate hlp`); Suggestion holds the command
	// meant.
	Unknown
)

func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "none"
}

var kindNames = [...]string{"none", "resolve", "decisions", "help", "invalid", "unknown"}

// Command is one command line of a comment.
type Command struct {
	Kind Kind
	// Line is the 1-based number of the command's line in the body (lines
	// end at LF, CR LF or CR).
	Line int
	// Raw is that line as written, without its line ending. It is
	// untrusted text: escape it before showing it.
	Raw string

	// Phase is the phase prefix of `/resolve <phase>:<ID> …`, lower-cased,
	// or "". Compare it with the outcome's phase without regard to case.
	Phase string
	// ID is the decision ID, upper-cased (`d-001` → `D-001`). Compare it
	// with the outcome's IDs without regard to case.
	ID string
	// Option is the chosen option as written (one word; sentence
	// punctuation after it removed). Compare it with the decision's options
	// without regard to case. When Recommended is set it
	// holds the word `recommended` as written.
	Option string
	// Recommended is set for `/resolve <ID> recommended`: take the
	// decision's recommended option. An option literally
	// called "recommended" is therefore only reachable as the recommended
	// one (check rule outcome.option-reserved).
	Recommended bool
	// Rationale is the free text after the option: the rest of the command
	// line and the lines after it in the same paragraph, up to the next
	// line that starts with a slash command, joined with "\n"; at most
	// MaxRationale characters, with control and direction-changing
	// characters removed and HTML comments left out. Untrusted: escape it
	// before showing it.
	Rationale          string
	RationaleTruncated bool

	// Reason says, for Invalid and Unknown, what is wrong, in Markdown that
	// can be posted as it is: it quotes the comment's words only in code
	// spans and only when they consist of letters, digits, '.', '_', ':' or
	// '-' (at most 64), so it holds no mention, reference, link or HTML; a
	// character of the comment it names by its code point only (U+202E).
	Reason string
	// Suggestion is, for Unknown, the command the author probably meant:
	// "/resolve", "/decisions" or "/phasegate help".
	Suggestion string
}

// Target is the decision the command names: "<phase>:<ID>" or "<ID>".
func (c Command) Target() string {
	if c.Phase != "" {
		return c.Phase + ":" + c.ID
	}
	return c.ID
}

// String is the command in its normal form (`/resolve requirements:D-001
// approve`, `/decisions`, `/phasegate help`), without rationale; for
// Invalid and Unknown it is "".
func (c Command) String() string {
	switch c.Kind {
	case Resolve:
		return "/resolve " + c.Target() + " " + c.Option
	case Decisions:
		return "/decisions"
	case Help:
		return "/phasegate help"
	}
	return ""
}

// Result is everything Parse found in a comment body.
type Result struct {
	// Commands in the order of their lines; at most MaxCommands.
	Commands []Command
	// Truncated is set when the body holds more than MaxCommands commands:
	// the ones after the first MaxCommands were not read.
	Truncated bool
	// TooDeep is set when the body nests block quotes and list items more
	// than MaxDepth deep: no command was read.
	TooDeep bool
	// LongLines counts lines that start with a phasegate command word (or
	// one close to it) but are longer than MaxLineLen bytes, and were
	// skipped.
	LongLines int
	// TooLong is set when the body is longer than MaxBody bytes: nothing
	// was read.
	TooLong bool
	// TooComplex is set when the body holds a command but its paragraphs
	// are too long to render safely (see the package documentation):
	// nothing was read.
	TooComplex bool
}

// Parse returns the commands of a comment body (see the package
// documentation for the grammar). It never fails and never panics.
func Parse(body string) []Command {
	return ParseAll(body).Commands
}

// ParseAll is Parse with what was left out.
func ParseAll(body string) Result {
	if len(body) > MaxBody {
		return Result{TooLong: true}
	}
	res := scan(body, nil)
	if res.TooDeep {
		res.Commands = nil
		return res
	}
	if len(res.Commands) == 0 {
		return res
	}
	visible, ok := visibleLines(body)
	if !ok {
		return Result{TooComplex: true}
	}
	return scan(body, visible)
}

// scan reads the commands of body with the line scanner alone; when
// visible is not nil, a line that is not in it is no command.
func scan(body string, visible map[int]bool) Result {
	var res Result
	p := parser{sc: newScanner(MaxDepth), collect: -1, res: &res, visible: visible}
	forEachLine(body, p.line)
	p.endRationale()
	return res
}

type parser struct {
	sc       *mdScanner
	visible  map[int]bool // lines whose command a reader sees, or nil: all
	comments htmlComments
	para     int // the paragraph the previous line was in, or 0
	res      *Result

	// the /resolve whose rationale is being read
	collect     int // index in res.Commands, or -1
	collectPara int
	rationale   strings.Builder
	ratLen      int
	ratCut      bool
}

// line reads one line; it returns false when reading must stop.
func (p *parser) line(n int, ln string) bool {
	info := p.sc.line(ln)
	if p.sc.tooDeep {
		p.res.TooDeep = true
		return false
	}
	if info.class != lineParagraph || info.para != p.para {
		if p.para != 0 && !p.comments.raw {
			p.comments.open = false // a comment cannot outlive its paragraph
		}
		p.para = 0
		if info.class == lineParagraph {
			p.para = info.para
		}
	}
	hidden := p.comments.open
	switch info.class {
	case lineParagraph:
		if !p.paragraphLine(n, ln, info, hidden) {
			return false
		}
	case lineHTML:
		p.endRationale()
		if _, p.comments.open = visibleText(ln[info.text:], hidden, false); p.comments.open {
			p.comments.raw = true
		}
	case lineOther:
		p.endRationale()
		if hidden && p.comments.raw {
			_, p.comments.open = visibleText(ln, true, false)
		}
	default:
		p.endRationale()
	}
	if !p.comments.open {
		p.comments.raw = false
	}
	return true
}

func (p *parser) paragraphLine(n int, ln string, info lineInfo, hidden bool) bool {
	text := ln[info.text:]
	verdict := notSlash
	if !hidden && commandIndent(ln) == info.text {
		verdict = classify(text)
	}
	rationale := verdict == notSlash && p.collect >= 0 && info.para == p.collectPara && len(ln) <= MaxLineLen
	// The text is kept only when it is read (vis is not read otherwise).
	var vis string
	vis, p.comments.open = visibleText(text, hidden, verdict == slashOurs && len(ln) <= MaxLineLen || rationale && !p.ratCut)

	var cmd Command
	if verdict == slashOurs && p.visible != nil && !p.visible[n] {
		verdict = slashOther // a reader does not see it: ignored, as another bot's command
	}
	if verdict == slashOurs {
		if len(ln) > MaxLineLen {
			p.res.LongLines++
			verdict = slashOther
		} else {
			cmd, verdict = parseLine(vis, text)
		}
	}
	if p.collect >= 0 {
		if rationale {
			p.addRationale(vis)
			return true
		}
		p.endRationale()
	}
	if verdict != slashOurs {
		return true
	}
	if len(p.res.Commands) == MaxCommands {
		p.res.Truncated = true
		return false
	}
	cmd.Line, cmd.Raw = n, ln
	p.res.Commands = append(p.res.Commands, cmd)
	if cmd.Kind == Resolve {
		p.collect, p.collectPara = len(p.res.Commands)-1, info.para
		p.rationale.Reset()
		p.ratLen, p.ratCut = 0, false
		p.addRationale(cmd.Rationale)
	}
	return true
}

// classify says whether text starts with a slash word, and whether that is
// phasegate's (a command word or one close to it). It reads the raw text
// and does not allocate: a line that is not phasegate's costs nothing
// more. A comment inside the word makes it no word at all ('<' is not a
// word character), so the visible text of a phasegate line starts with
// the same word.
func classify(text string) verdict {
	var buf [MaxToken]byte
	n, ok := slashWord(text, &buf)
	if !ok {
		return notSlash
	}
	w := buf[:n]
	if string(w) == "resolve" || string(w) == "decisions" || string(w) == "phasegate" {
		return slashOurs
	}
	if n > len("phasegate")+2 { // too far from all three
		return slashOther
	}
	if _, ok := Suggest(string(w), verbs); ok && !otherBots[string(w)] {
		return slashOurs
	}
	return slashOther
}

// slashWord reads the slash word that starts text, lower-cased, into buf:
// what parseLine reads as the command word (see nextToken and
// trimVerbPunct), without allocating.
func slashWord(text string, buf *[MaxToken]byte) (int, bool) {
	if text == "" || text[0] != '/' {
		return 0, false
	}
	n, tail := 0, false // tail: in the ':' and ',' after the word
	for i := 1; i < len(text); {
		c := text[i]
		if c >= utf8.RuneSelf { // (a lone byte 0x80, taken for ASCII or decoded, is no word character)
			r, size := utf8.DecodeRuneInString(text[i:])
			i += size
			switch {
			case isSeparator(r):
				return n, n > 0
			case isInvisible(r):
				continue
			}
			return 0, false
		}
		i++
		switch {
		case c == ' ' || c == '\t':
			return n, n > 0
		case c == ':' || c == ',':
			tail = true
		case tail || n == len(buf):
			return 0, false
		case isASCIILetter(c) || n > 0 && (isDigit(c) || c == '-' || c == '_'):
			if c >= 'A' && c <= 'Z' { // (no command word has a z: a 'Z' left as it is changes no distance)
				c += 'a' - 'A'
			}
			buf[n] = c
			n++
		default:
			return 0, false
		}
	}
	return n, n > 0
}

// commandIndent returns the offset of the first character of ln after at
// most three columns of spaces and tabs, or -1 when ln is indented more.
func commandIndent(ln string) int {
	col := 0
	for i := 0; i < len(ln); i++ {
		switch ln[i] {
		case ' ':
			col++
		case '\t':
			return -1 // a tab after at most three columns reaches column 4
		default:
			return i
		}
		if col > 3 {
			return -1
		}
	}
	return -1
}

func (p *parser) addRationale(s string) {
	if p.ratCut {
		return
	}
	s = trimText(s)
	if s == "" {
		return
	}
	if p.ratLen > 0 {
		// No room for a line break and a character. (Without this, the line
		// break would be written and then trimmed by endRationale: the
		// check only spares writing it.)
		if p.ratLen+2 > MaxRationale {
			p.ratCut = true
			return
		}
		p.rationale.WriteByte('\n')
		p.ratLen++
	}
	n, cut := appendRationale(&p.rationale, s, MaxRationale-p.ratLen)
	p.ratLen += n
	p.ratCut = cut
}

func (p *parser) endRationale() {
	if p.collect < 0 {
		return
	}
	c := &p.res.Commands[p.collect]
	c.Rationale = trimText(p.rationale.String()) // a cut may end in a space
	c.RationaleTruncated = p.ratCut
	p.collect = -1
}

type verdict uint8

const (
	notSlash   verdict = iota // the line does not start with a slash word
	slashOther                // a slash word that is not phasegate's: ignored
	slashOurs                 // a phasegate command, valid or not
)

// otherBots are slash words Parse never answers even when they are close
// to one of phasegate's: other bots' commands (Prow, GitHub apps, AI
// reviewers; `/remove` is within two edits of `/resolve`) and ordinary
// words as close (`/reserve`, `/revolve`).
var otherBots = map[string]bool{
	"approve": true, "lgtm": true, "hold": true, "unhold": true, "assign": true, "unassign": true,
	"cc": true, "uncc": true, "retest": true, "test": true, "ok-to-test": true, "kind": true,
	"area": true, "priority": true, "sig": true, "triage": true, "lifecycle": true, "close": true,
	"reopen": true, "label": true, "remove": true, "milestone": true, "help": true, "meow": true,
	"woof": true, "bark": true, "joke": true, "shrug": true, "retitle": true, "cherrypick": true,
	"cherry-pick": true, "override": true, "skip": true, "rebase": true, "merge": true,
	"transfer": true, "transfer-issue": true, "release-note": true, "release": true,
	"good-first-issue": true, "honk": true, "pony": true, "retry": true, "rerun": true,
	"deploy": true, "review": true, "describe": true, "improve": true, "ask": true,
	"reserve": true, "revolve": true,
}

var verbs = []string{"resolve", "decisions", "phasegate"}

// trimVerbPunct removes a ':' or ',' that ends a command word.
func trimVerbPunct(s string) string { return strings.TrimRight(s, ":,") }

// word reports whether s is 1 to MaxToken bytes, an ASCII letter or digit
// and then letters, digits and bytes of punct.
func word(s, punct string) bool {
	if s == "" || len(s) > MaxToken || !(isASCIILetter(s[0]) || isDigit(s[0])) {
		return false
	}
	for i := 1; i < len(s); i++ {
		if c := s[i]; !isASCIILetter(c) && !isDigit(c) && strings.IndexByte(punct, c) < 0 {
			return false
		}
	}
	return true
}

// parseLine reads the visible text s of a line that starts with "/"; line
// is its text as written.
func parseLine(s, line string) (Command, verdict) {
	tok, rest := nextToken(s)
	tok = trimVerbPunct(tok) // `/resolve: D-001 approve`
	// parseLine reads only a line that classify found to start with a
	// phasegate slash word (slashWord checked its characters, at most
	// MaxToken): this guard only keeps tok[1:] in range.
	if len(tok) < 2 || tok[0] != '/' {
		return Command{}, notSlash
	}
	word := strings.ToLower(tok[1:])
	switch word {
	case "resolve", "decisions", "phasegate":
		// Checked on the line as written, HTML comments and all: a
		// command is refused rather than read from text that differs
		// from what a reader sees.
		if why := hiddenProblem(line); why != "" {
			return invalid(why), slashOurs
		}
	}
	switch word {
	case "resolve":
		return parseResolve(rest), slashOurs
	case "decisions":
		return Command{Kind: Decisions}, slashOurs // words after it are ignored
	case "phasegate":
		return parsePhasegate(rest), slashOurs
	}
	if otherBots[word] {
		return Command{}, slashOther
	}
	if v, ok := Suggest(word, verbs); ok {
		sugg := "/" + v
		if v == "phasegate" {
			sugg = "/phasegate help"
		}
		return Command{
			Kind:       Unknown,
			Reason:     "`/" + tok[1:] + "` is not a phasegate command; did you mean `" + sugg + "`?",
			Suggestion: sugg,
		}, slashOurs
	}
	return Command{}, slashOther
}

func parsePhasegate(rest string) Command {
	sub, _ := nextToken(rest)
	switch strings.ToLower(sub) {
	case "", "help":
		return Command{Kind: Help} // words after it are ignored
	case "resolve":
		return unknown("`/phasegate resolve` is not a command: write `/resolve D-001 approve`", "/resolve")
	case "decisions":
		return unknown("`/phasegate decisions` is not a command: write `/decisions`", "/decisions")
	}
	if v, ok := Suggest(sub, []string{"help", "resolve", "decisions"}); ok {
		sugg := map[string]string{"help": "/phasegate help", "resolve": "/resolve", "decisions": "/decisions"}[v]
		return unknown(quote(sub, "that word")+" is not a `/phasegate` subcommand; did you mean `"+sugg+"`?", sugg)
	}
	return unknown(quote(sub, "that word")+" is not a `/phasegate` subcommand; the commands are `/resolve <ID> <option>`, `/decisions` and `/phasegate help`", "/phasegate help")
}

func parseResolve(rest string) Command {
	t1, rest := nextToken(rest)
	t2, rest := nextToken(rest)
	if t1 == "" {
		return invalid("`/resolve` needs a decision ID and an option, e.g. `/resolve D-001 approve`")
	}
	phase, id, why := parseTarget(t1, t2)
	if why != "" {
		return invalid(why)
	}
	target := id
	if phase != "" {
		target = phase + ":" + id
	}
	if t2 == "" {
		return invalid("`/resolve " + target + "` needs an option after the decision ID, e.g. `/resolve " + target +
			" approve`, or `/resolve " + target + " recommended` for the recommended option")
	}
	opt := strings.TrimRight(t2, ".,;:!?")
	if !isName(opt) {
		return invalid(quote(t2, "the word after the decision ID") + " cannot be an option: an option is one word of letters, digits, `-`, `_` or `.` (e.g. `approve`, `request-changes`); write `/resolve " +
			target + " <option> [rationale]`")
	}
	return Command{
		Kind:        Resolve,
		Phase:       phase,
		ID:          id,
		Option:      opt,
		Recommended: strings.EqualFold(opt, RecommendedWord),
		Rationale:   rest,
	}
}

// parseTarget reads `<ID>` or `<phase>:<ID>`; t2 is the word after it.
func parseTarget(t1, t2 string) (phase, id, why string) {
	t := strings.TrimRight(t1, ",;")
	switch strings.Count(t, ":") {
	case 0:
		if !IsID(t) {
			return "", "", notAnID(t, t2)
		}
		return "", strings.ToUpper(t), ""
	case 1:
		phase, id, _ = strings.Cut(t, ":")
		if id == "" {
			if IsID(phase) { // `/resolve D-001: approve`
				return "", strings.ToUpper(phase), ""
			}
			if phase == "" {
				return "", "", "`/resolve` needs a decision ID and an option, e.g. `/resolve D-001 approve`"
			}
			return "", "", quote(t, "the phase") + " has no decision ID after the `:`; write the phase and the ID together, e.g. `/resolve requirements:D-001 approve`"
		}
		if phase == "" {
			return "", "", "the phase before `:` is empty; write `/resolve <phase>:<ID> <option>`, e.g. `/resolve requirements:D-001 approve`, or leave out the `:`"
		}
		if !isName(phase) {
			return "", "", quote(phase, "the phase") + " is not a phase name: a phase is one word of letters, digits, `-`, `_` or `.`, e.g. `/resolve requirements:D-001 approve`"
		}
		if !IsID(id) {
			return "", "", notAnID(id, t2)
		}
		return strings.ToLower(phase), strings.ToUpper(id), ""
	}
	return "", "", quote(t, "the decision") + " has more than one `:`; write `<phase>:<ID>`, e.g. `/resolve requirements:D-001 approve`"
}

func notAnID(tok, next string) string {
	if n := strings.TrimRight(next, ",;:"); IsID(n) {
		opt := strings.TrimRight(tok, ".,;:!?")
		if !isName(opt) {
			opt = "approve"
		}
		return quote(tok, "the first word") + " is not a decision ID: the ID comes first, e.g. `/resolve " +
			strings.ToUpper(n) + " " + opt + "`"
	}
	return quote(tok, "the first word after `/resolve`") + " is not a decision ID: decision IDs look like `D-001`, e.g. `/resolve D-001 approve`"
}

// IsID reports whether s has the form of a decision ID: a letter, then
// letters and digits, then one or more groups of '-' and letters or digits,
// the last group all digits (`D-001`, `QA-D-002`, `decision-7`); at most
// MaxToken bytes. Case does not matter.
func IsID(s string) bool {
	if s == "" || len(s) > MaxToken || !isASCIILetter(s[0]) {
		return false
	}
	digits := false // after a '-', whether the group since the last one is all digits
	for i := 1; i < len(s); i++ {
		switch c := s[i]; {
		case c == '-':
			if s[i-1] == '-' || i == len(s)-1 {
				return false
			}
			digits = true
		case isDigit(c):
		case isASCIILetter(c):
			digits = false
		default:
			return false
		}
	}
	return digits // set only after a '-': there is a group after the first
}

// isName: an ASCII letter or digit, then letters, digits, '.', '_' and
// '-'; at most MaxToken bytes. Options and phases are names; every option
// for which the outcome comment shows a command (outcome.Token) is one.
func isName(s string) bool { return word(s, "._-") }

// safeWord reports whether s can be quoted in a code span of a reply: 1 to
// 64 ASCII letters, digits, '.', '_', ':' or '-', starting with a letter or
// digit. Such text cannot mention, reference, link, or end the code span.
func safeWord(s string) bool { return word(s, "._:-") }

// quote is s in a code span when it is a safeWord, else fallback.
func quote(s, fallback string) string {
	if safeWord(s) {
		return "`" + s + "`"
	}
	return fallback
}

func invalid(reason string) Command { return Command{Kind: Invalid, Reason: reason} }

func unknown(reason, suggestion string) Command {
	return Command{Kind: Unknown, Reason: reason, Suggestion: suggestion}
}
