package action

import (
	"bytes"
	"crypto/rand"
	"io"
	"log/slog"
	"sync"

	"github.com/phasegate/phasegate/internal/report"
)

// The step's log is where the runner reads workflow commands. The action
// prints two kinds of lines there:
//
//   - its own commands, through go-githubactions: annotations, notices and
//     errors, whose data and properties the library escapes (%, CR, LF;
//     and ':' and ',' in properties), so each is one command whatever text
//     it carries;
//   - text that can carry what the change under check wrote (the report in
//     the format input, with file paths at the start of lines and artifact
//     text in messages; decide's log records). Each such block is framed by
//     report.StopCommands with a fresh token from crypto/rand, so that the
//     runner acts on no command in it: a directory named
//     `::stop-commands::x` cannot silence the annotations that follow.
//
// Outputs and the job summary are files (GITHUB_OUTPUT,
// GITHUB_STEP_SUMMARY), not the log.

// logWriter is the step's log. It remembers whether the last write ended
// its line, so that a frame always starts a line of its own.
type logWriter struct {
	mu  sync.Mutex
	w   io.Writer
	mid bool // the last byte written was not a newline
}

func (l *logWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.write(p)
}

func (l *logWriter) write(p []byte) (int, error) {
	n, err := l.w.Write(p)
	if n > 0 {
		l.mid = p[n-1] != '\n'
	}
	return n, err
}

// framed writes text in a frame of its own (report.StopCommands), on a
// new line.
func (l *logWriter) framed(text []byte) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	var b bytes.Buffer
	if l.mid {
		b.WriteByte('\n')
	}
	if err := report.StopCommands(&b, text, rand.Text); err != nil {
		return err
	}
	_, err := l.write(b.Bytes())
	return err
}

// framedWriter frames every Write: one log record each.
type framedWriter struct{ l *logWriter }

func (f framedWriter) Write(p []byte) (int, error) {
	if err := f.l.framed(p); err != nil {
		return 0, err
	}
	return len(p), nil
}

// logger is decide's logger: text records in the step's log, each in its
// own frame, without a time (the runner stamps every line).
func (r *run) logger() *slog.Logger {
	return slog.New(slog.NewTextHandler(framedWriter{r.log}, &slog.HandlerOptions{
		ReplaceAttr: func(groups []string, a slog.Attr) slog.Attr {
			if len(groups) == 0 && a.Key == slog.TimeKey {
				return slog.Attr{}
			}
			return a
		},
	}))
}
