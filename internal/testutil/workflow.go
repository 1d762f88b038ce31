package testutil

import (
	"strings"
	"unicode"
)

// This file emulates how the GitHub Actions runner reads a step's output for
// workflow commands (actions/runner: OutputManager.OnDataReceived,
// ActionCommandManager.TryProcessCommand, ActionCommand.TryParseV2 and
// TryParse), so that tests can say which commands a log really issues:
//
//   - the output is split into lines at "\n", "\r\n" and "\r" (the runner
//     reads it with StreamReader.ReadLine);
//   - a line is a command when, after its leading white space, it starts
//     with "::" and has a second "::" ("::name k=v,k=v::data"), or when it
//     contains "##[" anywhere followed by "]" (the older
//     "##[name k=v;k=v]data"), and the name is a command the runner knows;
//   - "::stop-commands::TOKEN" makes the runner ignore every command until
//     one whose name is TOKEN (compared ignoring case): "::TOKEN::";
//   - properties and data are unescaped as the runner does.

// WorkflowCommand is one command the runner parsed from a line.
type WorkflowCommand struct {
	// Line is the 1-based number of the line in the output.
	Line int
	// Name is the command's name as written ("error", "stop-commands").
	Name string
	// Props are its properties, unescaped, keys lower-cased (the runner
	// reads them ignoring case).
	Props map[string]string
	// Data is what follows the command, unescaped.
	Data string
	// V1 says the line used the "##[name]data" form.
	V1 bool
}

// StopRegion is a stretch of output in which the runner ignored commands.
type StopRegion struct {
	// Token is the stop-commands token; End is the line of "::TOKEN::"
	// that resumed processing (0: never resumed).
	Token      string
	Start, End int
}

// RunnerLog is what the runner made of a step's output.
type RunnerLog struct {
	// Lines are the output's lines as the runner splits them.
	Lines []string
	// Effective are the commands the runner acted on, in order: neither
	// the stop-commands and resume commands themselves nor those it
	// ignored while stopped.
	Effective []WorkflowCommand
	// Ignored are the commands the runner saw while stopped.
	Ignored []WorkflowCommand
	// Regions are the stop-commands regions, in order.
	Regions []StopRegion
	// Rejected are stop-commands the runner refused (an empty token, or the
	// name of a command).
	Rejected []WorkflowCommand
}

// Annotations are the effective error, warning and notice commands.
func (l RunnerLog) Annotations() []WorkflowCommand {
	var out []WorkflowCommand
	for _, c := range l.Effective {
		switch strings.ToLower(c.Name) {
		case "error", "warning", "notice":
			out = append(out, c)
		}
	}
	return out
}

// Stopped says whether the output ended with commands stopped.
func (l RunnerLog) Stopped() bool {
	return len(l.Regions) > 0 && l.Regions[len(l.Regions)-1].End == 0
}

// runnerCommands are the commands the runner registers (its command
// extensions and stop-commands).
var runnerCommands = []string{"add-mask", "add-matcher", "add-path", "debug", "echo", "endgroup", "error", "group",
	"notice", "remove-matcher", "save-state", "set-env", "set-output", "stop-commands", "warning"}

// RunWorkflowCommands reads out, a step's output (stdout and stderr both
// count), as the runner does.
func RunWorkflowCommands(out string) RunnerLog {
	var l RunnerLog
	l.Lines = runnerLines(out)
	token := "" // the current stop token; "" when commands are processed
	for i, line := range l.Lines {
		known := func(name string) bool {
			for _, c := range runnerCommands {
				if strings.EqualFold(c, name) {
					return true
				}
			}
			return token != "" && strings.EqualFold(token, name)
		}
		c, ok := parseV2(line, known)
		if !ok {
			c, ok = parseV1(line, known)
		}
		if !ok {
			continue
		}
		c.Line = i + 1
		switch {
		case token != "" && strings.EqualFold(c.Name, token):
			l.Regions[len(l.Regions)-1].End = c.Line
			token = ""
		case token != "":
			l.Ignored = append(l.Ignored, c)
		case strings.EqualFold(c.Name, "stop-commands"):
			// The runner refuses a token it could confuse with a command.
			if c.Data == "" || known(c.Data) || strings.EqualFold(c.Data, "pause-logging") {
				l.Rejected = append(l.Rejected, c)
				continue
			}
			token = c.Data
			l.Regions = append(l.Regions, StopRegion{Token: token, Start: c.Line})
		default:
			l.Effective = append(l.Effective, c)
		}
	}
	return l
}

