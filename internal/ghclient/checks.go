package ghclient

import (
	"context"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/google/go-github/v60/github"
)

// GitHub's limits on check runs, which CreateCheckRun and UpdateCheckRun
// keep to.
const (
	// MaxAnnotationsPerRequest is the most annotations one request may
	// carry; the rest go in further updates.
	MaxAnnotationsPerRequest = 50
	// MaxCheckOutputBytes bounds output.summary and output.text (GitHub
	// documents 65535 characters and enforces 65535 bytes).
	MaxCheckOutputBytes = 65535
	// MaxCheckTitleBytes bounds output.title and an annotation's title
	// (255 characters; cut to 255 bytes, which is never more).
	MaxCheckTitleBytes = 255
	// MaxAnnotationBytes bounds an annotation's message and raw_details
	// (64 KB).
	MaxAnnotationBytes = 65535
)

// truncatedMark ends a text cut to fit GitHub's limits.
const truncatedMark = "\n\n… (truncated)"

type CheckRun struct {
	ID      int64 // set by GitHub; read only
	Name    string
	HeadSHA string
	// Status is queued, in_progress or completed.
	Status string
	// Conclusion is success, failure, neutral, action_required, cancelled,
	// timed_out or skipped (or stale, which only GitHub sets); empty unless
	// completed. Setting it completes the run.
	Conclusion  string
	DetailsURL  string
	ExternalID  string
	Title       string // output.title, cut to 255 bytes
	Summary     string // output.summary (Markdown), cut to 65535 bytes
	Text        string // output.text (Markdown), cut to 65535 bytes
	Annotations []Annotation
	StartedAt   time.Time // zero: now (create only)
	CompletedAt time.Time // zero: now, when completed

	// Read only.
	AppID            int64
	AppSlug          string
	AnnotationsCount int
	HTMLURL          string
}

// Annotation is a check run annotation: a finding at a place in a file.
type Annotation struct {
	Path      string // relative to the repository root
	StartLine int    // 1-based; less than 1 becomes 1
	EndLine   int    // less than StartLine becomes StartLine
	// StartColumn and EndColumn (1-based; 0: none) are sent only when the
	// annotation is on one line, as GitHub requires.
	StartColumn, EndColumn int
	Level                  string // notice, warning or failure
	Title                  string // cut to 255 bytes
	Message                string // required; cut to 64 KB
	RawDetails             string // cut to 64 KB
}

var (
	checkStatuses     = map[string]bool{"queued": true, "in_progress": true, "completed": true}
	checkConclusions  = map[string]bool{"success": true, "failure": true, "neutral": true, "action_required": true, "cancelled": true, "timed_out": true, "skipped": true}
	annotationLevelOK = map[string]bool{"notice": true, "warning": true, "failure": true}
)

// validate checks what GitHub would refuse and cuts what it would find too
// long; forCreate also requires the head SHA.
func (cr *CheckRun) validate(forCreate bool) error {
	switch {
	case strings.TrimSpace(cr.Name) == "":
		return fmt.Errorf("no check run name")
	case forCreate && cr.HeadSHA == "":
		return fmt.Errorf("no head sha")
	case cr.Status != "" && !checkStatuses[cr.Status]:
		return fmt.Errorf("status %q is not queued, in_progress or completed", cr.Status)
	case cr.Conclusion != "" && !checkConclusions[cr.Conclusion]:
		return fmt.Errorf("conclusion %q is not one a check run may be given", cr.Conclusion)
	case cr.Status == "completed" && cr.Conclusion == "":
		return fmt.Errorf("status completed needs a conclusion")
	case cr.hasOutput() && (cr.Title == "" || cr.Summary == ""):
		return fmt.Errorf("a check run's output (text or annotations) needs a title and a summary")
	}
	cr.Title = truncateBytes(cr.Title, MaxCheckTitleBytes, "…")
	cr.Summary = truncateBytes(cr.Summary, MaxCheckOutputBytes, truncatedMark)
	cr.Text = truncateBytes(cr.Text, MaxCheckOutputBytes, truncatedMark)
	anns := make([]Annotation, len(cr.Annotations))
	for i, a := range cr.Annotations {
		if a.Path == "" || a.Message == "" || !annotationLevelOK[a.Level] {
			return fmt.Errorf("annotation %d (%s:%d): needs a path, a message and a level of notice, warning or failure", i, a.Path, a.StartLine)
		}
		a.StartLine = max(a.StartLine, 1)
		a.EndLine = max(a.EndLine, a.StartLine)
		if a.StartLine != a.EndLine || a.StartColumn < 1 {
			a.StartColumn, a.EndColumn = 0, 0
		} else if a.EndColumn < a.StartColumn {
			a.EndColumn = 0
		}
		a.Title = truncateBytes(a.Title, MaxCheckTitleBytes, "…")
		a.Message = truncateBytes(a.Message, MaxAnnotationBytes, truncatedMark)
		a.RawDetails = truncateBytes(a.RawDetails, MaxAnnotationBytes, truncatedMark)
		anns[i] = a
	}
	cr.Annotations = anns
	return nil
}

