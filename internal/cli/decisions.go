package cli

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
	"unicode"

	"github.com/phasegate/phasegate/internal/decide"
	"github.com/phasegate/phasegate/internal/ghclient"
	"github.com/phasegate/phasegate/internal/ledger"
	"github.com/phasegate/phasegate/internal/report"

	"github.com/phasegate/phasegate/internal/retry"
)

// ExitStillPending is the exit code of `decisions --wait` when the decision
// is still pending at the timeout.
const ExitStillPending = 3

// Polling of `decisions --wait`: the first re-read after 5s, doubling up to
// one a minute. Every read after the first is conditional: an unchanged
// issue costs 304s, which do not count against the rate limit.
const (
	waitFirstPoll = 5 * time.Second
	waitMaxPoll   = time.Minute
)

// clock is the time of `decisions --wait`; tests pass a fake one.
type clock struct {
	now   func() time.Time
	sleep func(ctx context.Context, d time.Duration) error
}

var realClock = clock{now: time.Now, sleep: retry.Sleep}

// decisions prints the folded decisions of an issue, or of every open issue
// waiting for one, and with --wait blocks until a decision is resolved.
func (e *environment) decisions(args []string) int {
	return e.runDecisions(context.Background(), args, realClock)
}

// decisionsUsage is the first part of `phasegate decisions -h`.
const decisionsUsage = `Usage: phasegate decisions [--repo OWNER/NAME] [--issue N [--wait ID [--timeout D]]] [--format text|json]

Prints the decisions of an issue as phasegate's ledger folds them (the newest
Phase Outcome of each phase), or, without --issue, of every open issue with a
pending blocking decision. With --wait, blocks until the decision is resolved.
The token comes from $PHASEGATE_TOKEN or $GITHUB_TOKEN; the signing key from
$PHASEGATE_SIGNING_KEY.

Exit codes: 0 printed (with --wait: resolved with a positive option); 1 with --wait,
resolved with a negative option (decisions.negative_options); 2 usage error or could
not run; 3 with --wait, still pending at the timeout.

Flags:
`

func (e *environment) runDecisions(ctx context.Context, args []string, clk clock) int {
	fset := flag.NewFlagSet("phasegate decisions", flag.ContinueOnError)
	fset.SetOutput(io.Discard)
	repoFlag := fset.String("repo", e.getenv("GITHUB_REPOSITORY"), "owner/name of the repository (default $GITHUB_REPOSITORY)")
	issue := fset.Int("issue", 0, "the issue or pull request (default: every open issue with a pending blocking decision)")
	format := fset.String("format", "text", "output format: text or json")
	apiURL := fset.String("github-api-url", e.getenv("GITHUB_API_URL"), "GitHub API base URL, for GitHub Enterprise (default $GITHUB_API_URL, else api.github.com)")
	configPath := fset.String("config", "", "config file on the default branch (default .github/phasegate.yml)")
	wait := fset.String("wait", "", "block until this decision (ID, or PHASE:ID) of --issue is resolved")
	timeout := fset.Duration("timeout", 30*time.Minute, "with --wait, how long to wait (0: no limit)")
	usage := func(w io.Writer) {
		fmt.Fprint(w, decisionsUsage)
		fset.SetOutput(w)
		fset.PrintDefaults()
	}
	if err := fset.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			usage(e.stdout)
			return ExitOK
		}
		fmt.Fprintf(e.stderr, "phasegate: %s\n\n", flagError(fset, err))
		usage(e.stderr)
		return ExitUsage
	}
	switch {
	case fset.NArg() > 0:
		return e.failf("decisions takes no arguments (got %q)", fset.Arg(0))
	case *format != "text" && *format != "json":
		return e.failf("--format must be text or json (got %q)", *format)
	case *issue < 0:
		return e.failf("--issue must be an issue number (got %d)", *issue)
	case *wait != "" && *issue == 0:
		return e.failf("--wait needs --issue")
	case *timeout < 0:
		return e.failf("--timeout must not be negative (got %s)", *timeout)
	}
	owner, repo, gh, h, err := e.gitHub(*repoFlag, *apiURL, *configPath, clk)
	if err != nil {
		return e.failf("%v", err)
	}
	r := &decisionsRun{e: e, gh: gh, h: h, owner: owner, repo: repo, json: *format == "json"}
	switch {
	case *wait != "":
		return r.wait(ctx, *issue, *wait, *timeout, clk)
	case *issue > 0:
		in, err := h.Inspect(ctx, gh, owner, repo, *issue)
		if err != nil {
			return e.failf("reading %s/%s#%d: %v", owner, repo, *issue, err)
		}
		return r.print(r.view(*issue, in))
	default:
		return r.pending(ctx)
	}
}