// runnerLines splits out at "\n", "\r\n" and "\r", as ReadLine does.
func runnerLines(out string) []string {
	out = strings.ReplaceAll(out, "\r\n", "\n")
	out = strings.ReplaceAll(out, "\r", "\n")
	out = strings.TrimSuffix(out, "\n")
	if out == "" {
		return nil
	}
	return strings.Split(out, "\n")
}

// parseV2 is ActionCommand.TryParseV2: "::name k=v,k=v::data" after
// leading white space (.NET's TrimStart: Unicode white space).
func parseV2(line string, known func(string) bool) (WorkflowCommand, bool) {
	line = strings.TrimLeftFunc(line, unicode.IsSpace)
	if !strings.HasPrefix(line, "::") {
		return WorkflowCommand{}, false
	}
	end := strings.Index(line[2:], "::")
	if end < 0 {
		return WorkflowCommand{}, false
	}
	info, data := line[2:2+end], line[2+end+2:]
	name, props, hasProps := strings.Cut(info, " ")
	if !known(name) {
		return WorkflowCommand{}, false
	}
	c := WorkflowCommand{Name: name, Props: map[string]string{}, Data: unescapeCommand(data, dataEscapes)}
	if hasProps {
		for _, p := range splitNonEmpty(strings.TrimFunc(props, unicode.IsSpace), ",") {
			if k, v, ok := cutNonEmpty(p); ok {
				c.Props[strings.ToLower(k)] = unescapeCommand(v, propertyEscapes)
			}
		}
	}
	return c, true
}

// parseV1 is ActionCommand.TryParse: "##[name k=v;k=v]data" anywhere in
// the line.
func parseV1(line string, known func(string) bool) (WorkflowCommand, bool) {
	start := strings.Index(line, "##[")
	if start < 0 {
		return WorkflowCommand{}, false
	}
	rb := strings.IndexByte(line[start:], ']')
	if rb < 0 {
		return WorkflowCommand{}, false
	}
	info, data := line[start+3:start+rb], line[start+rb+1:]
	name, props, hasProps := strings.Cut(info, " ")
	if !known(name) {
		return WorkflowCommand{}, false
	}
	c := WorkflowCommand{Name: name, Props: map[string]string{}, Data: unescapeCommand(data, v1Escapes), V1: true}
	if hasProps {
		for _, p := range splitNonEmpty(props, ";") {
			if k, v, ok := cutNonEmpty(p); ok {
				c.Props[strings.ToLower(k)] = unescapeCommand(v, v1Escapes)
			}
		}
	}
	return c, true
}

// The runner's escape mappings, in the order it undoes them.
var (
	dataEscapes     = [][2]string{{"\r", "%0D"}, {"\n", "%0A"}, {"%", "%25"}}
	propertyEscapes = [][2]string{{"\r", "%0D"}, {"\n", "%0A"}, {":", "%3A"}, {",", "%2C"}, {"%", "%25"}}
	v1Escapes       = [][2]string{{";", "%3B"}, {"\r", "%0D"}, {"\n", "%0A"}, {"]", "%5D"}, {"%", "%25"}}
)

func unescapeCommand(s string, mappings [][2]string) string {
	for _, m := range mappings {
		s = strings.ReplaceAll(s, m[1], m[0])
	}
	return s
}

// splitNonEmpty is .NET's Split with RemoveEmptyEntries.
func splitNonEmpty(s, sep string) []string {
	var out []string
	for _, p := range strings.Split(s, sep) {
		if p != "" {
			out = append(out, p)
		}
	}
	return out
}

// cutNonEmpty splits "k=v" at its first "=" and keeps the pair when
// both sides are non-empty (Split(count: 2, RemoveEmptyEntries)).
func cutNonEmpty(p string) (string, string, bool) {
	k, v, ok := strings.Cut(p, "=")
	return k, v, ok && k != "" && v != ""
}
