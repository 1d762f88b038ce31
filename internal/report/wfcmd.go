package report

import (
	"bytes"
	"fmt"
	"io"
	"strings"
)

// Workflow commands from untrusted text. The GitHub Actions runner reads
// every line a step prints, on stdout and stderr, as a workflow command when
// it starts with "::" after leading white space (`::error file=a.yaml::m`)
// or holds "##[" anywhere (the older `##[error]m`), and the name is a
// command it knows. A file path at the start of a report line, or agent text
// quoted in a message, would then be a command: `::stop-commands::x` makes
// the runner ignore every later command until a line `::x::`, so the
// annotations phasegate prints after it vanish, and `::error::…` forges one.
//
// Inside a workflow, human-readable output is therefore framed by
// StopCommands (GitHub's "Stopping and starting workflow commands"), and
// phasegate's own commands are printed outside the frames; GitHub (the
// annotations of the github format) escapes what it puts in a command;
// JSON and SARIF never hold "##[" (jsonSafe) and never start a line with
// "::".

// StopCommands writes text to w between `::stop-commands::TOKEN` and
// `::TOKEN::`: the runner acts on no workflow command in between, whatever
// text holds, because only a line naming TOKEN ends the frame. token must
// return an unpredictable token, such as crypto/rand.Text, that is not the
// name of a workflow command; it is called for every frame, and again
// while its token occurs in text (ignoring case, as the runner compares),
// so text never ends its own frame. The frame's first line must start a
// line of the output: the caller has ended the previous one. A newline is
// added to text that does not end with one, so that `::TOKEN::` starts a
// line. Empty text writes nothing.
func StopCommands(w io.Writer, text []byte, token func() string) error {
	if len(text) == 0 {
		return nil
	}
	tok := token()
	lower := bytes.ToLower(text)
	for tok == "" || bytes.Contains(lower, []byte(strings.ToLower(tok))) {
		tok = token()
	}
	var b bytes.Buffer
	b.Grow(len(text) + 2*len(tok) + 24)
	b.WriteString("::stop-commands::" + tok + "\n")
	b.Write(text)
	if text[len(text)-1] != '\n' {
		b.WriteByte('\n')
	}
	b.WriteString("::" + tok + "::\n")
	if _, err := w.Write(b.Bytes()); err != nil {
		return fmt.Errorf("writing to the log: %w", err)
	}
	return nil
}

// StopCommandsWriter frames every Write in its own StopCommands frame: a
// log handler (log/slog) writes one record per Write.
type StopCommandsWriter struct {
	W     io.Writer
	Token func() string
}

// Write writes p framed; it reports len(p) when the frame was written.
func (s StopCommandsWriter) Write(p []byte) (int, error) {
	if err := StopCommands(s.W, p, s.Token); err != nil {
		return 0, err
	}
	return len(p), nil
}