func (cr *CheckRun) hasOutput() bool {
	return cr.Title != "" || cr.Summary != "" || cr.Text != "" || len(cr.Annotations) > 0
}

// truncateBytes cuts s to at most max bytes on a rune boundary, ending it
// with mark when it was cut; invalid UTF-8 is replaced first.
func truncateBytes(s string, max int, mark string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	if len(s) <= max {
		return s
	}
	cut := max - len(mark)
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + mark
}

// output is the output object with a batch of annotations.
func (cr *CheckRun) output(batch []Annotation) *github.CheckRunOutput {
	if !cr.hasOutput() {
		return nil
	}
	o := &github.CheckRunOutput{Title: github.String(cr.Title), Summary: github.String(cr.Summary), Text: optString(cr.Text)}
	for _, a := range batch {
		ga := &github.CheckRunAnnotation{Path: github.String(a.Path), StartLine: github.Int(a.StartLine),
			EndLine: github.Int(a.EndLine), AnnotationLevel: github.String(a.Level), Message: github.String(a.Message),
			Title: optString(a.Title), RawDetails: optString(a.RawDetails)}
		if a.StartColumn > 0 {
			ga.StartColumn = github.Int(a.StartColumn)
			if a.EndColumn > 0 {
				ga.EndColumn = github.Int(a.EndColumn)
			}
		}
		o.Annotations = append(o.Annotations, ga)
	}
	return o
}

func optString(s string) *string {
	if s == "" {
		return nil
	}
	return github.String(s)
}

func optTime(t time.Time) *github.Timestamp {
	if t.IsZero() {
		return nil
	}
	return &github.Timestamp{Time: t.UTC()}
}

func splitBatch(anns []Annotation) (first, rest []Annotation) {
	n := min(len(anns), MaxAnnotationsPerRequest)
	return anns[:n], anns[n:]
}

