// Package command reads phasegate's slash commands from the body of an
// issue comment: `/resolve`, `/decisions` and `/phasegate
// help`.
//
// It is pure: no I/O, no GitHub, no printing, no clock. A comment body is
// untrusted: Parse takes any string and never panics; a body with no
// phasegate command line costs time linear in the body and no allocation
// that grows with it, and a body with one is also rendered (see below),
// in bounded work. Errors are data: a command that is written wrong comes
// back as a Command of kind Invalid or Unknown, with a reason that can be
// posted as it is.
//
// A command counts only if a person reading the comment as GitHub renders
// it can see it.
//
// # Which lines are read
//
// The body is split into lines at LF, CR LF and CR; a byte order mark at
// its start is dropped; lines are numbered from 1. A line is a command line
// when all of these hold:
//
//  1. Markdown (CommonMark, as GitHub's cmark-gfm reads it) makes the line
//     paragraph text: the first line of a paragraph, a continuation line,
//     or a lazy continuation line. So a line is never a command when it is
//     inside fenced code (``` or ~~~, three or more, indented up to three
//     spaces; the fence closes only with a line of at least as many of the
//     same character and nothing else; an unclosed fence runs to the end;
//     fences inside list items and block quotes count), inside indented
//     code, inside an HTML block (any of CommonMark's seven kinds: an HTML
//     comment block, <script>/<pre>/<style>/<textarea>, <details> or
//     <div> … up to a blank line, …), in a block quote (its text follows a
//     ">"), on a list item's marker line, or is an ATX heading.
//  2. After at most three columns of spaces and tabs, it starts with "/".
//     Nothing else may come before the "/", not even a zero-width or
//     no-break space: outcome.Inline puts a zero-width space before any
//     "/" that starts a line of agent text precisely so that such text can
//     never read as a command. A line indented four columns or more is
//     never a command.
//  3. Its start is not inside an HTML comment (see below).
//  4. It is at most MaxLineLen bytes long.
//  5. Rendered as GitHub renders the comment (goldmark with the GFM and
//     footnote extensions, then the HTML read as a browser tokenizes it),
//     its "/" starts text of a paragraph itself, or of a setext heading, a
//     reader sees. So a line is never a command when its start is inside
//     a link's text, destination or title, an image's alt text, a code
//     span, emphasis or strikethrough, inline raw HTML (a multi-line
//     title= or alt= attribute, a comment), a link reference definition, a
//     footnote definition (referenced or not: GitHub drops an unreferenced
//     one, and shows a referenced one apart, at the end), or a table; nor
//     when the browser would take it into an attribute or a comment left
//     open by raw HTML, or into a <details> element (open or collapsed:
//     its content shows only once opened), <template>, <sub>, <sup>
//     (nested a few deep they are too small to read), <del>, <s>,
//     <strike> (a struck-out command is withdrawn), media and object
//     fallback content, or a raw-text element such as <script> or
//     <textarea>. A command's words are read from the line as written,
//     so any markup among them makes it Invalid.
//
// HTML comments are invisible on GitHub, so what they hide is not read:
// text from "<!--" to the next "-->" within a paragraph (CommonMark raw
// HTML; "<!-->" and "<!--->" are comments), and, when a raw HTML block
// leaves a comment open, everything after it up to the next "-->" of raw
// HTML (a browser hides all of that; GitHub escapes the "-->" of paragraph
// text, which therefore closes nothing). A "<!--" inside a code span, or one that a
// paragraph never closes, hides the rest of that paragraph all the same:
// where the parser must guess, it guesses "hidden", so a command may be
// missed but never read from text nobody sees. The text of a command line
// is what remains once comments are removed ("/resolve D-001
// app<!-- -->rove" reads as a reader sees it: approve).
//
// # Words
//
// Words are separated by runs of spaces, tabs, other Unicode space
// separators (NO-BREAK SPACE, the en, em and ideographic spaces, …) and
// LINE/PARAGRAPH SEPARATOR.
//
// # Invisible characters
//
// A command is what it looks like. A /resolve, /decisions or /phasegate
// line is Invalid, with a reason that names the character by its code
// point and asks for the command to be retyped, when anywhere on it (the
// command words, the rationale after them, even an HTML comment) there is
//
//   - a control character other than TAB;
//   - a format character (Unicode category Cf): the direction marks,
//     embeddings, overrides and isolates (U+061C, U+200E, U+200F,
//     U+202A–U+202E, U+2066–U+2069), the zero-width space, non-joiner and
//     joiner, the word joiner and invisible operators, the soft hyphen, the
//     byte order mark, U+180E, the interlinear annotation characters, tags
//     (U+E0000–U+E007F), …;
//   - the combining grapheme joiner, the Hangul and Khmer fillers, or a
//     variation selector (U+FE00–U+FE0F, U+E0100–U+E01EF);
//   - or a character reference (&#x202E;, &#8238;, &rlm;, &zwj;) for any
//     of these, which GitHub renders as the character itself. References
//     are decoded as CommonMark does wherever they are on the line: one in
//     a code span, or after a backslash, shows as written, and is refused
//     all the same.
//
// Such a character is never dropped to read the command: `/resolve D-`
// U+202E `100` U+202C ` approve` shows as /resolve D-001 approve, and
// names D-100. It is refused anywhere on the line, the rationale after the
// command words included: a reader takes in the line as one, and cannot
// see where the parser's words end (it drops punctuation after the ID and
// the option, and any space character separates words); a direction
// control right after the words lays out the text shown next to them; and
// the rationale is recorded and passed on as written, where tag
// characters could carry text no reviewer saw. No one types these
// characters by hand.
//
// Two exceptions are part of how visible text is drawn, and can neither
// hide nor reorder it: a zero-width joiner or non-joiner between two
// visible characters that are not ASCII (emoji sequences such as 👩‍💻,
// Persian and Indic words), and a variation selector after such a character
// (❤️, a CJK variant) or before U+20E3 (the keycap 1️⃣). Written as a
// character reference, neither is allowed. Command words are ASCII, so
// both can only be in the rationale; right-to-left letters, emoji and any
// other visible text may be there as they are.
//
// An invisible character before the "/" makes the line no command at all
// (rule 2 above). A line of the rationale after the command line is not a
// command line: control and direction characters are removed from it (see
// Rationale).
//
// # Grammar
//
// The command word is case-insensitive; it may be followed by ':' or ','.
//
//	/resolve TARGET OPTION [RATIONALE]
//	/decisions [ignored…]
//	/phasegate [help [ignored…]]
//
//	TARGET = [PHASE ":"] ID         a ',' or ';' after it is dropped, and a
//	                                ':' after an ID without a phase
//	ID     = letter (letter | digit)* ("-" (letter | digit)+)* "-" digit+
//	                                at most 64 bytes; upper-cased: d-001 → D-001
//	PHASE  = (letter | digit) (letter | digit | "." | "_" | "-")*
//	                                at most 64 bytes; lower-cased
//	OPTION = (letter | digit) (letter | digit | "." | "_" | "-")*
//	                                at most 64 bytes, after dropping any of
//	                                . , ; : ! ? that end the word; kept as
//	                                written; the word `recommended` (any
//	                                case) sets Recommended
//
// Letters and digits are ASCII: every ID and option for which the outcome
// comment shows a command to copy has this form (outcome.Token), and
// nothing that renders differently from how it is written (Markdown
// emphasis, escapes, entities, look-alike letters) can be read as one.
//
// A `/resolve`, `/decisions` or `/phasegate` line that does not fit the
// grammar is Invalid: no ID, no option, an ID that is not one (or an
// option written before the ID), an empty phase before ':', more than one
// ':', a phase or option of other characters, a control or invisible
// character (see above).
// `/phasegate` followed by a word other than help is Unknown.
//
// A slash word close to a command word — Damerau–Levenshtein distance at
// most 2, see Suggest — is Unknown, with the command meant in Suggestion
// (`/reslove`, `/resolv` → /resolve; `/decision` → /decisions; `/phasegat`
// → /phasegate help). Every other slash word is ignored silently: other
// bots' commands (`/lgtm`, `/assign`, `/approve`, `/hold`, …, also when
// they are close to a phasegate word), paths, and anything else.
//
// # Rationale
//
// The rationale of a /resolve is the rest of its line after the option,
// then the following lines of the same Markdown paragraph, each trimmed,
// joined with "\n". It ends before the first line that starts with a slash
// word (another command, phasegate's or another bot's), and with the
// paragraph: at a blank line, a fence, a block quote, a list item, a
// heading, an HTML block or a setext underline. HTML comments are left out;
// control and direction-changing characters are removed, tabs become
// spaces, invalid UTF-8 becomes U+FFFD; it is cut at MaxRationale
// characters. (The outcome comment tells people that "your reasons may
// follow the option"; a paragraph is what they see as one block of text.)
//
// # Limits
//
// At most MaxCommands commands are read (Result.Truncated); a line longer
// than MaxLineLen bytes is never a command (Result.LongLines). A body
// yields no command at all when it is longer than MaxBody bytes
// (Result.TooLong: GitHub stores at most 65,536 characters), when its
// Markdown nests more than MaxDepth block quotes and list items deep
// (Result.TooDeep), or when it holds a command line but its paragraphs are
// too full of inline Markdown to render in bounded time
// (Result.TooComplex: goldmark's time on some inline Markdown grows with
// the length of the paragraph times its openers, so the lengths of the
// paragraphs times their counts of brackets, parentheses, emphasis and
// code marks, quotes, '<', '>', '&', '!' and '\\' may sum to at most 2^28:
// a paragraph of 16 KiB of brackets, or 64 KiB of prose with one such
// character in sixteen). Suggest compares at most 64 characters.
package command
