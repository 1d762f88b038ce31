package outcome

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/phasegate/phasegate/internal/artifact"
	"github.com/phasegate/phasegate/internal/command"
)

// Meta is where an outcome comes from and how its comment is signed.
type Meta struct {
	// Source is the outcome file's path relative to the repository root,
	// with '/' separators.
	Source string
	// Commit is the commit that added the file (7 to 64 lower-case hex).
	Commit string
	// PR is the pull request of the run; 0 when there is none.
	PR int
	// Key is the signing key (PHASEGATE_SIGNING_KEY); empty for none, and
	// then the marker's sig is "-".
	Key []byte
	// Actors are the accounts GitHub attested as having pushed or authored
	// the change (at most 10): they may not resolve its decisions.
	Actors []string
	// Prev is the id of the newest phasegate comment on the thread; 0 for
	// none.
	Prev int64
}

// MaxCommentLength is the longest comment body GitHub accepts, in
// characters.
const MaxCommentLength = 65536

// ErrTooLong is the error of a comment longer than MaxCommentLength.
var ErrTooLong = errors.New("comment is longer than GitHub's 65536 characters")

// Headers that every version 1 comment of a kind starts with. They are part
// of the rendering that Verify* reproduce, and they let a verifier tell an
// edited phasegate comment (tampered) from someone else's (not phasegate)
// even when the edit broke the marker.
const (
	outcomeHeader    = "### Phase Outcome: "
	resolutionHeader = "Resolved: **"
)

// Render renders an outcome's issue comment (docs/contracts/outcome.md): a
// readable summary of the outcome, its canonical YAML in a collapsed fenced
// block, and the marker as the last line. canonical must be Canonical of the value
// o was parsed from (Render checks: the comment's summary and YAML can never
// disagree). Every agent-written string in the summary goes through Inline.
//
// The output is final: it has no trailing white space on any line and no
// line break after the marker, so it is its own normal form (Normalize) and
// VerifyOutcomeComment reproduces it byte for byte. The layout is frozen
// for marker version 1: changing it means a new version, with the old
// renderer kept for verification.
func Render(o *Outcome, canonical []byte, m Meta) (string, error) {
	if o == nil {
		return "", errors.New("render outcome: no outcome")
	}
	_, parsed, err := decodeCanonical(canonical)
	if err != nil {
		return "", fmt.Errorf("render outcome: %w", err)
	}
	if !reflect.DeepEqual(parsed, o) {
		return "", errors.New("render outcome: the outcome is not the one its canonical YAML holds")
	}
	if err := checkSourcePath(m.Source); err != nil {
		return "", fmt.Errorf("render outcome: %w", err)
	}
	if !isCommit(m.Commit) {
		return "", errors.New("render outcome: commit is not 7 to 64 lower-case hex digits")
	}
	if m.PR < 0 {
		return "", errors.New("render outcome: pull request number is negative")
	}
	mk := Marker{Kind: KindOutcome, Version: Version, ID: ID(canonical), Source: m.Source, Commit: m.Commit, PR: m.PR,
		Actors: strings.Join(m.Actors, ","), Resolution: Resolution{Prev: m.Prev}}
	if err := mk.validate(); err != nil {
		return "", fmt.Errorf("render outcome: %w", err)
	}
	above := renderOutcomeAbove(o, canonical, mk)
	mk.Sig = sign(m.Key, mk, above)
	body := above + mk.String()
	if utf8.RuneCountInString(body) > MaxCommentLength {
		return "", fmt.Errorf("render outcome: %w", ErrTooLong)
	}
	return body, nil
}

// decodeCanonical decodes canonical YAML and checks that it is canonical
// and a usable outcome.
func decodeCanonical(canonical []byte) (any, *Outcome, error) {
	doc := artifact.Decode("outcome.yaml", nil, canonical, artifact.DefaultLimits)
	if !doc.Decoded {
		msg := "it does not decode"
		if len(doc.Problems) > 0 {
			msg = doc.Problems[0].Message
		}
		return nil, nil, fmt.Errorf("canonical yaml: %s", msg)
	}
	again, err := Canonical(doc.Value)
	if err != nil {
		return nil, nil, err
	}
	if !bytes.Equal(again, canonical) {
		return nil, nil, errors.New("canonical yaml: the YAML is not in canonical form")
	}
	o, err := Parse(doc.Value)
	if err != nil {
		return nil, nil, fmt.Errorf("canonical yaml: %w", err)
	}
	return doc.Value, o, nil
}

// renderOutcomeAbove renders everything of an outcome comment above the
// marker line, including the blank line before it: the summary (header,
// produced artifacts, findings, pending decisions) and the outcome's YAML.
func renderOutcomeAbove(o *Outcome, canonical []byte, mk Marker) string {
	var b strings.Builder
	b.Grow(2*len(canonical) + 1024)
	writeOutcomeHeader(&b, o, mk)
	writeSections(&b, o)

	// The fence is longer than any run of backticks in the YAML, so no line
	// of it can close the block (canonical YAML has no line that starts
	// with a backtick anyway: such strings are quoted).
	fence := strings.Repeat("`", max(3, longestRun(canonical, '`')+1))
	return trimLines(b.String()) + "<details>\n<summary>Phase Outcome YAML · id " + ShortSHA(mk.ID) + "</summary>\n\n" +
		fence + "yaml\n" + string(canonical) + fence + "\n\n</details>\n\n"
}