// gitHub is what reconcile and decisions read and write GitHub with: the
// repository of --repo (owner/name), a client with the token of
// $PHASEGATE_TOKEN or $GITHUB_TOKEN, and decide's handler with the key of
// $PHASEGATE_SIGNING_KEY and the --config path.
func (e *environment) gitHub(repoFlag, apiURL, configPath string, clk clock) (owner, repo string, gh *ghclient.Client, h *decide.Handler, err error) {
	owner, repo, ok := strings.Cut(repoFlag, "/")
	if !ok || owner == "" || repo == "" || strings.Contains(repo, "/") {
		return "", "", nil, nil, fmt.Errorf("--repo must be owner/name (got %q)", repoFlag)
	}
	token := cmp.Or(e.getenv("PHASEGATE_TOKEN"), e.getenv("GITHUB_TOKEN"))
	if token == "" {
		return "", "", nil, nil, errors.New("no token: set PHASEGATE_TOKEN or GITHUB_TOKEN")
	}
	gh, err = ghclient.New(ghclient.Options{Token: token, BaseURL: apiURL, Version: Version(), Now: clk.now, Sleep: clk.sleep})
	if err != nil {
		return "", "", nil, nil, fmt.Errorf("creating the GitHub client: %w", err)
	}
	h = &decide.Handler{Key: []byte(e.getenv("PHASEGATE_SIGNING_KEY")), ConfigPath: configPath, Logger: e.logger()}
	return owner, repo, gh, h, nil
}

// decisionsRun is one run of `phasegate decisions`.
type decisionsRun struct {
	e           *environment
	gh          *ghclient.Client
	h           *decide.Handler
	owner, repo string
	json        bool
}

// IssueDecisions is the JSON document `phasegate decisions --issue N
// --format json` prints: a public interface, documented in the README.
type IssueDecisions struct {
	Repository string         `json:"repository"`
	Issue      int            `json:"issue"`
	Phase      string         `json:"phase"`
	Tampered   bool           `json:"tampered"`
	Decisions  []DecisionView `json:"decisions"`
}

// DecisionView is one decision in IssueDecisions.
type DecisionView struct {
	ID       string `json:"id"`
	Phase    string `json:"phase"`
	Outcome  string `json:"outcome"`
	Type     string `json:"type"`
	Blocking bool   `json:"blocking"`
	// Status is pending or resolved; a pending decision has no option, by,
	// at or comment.
	Status  string `json:"status"`
	Option  string `json:"option,omitempty"`
	By      string `json:"by,omitempty"`
	At      string `json:"at,omitempty"`
	Comment string `json:"comment,omitempty"`
}

// RepositoryDecisions is what `phasegate decisions --format json` prints
// without --issue.
type RepositoryDecisions struct {
	Repository string           `json:"repository"`
	Issues     []IssueDecisions `json:"issues"`
}

// view maps an inspected issue to its IssueDecisions: the decisions of the
// newest outcome of each phase (an older outcome of a phase is history once
// the skill ran again), in thread order.
func (r *decisionsRun) view(issue int, in *decide.Inspection) IssueDecisions {
	v := IssueDecisions{Repository: r.owner + "/" + r.repo, Issue: issue, Phase: in.State.Phase,
		Tampered: len(in.State.Tampered) > 0, Decisions: []DecisionView{}}
	for _, o := range latestInThreadOrder(in.State) {
		for _, d := range o.Decisions {
			dv := DecisionView{ID: d.ID, Phase: o.Outcome.Phase, Outcome: o.ID, Type: d.Type, Blocking: d.Blocking, Status: "pending"}
			if d.Resolution != nil {
				dv.Status, dv.Option, dv.By = "resolved", d.Resolution.Option, d.Resolution.By
				if c, ok := in.Comment(d.ResolutionComment); ok {
					dv.At, dv.Comment = c.CreatedAt.UTC().Format(time.RFC3339), c.HTMLURL
				}
			}
			v.Decisions = append(v.Decisions, dv)
		}
	}
	return v
}

