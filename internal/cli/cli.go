// Package cli is phasegate's command line: subcommands, flags and exit codes.
// Main never panics and never calls os.Exit; it returns the exit code.
package cli

import (
	"context"
	"crypto/rand"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"strings"

	"github.com/phasegate/phasegate/internal/action"
	slash "github.com/phasegate/phasegate/internal/command"
	"github.com/phasegate/phasegate/internal/report"
	"github.com/phasegate/phasegate/internal/server"
)

// Exit codes (docs/architecture.md).
const (
	// ExitOK: checked; verdict SHIP or ADVISORY.
	ExitOK = 0
	// ExitFindings: findings of error severity, or verdict HOLD.
	ExitFindings = 1
	// ExitUsage: usage error, or phasegate could not run.
	ExitUsage = 2
)

// command is one entry of the command table. Adding a command is adding an
// entry: the general help lists it, `phasegate help NAME` prints its usage
// (by running it with -h), and TestCommandHelp checks that its usage is its
// own.
type command struct {
	name    string
	args    string // what follows the name in the synopsis, e.g. "[flags] [PATH...]"
	summary string // one line for the general help
	// batch commands read many files once and exit: see tuneGC.
	batch bool
	// run runs the command with the arguments after its name. With -h or
	// --help it prints the command's usage on stdout and returns ExitOK.
	run func(e *environment, args []string) int
}

// commands is the command table, in the order the general help lists it.
// (A function, not a variable: help refers to the table.)
func commands() []command {
	return []command{
		{name: "validate", args: "[flags] [PATH...]", summary: "check artifacts; print findings", batch: true,
			run: func(e *environment, args []string) int { return e.check("validate", args) }},
		{name: "gate", args: "[flags] [PATH...]", summary: "validate, then compute the verdict (SHIP, ADVISORY, HOLD)", batch: true,
			run: func(e *environment, args []string) int { return e.check("gate", args) }},
		{name: "demo", summary: "check and gate the example repository built into phasegate (no checkout needed)", batch: true,
			run: (*environment).demo},
		{name: "reconcile", args: "[flags]", summary: "apply /resolve commands that have no answer yet",
			run: (*environment).reconcile},
		{name: "decisions", args: "[flags]", summary: "print an issue's decisions; --wait blocks until one is resolved",
			run: (*environment).decisions},
		{name: "action", summary: "the GitHub Action's entrypoint (reads the workflow's environment)", batch: true,
			run: (*environment).action},
		{name: "serve", args: "[flags]", summary: "the GitHub App webhook server (answers /resolve for every installation)",
			run: func(e *environment, args []string) int {
				return server.Main(args, e.getenv, e.stdout, e.stderr, Version())
			}},
		{name: "schema", args: "[KIND | --conventions]", summary: "list the kinds, print one kind's JSON Schema, or the convention-tier fields",
			run: (*environment).schema},
		{name: "version", summary: "print the version, commit and build date",
			run: (*environment).version},
		{name: "help", args: "[COMMAND]", summary: "print this help, or a command's usage",
			run: (*environment).help},
	}
}

func lookup(name string) (command, bool) {
	for _, c := range commands() {
		if c.name == name {
			return c, true
		}
	}
	return command{}, false
}

// writeUsage writes the general help: every command of the table.
func writeUsage(w io.Writer) {
	cmds := commands()
	width := 0
	for _, c := range cmds {
		width = max(width, len(synopsis(c)))
	}
	var b strings.Builder
	b.WriteString(`phasegate checks the artifacts that AI coding-agent pipelines commit
(PACE, JG pipeline, SCC, Autopilot, Phase Outcomes) against their contracts.

Usage:
`)
	for _, c := range cmds {
		fmt.Fprintf(&b, "  %-*s   %s\n", width, synopsis(c), c.summary)
	}
	b.WriteString(`
Run 'phasegate help COMMAND' or 'phasegate COMMAND -h' for a command's usage.
Before COMMAND: -v or --version (phasegate version), --color=auto|always|never
or --no-color (the colour of text output, for every command; NO_COLOR and
FORCE_COLOR are read under auto).

Exit codes: 0 checked, verdict SHIP or ADVISORY; 1 verdict HOLD (validate: an
error finding; gate: an error finding or a decision that holds); 2 usage error or
could not run; decisions --wait: 0 resolved positively, 1 negatively, 3 still
pending at the timeout. Each command's usage lists its own.
`)
	io.WriteString(w, b.String())
}

