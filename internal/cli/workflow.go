package cli

import (
	"bytes"
	"crypto/rand"
	"io"
	"log/slog"

	"github.com/phasegate/phasegate/internal/report"
)

// Inside a GitHub Actions workflow (GITHUB_ACTIONS=true) the runner reads
// every line a step prints, on stdout and stderr, as a possible workflow
// command, so text that an artifact or a comment wrote must not start one
// (report.StopCommands). There, human-readable output that can carry such
// text is framed by `::stop-commands::TOKEN` … `::TOKEN::`, with a fresh
// token from crypto/rand for every frame: the text report of validate and
// gate, the text of decisions, decide's log records (reconcile,
// decisions) and an internal error. The github format is nothing but
// phasegate's own commands, their data and properties escaped; json and
// sarif hold no command (report.JSON writes "##[" escaped, and no line
// starts with "::") and are often redirected to a file that a frame would
// corrupt: neither is framed. Outside a workflow nothing is framed.

// inWorkflow says that the output is a workflow step's log.
func inWorkflow(getenv func(string) string) bool { return getenv("GITHUB_ACTIONS") == "true" }

// writeHuman writes human-readable text to w: framed inside a workflow.
func (e *environment) writeHuman(w io.Writer, text []byte) error {
	if !inWorkflow(e.getenv) {
		_, err := w.Write(text)
		return err
	}
	return report.StopCommands(w, text, rand.Text)
}

// writeReport writes the report in format to stdout; the text format is
// framed inside a workflow.
func (e *environment) writeReport(format string, r report.Report) error {
	if format != "text" || !inWorkflow(e.getenv) {
		return report.Write(e.stdout, format, r)
	}
	var b bytes.Buffer
	if err := report.Write(&b, format, r); err != nil {
		return err
	}
	return e.writeHuman(e.stdout, b.Bytes())
}

// logger is decide's logger: nil (slog's default) outside a workflow;
// inside one, text records on stderr, each framed, without a time (the
// runner stamps every line).
func (e *environment) logger() *slog.Logger {
	if !inWorkflow(e.getenv) {
		return nil
	}
	w := report.StopCommandsWriter{W: e.stderr, Token: rand.Text}
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{
		ReplaceAttr: func(groups []string, a slog.Attr) slog.Attr {
			if len(groups) == 0 && a.Key == slog.TimeKey {
				return slog.Attr{}
			}
			return a
		},
	}))
}