// writeOutcomeHeader writes the title (phase and feature), the source
// commit and pull request, and who pushed or authored it.
func writeOutcomeHeader(b *strings.Builder, o *Outcome, mk Marker) {
	b.WriteString(outcomeHeader + Inline(o.Phase))
	if o.Feature != "" {
		b.WriteString(" · " + Inline(o.Feature))
	}
	b.WriteString("\n\n")

	// The commit is written in full (as is every other marker field
	// somewhere in the body), so that without a signing key an edit of the
	// marker still shows as a difference from the rendering.
	b.WriteString("**Source:** " + Inline(mk.Source) + " at `" + mk.Commit + "`")
	if mk.PR > 0 {
		b.WriteString(" · **Pull request:** #" + strconv.Itoa(mk.PR))
	}
	b.WriteString("\n\n")
	if mk.Actors != "" {
		// Logins in code spans: named, not mentioned.
		b.WriteString("**Pushed or authored by:** `" + strings.Join(mk.ActorLogins(), "`, `") + "` (they cannot resolve its decisions)\n\n")
	}
}

// writeSections writes the tables of produced artifacts, findings and
// pending decisions, the last with the commands that resolve them.
func writeSections(b *strings.Builder, o *Outcome) {
	var produced, findings, decisions [][]string
	for _, p := range o.Produced {
		produced = append(produced, []string{Inline(p.Artifact), Inline(p.Location)})
	}
	table(b, "#### Produced", "_Nothing listed._", []string{"Artifact", "Location"}, produced)
	for _, f := range o.Findings {
		findings = append(findings, []string{Inline(f.Type), Inline(f.Title), category(f), Inline(f.Reasoning)})
	}
	table(b, "#### Findings", "_No findings._", []string{"Type", "Title", "Category", "Reasoning"}, findings)
	blocking := 0
	for _, d := range o.Decisions {
		question := Inline(d.Question)
		if d.Reasoning != "" {
			question += "<br>**Reasoning:** " + Inline(d.Reasoning)
		}
		block := "no"
		if d.Blocking {
			block = "**yes**"
			blocking++
		}
		decisions = append(decisions, []string{Inline(d.ID), Inline(d.Type), question, block, options(d), commands(d)})
	}
	table(b, fmt.Sprintf("#### Pending decisions: %d (%d blocking)", len(o.Decisions), blocking), "_No decisions to make._",
		[]string{"ID", "Type", "Question", "Blocking", "Options", "Command to resolve"}, decisions)
	if len(decisions) > 0 {
		b.WriteString("To decide, comment a command on this issue, one per line; your reasons may follow the option. " +
			"`/resolve <id> recommended` takes the recommended option. The first valid resolution of a decision is final.\n\n")
	}
}

// table writes a section's heading, then empty when it has no rows, else
// the table of its rows of already escaped cells.
func table(b *strings.Builder, heading, empty string, columns []string, rows [][]string) {
	b.WriteString(heading + "\n\n")
	if len(rows) == 0 {
		b.WriteString(empty + "\n\n")
		return
	}
	row(b, columns...)
	b.WriteString("|" + strings.Repeat(" --- |", len(columns)) + "\n")
	for _, r := range rows {
		row(b, r...)
	}
	b.WriteString("\n")
}

// row writes one table row of already escaped cells.
func row(b *strings.Builder, cells ...string) {
	b.WriteString("|")
	for _, c := range cells {
		b.WriteString(" " + cmp.Or(c, "—") + " |")
	}
	b.WriteString("\n")
}

func category(f Finding) string {
	switch {
	case !f.Defaulted():
		return Inline(f.Category)
	case strings.TrimSpace(f.ProposedCategory) == "":
		return Inline(f.Category) + " (default: no category proposed)"
	default:
		return Inline(f.Category) + " (default; proposed: " + Inline(f.ProposedCategory) + ")"
	}
}

func options(d Decision) string {
	parts := make([]string, len(d.Options))
	for i, o := range d.Options {
		parts[i] = Inline(o)
		if o == d.Recommended {
			parts[i] += " (recommended)"
		}
	}
	s := strings.Join(parts, " · ")
	if _, ok := d.RecommendedOption(); d.Recommended != "" && !ok {
		s += "<br>recommended: " + Inline(d.Recommended) + " (not one of the options)"
	}
	return s
}