// latestInThreadOrder are the newest outcomes of each phase, oldest first.
func latestInThreadOrder(st *ledger.State) []*ledger.Outcome {
	latest := st.LatestPerPhase()
	return slices.DeleteFunc(slices.Clone(st.Outcomes), func(o *ledger.Outcome) bool { return !slices.Contains(latest, o) })
}

// pending lists every open issue labelled phasegate:pending whose fold
// still has a pending blocking decision.
func (r *decisionsRun) pending(ctx context.Context) int {
	issues, err := r.gh.ListOpenIssues(ctx, r.owner, r.repo, decide.LabelPending)
	if err != nil {
		return r.e.failf("listing the issues of %s/%s waiting for a decision: %v", r.owner, r.repo, err)
	}
	out := RepositoryDecisions{Repository: r.owner + "/" + r.repo, Issues: []IssueDecisions{}}
	for _, is := range issues {
		in, err := r.h.Inspect(ctx, r.gh, r.owner, r.repo, is.Number)
		if err != nil {
			return r.e.failf("reading %s/%s#%d: %v", r.owner, r.repo, is.Number, err)
		}
		if in.State.Pending() {
			out.Issues = append(out.Issues, r.view(is.Number, in))
		}
	}
	return r.write(out, out.Issues, fmt.Sprintf("%s/%s: no open issue is waiting for a decision\n", r.owner, r.repo))
}

func (r *decisionsRun) print(v IssueDecisions) int { return r.write(v, []IssueDecisions{v}, "") }

// write writes doc as report.EncodeJSON does (indented, `<>&` as written,
// the strings made safe to print: no "##[" for the Actions runner to read
// as a command), or the text of views (none when there is no view),
// framed inside a workflow: the outcomes' IDs, phases and types are
// agent-written.
func (r *decisionsRun) write(doc any, views []IssueDecisions, none string) int {
	if r.json {
		data, err := report.EncodeJSON(doc)
		if err == nil {
			_, err = r.e.stdout.Write(data)
		}
		if err != nil {
			return r.e.failf("writing json: %v", err)
		}
		return ExitOK
	}
	var b bytes.Buffer
	if len(views) == 0 {
		b.WriteString(none)
	}
	for i, v := range views {
		if i > 0 {
			fmt.Fprintln(&b)
		}
		writeText(&b, v)
	}
	if err := r.e.writeHuman(r.e.stdout, b.Bytes()); err != nil {
		return r.e.failf("writing the decisions: %v", err)
	}
	return ExitOK
}