// CreateCheckRun creates a check run on cr.HeadSHA and returns its id.
// Only a GitHub App (its installation token, or a workflow's GITHUB_TOKEN)
// may. The first 50 annotations go with the create, the rest in updates of
// 50 (the output's title, summary and text repeated, as GitHub requires).
// After an ambiguous failure the create looks for the run it was making
// (same name, external id, title and summary, started since the call)
// before creating again, and each update counts the run's annotations
// before sending its batch again, so a lost response duplicates nothing.
func (c *Client) CreateCheckRun(ctx context.Context, owner, repo string, cr CheckRun) (int64, error) {
	ctx = withOp(ctx, "CreateCheckRun")
	where := fmt.Sprintf("create check run %q on %s@%s", cr.Name, repoName(owner, repo), cr.HeadSHA)
	if err := cr.validate(true); err != nil {
		return 0, fmt.Errorf("%s: %w", where, err)
	}
	first, rest := splitBatch(cr.Annotations)
	opts := github.CreateCheckRunOptions{Name: cr.Name, HeadSHA: cr.HeadSHA, DetailsURL: optString(cr.DetailsURL),
		ExternalID: optString(cr.ExternalID), Status: optString(cr.Status), Conclusion: optString(cr.Conclusion),
		StartedAt: optTime(cr.StartedAt), CompletedAt: optTime(cr.CompletedAt), Output: cr.output(first)}
	since := c.opts.Now().Add(-guardWindow)
	var created CheckRun
	err := c.createOnce(ctx, func(ctx context.Context) error {
		got, _, err := c.gh.Checks.CreateCheckRun(ctx, owner, repo, opts)
		if err == nil {
			created = toCheckRun(got)
		}
		return err
	}, func(ctx context.Context) (bool, error) {
		runs, err := c.checkRuns(withOp(ctx, "CreateCheckRun.guard"), owner, repo, cr.HeadSHA, cr.Name, "all")
		if err != nil {
			return false, err
		}
		for _, r := range runs { // newest first
			if r.ExternalID == cr.ExternalID && r.Title == cr.Title && r.Summary == cr.Summary &&
				((cr.StartedAt.IsZero() && !r.StartedAt.Before(since)) || r.StartedAt.Equal(cr.StartedAt)) {
				created = r
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil {
		return 0, fmt.Errorf("%s: %w", where, err)
	}
	if err := c.addAnnotations(ctx, owner, repo, created.ID, created.AnnotationsCount, github.UpdateCheckRunOptions{Name: cr.Name}, cr, rest); err != nil {
		return created.ID, fmt.Errorf("%s: check run %d created, but: %w", where, created.ID, err)
	}
	return created.ID, nil
}

// UpdateCheckRun updates check run id: the fields of cr that are set (Name
// is required: GitHub renames the run otherwise). Annotations are added to
// those the run has, 50 per request; with annotations, the run is read
// first, so that a batch whose response was lost is not sent twice. Only
// the App that created a run may update it (a 403 otherwise).
func (c *Client) UpdateCheckRun(ctx context.Context, owner, repo string, id int64, cr CheckRun) error {
	ctx = withOp(ctx, "UpdateCheckRun")
	where := fmt.Sprintf("update check run %d (%q) in %s", id, cr.Name, repoName(owner, repo))
	if err := cr.validate(false); err != nil {
		return fmt.Errorf("%s: %w", where, err)
	}
	opts := github.UpdateCheckRunOptions{Name: cr.Name, DetailsURL: optString(cr.DetailsURL),
		ExternalID: optString(cr.ExternalID), Status: optString(cr.Status), Conclusion: optString(cr.Conclusion),
		CompletedAt: optTime(cr.CompletedAt), Output: cr.output(nil)}
	if len(cr.Annotations) == 0 {
		_, _, err := c.gh.Checks.UpdateCheckRun(idempotent(ctx), owner, repo, id, opts)
		return wrapf(err, "%s", where)
	}
	cur, _, err := c.gh.Checks.GetCheckRun(ctx, owner, repo, id)
	if err != nil {
		return fmt.Errorf("%s: read it: %w", where, err)
	}
	return wrapf(c.addAnnotations(ctx, owner, repo, id, cur.GetOutput().GetAnnotationsCount(), opts, cr, cr.Annotations), "%s", where)
}

// addAnnotations sends anns to run id in updates of 50, the first with
// opts, the others with the run's name only; count is the number of
// annotations the run has before.
func (c *Client) addAnnotations(ctx context.Context, owner, repo string, id int64, count int, opts github.UpdateCheckRunOptions, cr CheckRun, anns []Annotation) error {
	for len(anns) > 0 {
		var batch []Annotation
		batch, anns = splitBatch(anns)
		opts.Output = cr.output(batch)
		err := c.createOnce(ctx, func(ctx context.Context) error {
			got, _, err := c.gh.Checks.UpdateCheckRun(ctx, owner, repo, id, opts)
			if err == nil {
				count = got.GetOutput().GetAnnotationsCount()
			}
			return err
		}, c.annotationsApplied(owner, repo, id, count+len(batch), &count))
		if err != nil {
			return fmt.Errorf("add %d annotations: %w", len(batch)+len(anns), err)
		}
		opts = github.UpdateCheckRunOptions{Name: cr.Name}
	}
	return nil
}

// annotationsApplied is the guard of an update adding annotations: it was
// applied when the run has want annotations (or more) now.
func (c *Client) annotationsApplied(owner, repo string, id int64, want int, count *int) func(context.Context) (bool, error) {
	return func(ctx context.Context) (bool, error) {
		cur, _, err := c.gh.Checks.GetCheckRun(withOp(ctx, "UpdateCheckRun.guard"), owner, repo, id)
		if err != nil {
			return false, err
		}
		if n := cur.GetOutput().GetAnnotationsCount(); n >= want {
			*count = n
			return true, nil
		}
		return false, nil
	}
}

// CheckRunsForRef returns the latest check run of each App named name on
// ref (every name when empty), newest first, with the App that made each:
// GET /repos/{o}/{r}/commits/{ref}/check-runs?check_name=…&filter=latest.
func (c *Client) CheckRunsForRef(ctx context.Context, owner, repo, ref, name string) ([]CheckRun, error) {
	return c.checkRuns(withOp(ctx, "CheckRunsForRef"), owner, repo, ref, name, "latest")
}

// CheckRunHistory lists every check run named name on ref, not only the
// newest of each name (filter=all): the history phasegate's anchors read.
func (c *Client) CheckRunHistory(ctx context.Context, owner, repo, ref, name string) ([]CheckRun, error) {
	return c.checkRuns(withOp(ctx, "CheckRunHistory"), owner, repo, ref, name, "all")
}

func (c *Client) checkRuns(ctx context.Context, owner, repo, ref, name, filter string) ([]CheckRun, error) {
	return listAll(ctx, c, fmt.Sprintf("list check runs %q of %s@%s", name, repoName(owner, repo), ref), toCheckRun,
		func(ctx context.Context, lo github.ListOptions) ([]*github.CheckRun, *github.Response, error) {
			res, resp, err := c.gh.Checks.ListCheckRunsForRef(ctx, owner, repo, ref,
				&github.ListCheckRunsOptions{CheckName: optString(name), Filter: github.String(filter), ListOptions: lo})
			if err != nil {
				return nil, resp, err
			}
			return res.CheckRuns, resp, nil
		})
}

func toCheckRun(r *github.CheckRun) CheckRun {
	return CheckRun{ID: r.GetID(), Name: r.GetName(), HeadSHA: r.GetHeadSHA(), Status: r.GetStatus(),
		Conclusion: r.GetConclusion(), DetailsURL: r.GetDetailsURL(), ExternalID: r.GetExternalID(),
		Title: r.GetOutput().GetTitle(), Summary: r.GetOutput().GetSummary(), Text: r.GetOutput().GetText(),
		StartedAt: r.GetStartedAt().Time, CompletedAt: r.GetCompletedAt().Time,
		AppID: r.GetApp().GetID(), AppSlug: r.GetApp().GetSlug(),
		AnnotationsCount: r.GetOutput().GetAnnotationsCount(), HTMLURL: r.GetHTMLURL()}
}