// synopsis is "phasegate NAME ARGS".
func synopsis(c command) string {
	return strings.TrimSpace("phasegate " + c.name + " " + c.args)
}

// Main runs phasegate with args (without the program name) and returns the
// exit code. getenv is os.Getenv in production and a map in tests.
func Main(args []string, getenv func(string) string, stdout, stderr io.Writer) (code int) {
	defer func() {
		if r := recover(); r != nil {
			// The panic may quote what it failed on: framed in a workflow.
			msg := fmt.Appendf(nil, "phasegate: internal error: %v\n%s", r, debug.Stack())
			if inWorkflow(getenv) {
				report.StopCommands(stderr, msg, rand.Text)
			} else {
				stderr.Write(msg)
			}
			code = ExitUsage
		}
	}()
	env := &environment{getenv: getenv, stdout: stdout, stderr: stderr, open: os.Open}
	name, rest, code, done := env.global(args)
	if done {
		return code
	}
	c, ok := lookup(name)
	if !ok {
		fmt.Fprintf(stderr, "phasegate: unknown command %q%s\n\n", name, didYouMean(name, commandNames()))
		writeUsage(stderr)
		return ExitUsage
	}
	if c.batch {
		tuneGC(getenv)
	}
	return c.run(env, rest)
}

// global parses the options before the command: --color and --no-color
// (the default of every command that colours), -v and --version (the
// version command), -h and --help (the help command). It returns the
// command's name and arguments; done says phasegate ends there, with code.
func (e *environment) global(args []string) (name string, rest []string, code int, done bool) {
	fs := flag.NewFlagSet("phasegate", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	addColorFlags(fs, &e.color)
	showVersion, showHelp := fs.Bool("version", false, ""), fs.Bool("help", false, "")
	fs.BoolVar(showVersion, "v", false, "")
	fs.BoolVar(showHelp, "h", false, "")
	switch err := fs.Parse(args); {
	case err != nil:
		fmt.Fprintf(e.stderr, "phasegate: %s\n\n", flagError(fs, err))
		writeUsage(e.stderr)
		return "", nil, ExitUsage, true
	case *showHelp:
		return "help", fs.Args(), ExitOK, false
	case *showVersion:
		return "version", fs.Args(), ExitOK, false
	case fs.NArg() == 0:
		writeUsage(e.stderr)
		return "", nil, ExitUsage, true
	}
	return fs.Arg(0), fs.Args()[1:], ExitOK, false
}

// commandNames are the names of the command table.
func commandNames() []string {
	var names []string
	for _, c := range commands() {
		names = append(names, c.name)
	}
	return names
}

// didYouMean is `; did you mean "x"?` for the candidate nearest to word
// (command.Suggest, as config keys, /resolve options and schema names
// use), or "" when none is close.
func didYouMean(word string, candidates []string) string {
	if s, ok := slash.Suggest(word, candidates); ok && s != word {
		return fmt.Sprintf("; did you mean %q?", s)
	}
	return ""
}

// help prints the general help, or runs COMMAND -h.
func (e *environment) help(args []string) int {
	fset := e.flags("help", "Without COMMAND, lists the commands; with COMMAND, prints that command's usage\n(the same as 'phasegate COMMAND -h').\n\nExit codes: 0 printed; 2 unknown COMMAND, or usage error.")
	if code, done := fset.parse(args); done {
		return code
	}
	switch fset.NArg() {
	case 0:
		writeUsage(e.stdout)
		return ExitOK
	case 1:
		c, ok := lookup(fset.Arg(0))
		if !ok {
			return e.failf("help: unknown command %q%s (run 'phasegate help' for the list)", fset.Arg(0), didYouMean(fset.Arg(0), commandNames()))
		}
		return c.run(e, []string{"-h"})
	}
	return e.failf("help takes at most one command (got %q)", fset.Args())
}

// action is the GitHub Action's entrypoint. It takes no arguments: the
// workflow's environment says what to do.
func (e *environment) action(args []string) int {
	fset := e.flags("action", `The GitHub Action's entrypoint: action.yml runs it in phasegate's container image.
It reads the workflow's environment, never arguments. GITHUB_EVENT_NAME says what to do:
  push, pull_request, pull_request_target, merge_group
      check the commit's artifacts, annotate the findings, write the job summary, set
      the phasegate/contracts and phasegate/decisions statuses, post new Phase Outcomes
  issue_comment
      handle /resolve, /decisions and /phasegate help commands
  schedule, workflow_dispatch
      reconcile: apply every command on the open phasegate:pending issues that has no answer yet
  workflow_run
      publish the results file a read-only run saved (results-file), after checking its head again
Inputs (action.yml), as the runner passes them:
  INPUT_PATH           the directory whose artifacts are checked (default .)
  INPUT_TOKEN          the token for statuses, comments and labels (default github.token)
  INPUT_FORMAT         how findings are printed in the log: text, json, sarif, github (default text)
  INPUT_POST-OUTCOMES  post new Phase Outcomes on their issues: true or false (default true)
  INPUT_FAIL-ON        when the step fails: hold, error, warning, never (default hold)
  INPUT_CONFIG         the configuration file, read from the default branch (default .github/phasegate.yml)
  INPUT_SARIF-FILE     also write the findings as SARIF 2.1.0 to this file in the workspace
  INPUT_RESULTS-FILE   save the results there (push, pull_request, merge_group), or publish them (workflow_run)
  INPUT_CACHE-FILE     keep the units' results in this file of the workspace between runs (actions/cache)
PHASEGATE_SIGNING_KEY signs outcome and resolution comments.
Outside GitHub Actions, use 'phasegate validate' or 'phasegate gate'.

Exit codes: 0 the run passes the fail-on input; 1 it does not; 2 could not run (not in a
runner's step, no token, GitHub API failures) or usage error.`)
	if code, done := fset.parse(args); done {
		return code
	}
	if fset.NArg() > 0 {
		return e.failf("action takes no arguments (got %q): it reads the workflow's environment", fset.Arg(0))
	}
	return action.Main(context.Background(), e.getenv, e.stdout, action.Options{Version: Version()})
}

// tuneGC trades memory for speed: a check allocates a lot of short-lived
// values per file and keeps little (a few MB live), so collecting at 4× the
// live heap instead of 2× cuts the CPU spent in the collector by about a
// third. On its own that lets the heap swing up to 5× whichever units are in
// flight, so a soft memory limit (batchMemoryLimit) caps it: the collector
// runs more often only when the heap nears the limit, which keeps peak RSS
// flat in the number of files at no measurable cost on the bench corpus. An
// explicit GOGC wins (nothing is set); an explicit GOMEMLIMIT is the
// runtime's own and is kept. Only the batch commands (validate, gate,
// action) do this: serve is long-running and keeps the defaults, so its
// memory stays near twice its live heap.
func tuneGC(getenv func(string) string) {
	if getenv("GOGC") != "" {
		return
	}
	debug.SetGCPercent(400)
	if getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(batchMemoryLimit)
	}
}

// batchMemoryLimit is the soft memory limit of the batch commands (see
// tuneGC): the Go runtime's memory, not the binary's. Measured on the bench
// corpus (bench/README.md, Memory), 32 MiB keeps validate under 50 MB RSS
// from 1,000 to 50,000 artifacts at the speed of GOGC=400 alone; a run whose
// live heap exceeds it (a very large report) is slowed by at most the
// collector's CPU cap, never stopped.
const batchMemoryLimit = 32 << 20

type environment struct {
	getenv         func(string) string
	stdout, stderr io.Writer
	// color is --color (or --no-color) given before the command: the
	// default of the commands that colour (see useColor).
	color colorFlag
	// open opens a PATH to tell whether it can be read (os.Open; tests
	// refuse what root can read).
	open func(string) (*os.File, error)
}

func (e *environment) failf(format string, args ...any) int {
	fmt.Fprintf(e.stderr, "phasegate: "+format+"\n", args...)
	return ExitUsage
}