// writeText prints an issue's decisions for people: one line per decision.
// Text from the outcome (ids, phases, types) is agent-written: anything but
// printable characters is quoted, so it cannot move the cursor or recolour
// the terminal.
func writeText(w io.Writer, v IssueDecisions) {
	fmt.Fprintf(w, "%s#%d: phase %s\n", v.Repository, v.Issue, clean(cmp.Or(v.Phase, "unknown")))
	if v.Tampered {
		fmt.Fprintln(w, "  warning: a phasegate comment on this issue was edited; it no longer counts")
	}
	if len(v.Decisions) == 0 {
		fmt.Fprintln(w, "  no Phase Outcome on this issue")
		return
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, d := range v.Decisions {
		blocking := "optional"
		if d.Blocking {
			blocking = "blocking"
		}
		line := fmt.Sprintf("  %s\t%s\t%s\t%s\t%s", clean(d.ID), clean(d.Phase), clean(d.Type), blocking, d.Status)
		if d.Status == "resolved" {
			line += "\t" + clean(d.Option) + " by @" + clean(d.By)
			if d.At != "" {
				line += ", " + d.At
			}
			if d.Comment != "" {
				line += "\t" + clean(d.Comment)
			}
		}
		fmt.Fprintln(tw, line)
	}
	tw.Flush()
}

// clean returns s when it is printable and has no space, else s quoted.
func clean(s string) string {
	if s == "" || strings.ContainsFunc(s, func(r rune) bool { return !unicode.IsPrint(r) || unicode.IsSpace(r) || r == '"' }) {
		return strconv.Quote(s)
	}
	return s
}

// waitTarget finds the decision --wait names (ID or PHASE:ID) among the newest
// outcomes of each phase: the newest holding it unresolved, else the newest
// holding it resolved. nil when no outcome holds it (yet).
func waitTarget(st *ledger.State, spec string) *ledger.Decision {
	phase, id, ok := strings.Cut(spec, ":")
	if !ok {
		phase, id = "", spec
	}
	var resolved *ledger.Decision
	for _, o := range st.LatestPerPhase() { // newest first
		if phase != "" && !strings.EqualFold(strings.TrimPrefix(o.Outcome.Phase, "/"), strings.TrimPrefix(phase, "/")) {
			continue
		}
		d := o.Decision(id)
		switch {
		case d == nil:
		case d.Resolution == nil:
			return d
		case resolved == nil:
			resolved = d
		}
	}
	return resolved
}

// wait polls the issue until the decision is resolved or the timeout ends.
func (r *decisionsRun) wait(ctx context.Context, issue int, spec string, timeout time.Duration, clk clock) int {
	if _, id, found := strings.Cut(spec, ":"); strings.TrimSpace(id) == "" && (found || strings.TrimSpace(spec) == "") {
		return r.e.failf("--wait must be a decision ID or PHASE:ID (got %q)", spec)
	}
	where := fmt.Sprintf("%s/%s#%d", r.owner, r.repo, issue)
	start := clk.now()
	var deadline time.Time
	if timeout > 0 {
		deadline = start.Add(timeout)
	}
	delay := waitFirstPoll
	var last *IssueDecisions
	announced := false
	for {
		in, err := r.h.Inspect(ctx, r.gh, r.owner, r.repo, issue)
		switch {
		case err != nil && (last == nil || permanent(err)):
			return r.e.failf("reading %s: %v", where, err)
		case err != nil:
			fmt.Fprintf(r.e.stderr, "phasegate: reading %s failed, trying again: %v\n", where, err)
		default:
			v := r.view(issue, in)
			last = &v
			d := waitTarget(in.State, spec)
			if d != nil && d.Resolution != nil {
				if code := r.print(v); code != ExitOK {
					return code
				}
				if isNegative(d.Resolution.Option, in.Config.Decisions.NegativeOptions) {
					return ExitFindings
				}
				return ExitOK
			}
			if !announced {
				announced = true
				state := "pending"
				if d == nil {
					state = "not on the issue yet"
				}
				fmt.Fprintf(r.e.stderr, "phasegate: waiting for %s on %s (%s)\n", clean(spec), where, state)
			}
		}
		now := clk.now()
		if !deadline.IsZero() && !now.Before(deadline) {
			if last != nil {
				if code := r.print(*last); code != ExitOK {
					return code
				}
			}
			fmt.Fprintf(r.e.stderr, "phasegate: %s on %s is still pending after %s\n", clean(spec), where, timeout)
			return ExitStillPending
		}
		d := delay
		if !deadline.IsZero() {
			d = min(d, deadline.Sub(now))
		}
		if err := clk.sleep(ctx, d); err != nil {
			return r.e.failf("waiting for %s on %s: %v", clean(spec), where, err)
		}
		delay = min(delay*2, waitMaxPoll)
	}
}

// isNegative reports whether option resolves a decision negatively under
// decisions.negative_options (default reject, request-changes).
func isNegative(option string, negative []string) bool {
	if negative == nil {
		negative = ledger.DefaultNegative
	}
	return slices.ContainsFunc(negative, func(n string) bool { return n != "" && strings.EqualFold(n, option) })
}

// permanent reports whether an error will not go away by reading again: no
// such repository or issue, a bad token, a missing permission.
func permanent(err error) bool {
	return slices.Contains([]int{401, 404}, ghclient.StatusCode(err)) || ghclient.IsPermissionDenied(err)
}