// commands is the cell with the exact command for each option. An id or
// option that cannot be typed (see Token), or an id the command parser would
// not read as one (command.IsID: `D_1`), gets none: it would not survive a
// code span or the command parser.
func commands(d Decision) string {
	if !Token(d.ID) || !command.IsID(d.ID) {
		return "none: this id cannot be typed in a command"
	}
	parts := make([]string, len(d.Options))
	for i, o := range d.Options {
		if !Token(o) {
			parts[i] = fmt.Sprintf("option %d cannot be typed in a command", i+1)
			continue
		}
		parts[i] = "`/resolve " + d.ID + " " + o + "`"
		if o == d.Recommended {
			parts[i] += " (recommended)"
		}
	}
	return strings.Join(parts, "<br>")
}

// ShortSHA is the first 12 characters of a commit's sha or a hex id: the one
// abbreviation phasegate's comments, summaries and messages use.
func ShortSHA(h string) string {
	if len(h) > 12 {
		return h[:12]
	}
	return h
}

// longestRun is the length of the longest run of c in data.
func longestRun(data []byte, c byte) int {
	best, cur := 0, 0
	for _, x := range data {
		if x == c {
			cur++
			best = max(best, cur)
		} else {
			cur = 0
		}
	}
	return best
}

// trimLines drops trailing spaces and tabs from every line.
func trimLines(s string) string {
	if !strings.Contains(s, " \n") && !strings.Contains(s, "\t\n") {
		return s
	}
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " \t")
	}
	return strings.Join(lines, "\n")
}

// Resolution is a decision's resolution, as its comment records it.
type Resolution struct {
	// Outcome is the ID of the resolved outcome.
	Outcome string
	// Decision is the decision's id, e.g. D-001.
	Decision string
	// Option is the chosen option, e.g. approve.
	Option string
	// By is the login of the person who resolved it; the comment mentions
	// them (the one intended @mention).
	By string
	// Command is the id of the comment holding the /resolve command.
	Command int64
	// Captured is the issue a capture-out-of-scope resolution opened; 0 for
	// none.
	Captured int
	// Auth is why By was allowed to resolve: their repository permission
	// at the time, or "listed" in the config's resolvers; "" when unknown.
	Auth string
	// Head is the commit the resolution was given on (the carrying pull
	// request's head, or the outcome's commit); "" when unknown.
	Head string
	// Prev is the id of the newest phasegate comment on the thread when the
	// resolution was posted; 0 for none.
	Prev int64
}

// RenderResolution renders a resolution comment (docs/contracts/outcome.md):
// the visible line "D-001 → approve, by @user" with a link to the command
// comment, "Captured as #N." when a capture opened an issue, and the marker
// as the last line. The link is the fragment #issuecomment-<id>, which GitHub's
// issue page resolves to the command comment on the same page, so the body
// depends on nothing but the marker's fields (and works on GitHub
// Enterprise). Decision, option and login must be within the marker
// grammar (Token, Login); key signs it when not empty.
func RenderResolution(r Resolution, key []byte) (string, error) {
	mk := Marker{Kind: KindResolution, Version: Version, Resolution: r}
	if r.Captured < 0 {
		return "", errors.New("render resolution: captured issue number is negative")
	}
	if err := mk.validate(); err != nil {
		return "", fmt.Errorf("render resolution: %w", err)
	}
	above := renderResolutionAbove(mk)
	mk.Sig = sign(key, mk, above)
	return above + mk.String(), nil
}

func renderResolutionAbove(mk Marker) string {
	var b strings.Builder
	// Decision, option and login are tokens of the marker grammar; Inline
	// still escapes them ("_"), and the login's "@" is written here, outside
	// Inline, because this mention is meant.
	fmt.Fprintf(&b, "%s%s → %s**, by @%s ([command](#issuecomment-%d)) · outcome `%s`\n\n",
		resolutionHeader, Inline(mk.Decision), Inline(mk.Option), Inline(mk.By), mk.Command, mk.Outcome)
	if mk.Head != "" {
		fmt.Fprintf(&b, "Given on %s.\n\n", mk.Head)
	}
	if mk.Captured > 0 {
		fmt.Fprintf(&b, "Captured as #%d.\n\n", mk.Captured)
	}
	return b.String()
}

// Reply is a reply of phasegate's to a command comment (a refusal, a list,
// help): free text above a reply marker naming the command comment, so that
// the command is not answered twice.
type Reply struct {
	// Command is the id of the comment the reply answers.
	Command int64
	// Prev is the newest phasegate comment on the thread; 0 for none.
	Prev int64
	// Signed reports, on a verified reply, whether its signature was checked.
	Signed bool
}

// RenderReply ends text (phasegate's own reply lines, already escaped) with
// a reply marker, signed when key is set.
func RenderReply(text string, r Reply, key []byte) (string, error) {
	mk := Marker{Kind: KindReply, Version: Version, Resolution: Resolution{Command: r.Command, Prev: r.Prev}}
	if err := mk.validate(); err != nil {
		return "", fmt.Errorf("render reply: %w", err)
	}
	above := Normalize(text) + "\n\n"
	mk.Sig = sign(key, mk, above)
	return above + mk.String(), nil
}
