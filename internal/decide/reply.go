package decide

import (
	"cmp"
	"fmt"
	"strings"

	"github.com/phasegate/phasegate/internal/ledger"
	"github.com/phasegate/phasegate/internal/outcome"
)

const helpText = "**phasegate commands** (one per line, outside code blocks and quotes):\n\n" +
	"- `/resolve D-001 approve [rationale]`: choose an option of a pending decision\n" +
	"- `/resolve D-002 recommended`: take the decision's recommended option\n" +
	"- `/resolve requirements:D-001 approve`: pick the outcome of that phase when IDs repeat\n" +
	"- `/decisions`: list what is pending on this issue\n" +
	"- `/phasegate help`: this help\n\n" +
	"Resolutions are final: to revisit one, post a new Phase Outcome."

// Bounds of a reply: GitHub refuses a comment over 65,536 characters, and
// a reply that cannot be posted would be retried by every reconcile pass.
const (
	maxReplyLine  = 8000
	maxReplyChars = 60000
	maxListed     = 50
)

// replyText joins a reply's lines: each line mentions only the commenter
// (or is phasegate's own text) and never echoes their words unescaped. A
// line over maxReplyLine characters is cut, and lines past maxReplyChars
// are left out with a note saying how many.
func replyText(lines []string) string {
	var b strings.Builder
	for i, l := range lines {
		if r := []rune(l); len(r) > maxReplyLine {
			l = string(r[:maxReplyLine]) + "…"
		}
		if b.Len()+len(l) > maxReplyChars {
			fmt.Fprintf(&b, "…and %d more answers left out: write fewer commands in one comment.\n\n", len(lines)-i)
			break
		}
		b.WriteString(l)
		b.WriteString("\n\n")
	}
	return b.String()
}

// mention is @login for the commenter; a login that is not a valid GitHub
// login is shown escaped, without a mention.
func mention(login string) string {
	if outcome.Login(login) {
		return "@" + login
	}
	return outcome.Inline(login)
}

// safeToken shows a user-typed token inside a code span: only the
// characters of an ID or option survive, at most 64.
func safeToken(s string) string {
	out := strings.Map(func(r rune) rune {
		if tokenRune(r) {
			return r
		}
		return -1
	}, s)
	return cmp.Or(out[:min(len(out), 64)], "?")
}

// tokenRune reports whether r may stand in an ID or option: an ASCII
// letter or digit, '-', '_', '.' or ':'.
func tokenRune(r rune) bool {
	return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_.:", r)
}

func optionList(options []string) string {
	q := make([]string, len(options))
	for i, o := range options {
		q[i] = "`" + outcome.Inline(o) + "`"
	}
	return strings.Join(q, ", ")
}

func pendingSummary(st *ledger.State) string {
	var ids []string
	for _, o := range st.LatestPerPhase() {
		for _, d := range o.Decisions {
			if d.Resolution == nil {
				ids = append(ids, "`"+outcome.Inline(d.ID)+"`")
			}
		}
	}
	if len(ids) == 0 {
		return "Nothing is pending here."
	}
	return "Pending: " + strings.Join(ids, ", ") + " (`/decisions` lists them)."
}

// listPending answers /decisions: a table of unresolved decisions with the
// command to type.
func listPending(t *thread) string {
	var b strings.Builder
	b.WriteString("**Pending decisions**\n\n| decision | phase | question | options | blocking |\n| --- | --- | --- | --- | --- |\n")
	n := 0
	for _, o := range t.st.LatestPerPhase() {
		for _, d := range o.Decisions {
			if d.Resolution != nil {
				continue
			}
			n++
			if n > maxListed {
				continue
			}
			blocking := "no"
			if d.Blocking {
				blocking = "yes"
			}
			fmt.Fprintf(&b, "| `%s` | %s | %s | %s | %s |\n", outcome.Inline(d.ID), outcome.Inline(o.Outcome.Phase), outcome.Inline(d.Question), optionList(d.Options), blocking)
		}
	}
	if n == 0 {
		return "Nothing is pending on this issue."
	}
	if n > maxListed {
		fmt.Fprintf(&b, "\n…and %d more.\n", n-maxListed)
	}
	return b.String()
}
