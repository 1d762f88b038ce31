package cli

import (
	"fmt"
	"io/fs"
	"os"
	"strings"

	"github.com/phasegate/phasegate/examples"
	"github.com/phasegate/phasegate/internal/artifact"
	"github.com/phasegate/phasegate/internal/outcome"
	"github.com/phasegate/phasegate/internal/report"
)

const demoAbout = `Checks and gates the example repository built into this binary (examples/demo in the
source: the five pipeline families, with a few deliberate mistakes) as 'phasegate gate'
checks a checkout, then lists the decisions its Phase Outcomes leave pending and the
/resolve command that answers each on the outcome's issue. It needs no checkout, network
or configuration: the files are written to a temporary directory, removed afterwards.

Exit codes: 0 the demo ran (its verdict is HOLD by design, which 'phasegate gate' would
exit 1 for); 2 could not run, or an argument.`

// demo runs gate on the embedded example repository, then prints the
// pending decisions of its Phase Outcomes with a command resolving each.
func (e *environment) demo(args []string) int {
	fset := e.flags("demo", demoAbout)
	if code, done := fset.parse(args); done {
		return code
	}
	if fset.NArg() > 0 {
		return e.failf("demo takes no arguments (got %q)", fset.Arg(0))
	}
	dir, err := os.MkdirTemp("", "phasegate-demo-")
	if err != nil {
		return e.failf("demo: %v", err)
	}
	defer os.RemoveAll(dir)
	if err := os.CopyFS(dir, examples.Demo); err != nil {
		return e.failf("demo: writing the example repository to %s: %v", dir, err)
	}
	pending, err := demoDecisions(examples.Demo)
	if err != nil {
		return e.failf("demo: %v", err)
	}
	fmt.Fprint(e.stdout, "phasegate gate examples/demo (the example repository built into this binary):\n\n")
	if e.check("gate", []string{dir}) == ExitUsage {
		return ExitUsage
	}
	fmt.Fprint(e.stdout, "\nPending decisions: phasegate posts each Phase Outcome as a comment on its issue, where a\n"+
		"person resolves each decision; phasegate/decisions stays pending until the blocking ones are:\n")
	for _, p := range pending {
		fmt.Fprintf(e.stdout, "\n  issue #%d, %s (phase %s)\n", p.issue, report.Terminal(p.file), report.Terminal(p.o.Phase))
		for _, d := range p.o.Decisions {
			blocking := "        "
			if d.Blocking {
				blocking = "blocking"
			}
			fmt.Fprintf(e.stdout, "    %s  %s  %s  options: %s\n", report.Terminal(d.ID), blocking, report.Terminal(d.Question), report.Terminal(strings.Join(d.Options, ", ")))
			fmt.Fprintf(e.stdout, "      /resolve %s %s\n", report.Terminal(d.ID), report.Terminal(demoOption(d)))
		}
	}
	fmt.Fprint(e.stdout, "\nNext: 'phasegate gate .' in your repository; the docs: https://github.com/phasegate/phasegate#readme\n")
	return ExitOK
}

// demoOutcome is a Phase Outcome of the demo that leaves decisions pending.
type demoOutcome struct {
	file  string
	issue int
	o     *outcome.Outcome
}

// demoDecisions finds the Phase Outcomes of fsys as discovery does (by path,
// or by content) and returns those with pending decisions, in path order.
func demoDecisions(fsys fs.FS) ([]demoOutcome, error) {
	kind := artifact.KindByID("outcome.phase-outcome")
	var out []demoOutcome
	err := artifact.WalkFS(fsys, artifact.DiscoverOptions{}, func(f artifact.File) error {
		if f.Kind != kind && !f.Sniff {
			return nil
		}
		data, err := fs.ReadFile(fsys, f.Path)
		if err != nil {
			return fmt.Errorf("reading %s: %w", f.Rel, err)
		}
		if f.Kind != kind && artifact.Sniff(f.Rel, data) != kind {
			return nil
		}
		doc := artifact.Decode(f.Rel, kind, data, artifact.DefaultLimits)
		o, err := outcome.Parse(doc.Value)
		if err != nil || len(o.Decisions) == 0 {
			return nil // the gate above reports why
		}
		issue, _ := outcome.IssueOf(doc.Value, 0)
		out = append(out, demoOutcome{file: f.Rel, issue: issue, o: o})
		return nil
	})
	return out, err
}

// demoOption is the option the demo shows a decision resolved with: the
// recommended one when it is an option, else the first.
func demoOption(d outcome.Decision) string {
	if o, ok := d.RecommendedOption(); ok {
		return o
	}
	if len(d.Options) > 0 {
		return d.Options[0]
	}
	return "<option>"
}
