package decide

import (
	"context"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/phasegate/phasegate/internal/artifact"
	"github.com/phasegate/phasegate/internal/ghclient"
	"github.com/phasegate/phasegate/internal/outcome"
)

// The I/O half of the ledger's trust model (docs/security.md): what the
// pure fold cannot read by itself.

// maxSourceReads bounds the outcome files read for one thread.
const maxSourceReads = 20

// readSources reads, for every outcome comment phasegate's identity posted
// on the thread, the file its marker names at the commit it names, and
// records which outcome that file holds. Without a signing key this is how
// the fold tells phasegate's outcome comments from ones another workflow
// posting as the same identity invented. Each file is read once per
// process: a commit's content never changes.
func (h *Handler) readSources(ctx context.Context, gh GitHub, t *thread) error {
	t.sources = map[string]string{}
	identity := t.cfg.IdentityOrDefault()
	reads := 0
	for _, c := range t.comments {
		if !strings.EqualFold(c.User, identity) {
			continue
		}
		marks := outcome.ParseMarkers(c.Body)
		if len(marks) == 0 || marks[0].Kind != outcome.KindOutcome {
			continue
		}
		mk := marks[0]
		local := mk.Commit + ":" + mk.Source
		if _, done := t.sources[local]; done {
			continue
		}
		cacheKey := strings.ToLower(t.owner+"/"+t.repo) + "@" + local
		if id, ok := h.sources.Load(cacheKey); ok {
			t.sources[local] = id.(string)
			continue
		}
		if reads == maxSourceReads {
			t.sources[local] = "" // not read: the outcome does not count
			continue
		}
		reads++
		data, found, err := gh.FileContent(ctx, t.owner, t.repo, mk.Source, mk.Commit)
		if err != nil {
			if ghclient.StatusCode(err) == 422 {
				found = false // no such commit
			} else {
				return fmt.Errorf("reading %s at %s for the outcome on %s/%s#%d: %w", mk.Source, mk.Commit, t.owner, t.repo, t.issue, err)
			}
		}
		id := ""
		if found {
			id, _, _ = outcomeOf(mk.Source, data)
		}
		t.sources[local] = id
		h.sources.Store(cacheKey, id)
	}
	return nil
}

// outcomeOf decodes an outcome file: its ID, the outcome and its canonical
// YAML; id is "" when the file is not a valid Phase Outcome.
func outcomeOf(name string, data []byte) (id string, o *outcome.Outcome, canonical []byte) {
	kind := artifact.KindByID("outcome.phase-outcome")
	doc := artifact.Decode(name, kind, data, artifact.DefaultLimits)
	if !doc.Decoded {
		return "", nil, nil
	}
	o, err := outcome.Parse(doc.Value)
	if err != nil {
		return "", nil, nil
	}
	canonical, err = outcome.Canonical(doc.Value)
	if err != nil {
		return "", nil, nil
	}
	return outcome.ID(canonical), o, canonical
}

// anchorRE reads the comment a phasegate/decisions status points at: its
// target URL is the html_url of the newest phasegate comment on the issue.
var anchorRE = regexp.MustCompile(`/(?:issues|pull)/([0-9]{1,10})#issuecomment-([0-9]{1,19})$`)

// anchorOf is the issue and comment a status's target URL names.
func anchorOf(targetURL string) (issue int, comment int64, ok bool) {
	m := anchorRE.FindStringSubmatch(targetURL)
	if m == nil {
		return 0, 0, false
	}
	n, err1 := strconv.Atoi(m[1])
	id, err2 := strconv.ParseInt(m[2], 10, 64)
	return n, id, err1 == nil && err2 == nil
}

// checkAnchors finds deleted phasegate comments that the chain cannot show
// (the newest one): every phasegate/decisions status phasegate ever set on
// the head of a pull request carrying the thread's outcomes points at the
// phasegate comment that was newest then, and GitHub keeps every status.
// A pointed-at comment of this issue that is gone was deleted. It also
// reads the pull requests, for the statuses advance sets.
func (h *Handler) checkAnchors(ctx context.Context, gh GitHub, t *thread) error {
	t.heads = map[int]ghclient.PR{}
	t.statuses = map[string][]ghclient.Status{}
	t.pushed = nil
	prs, commits := anchorTargets(t)
	for _, n := range prs {
		pr, err := gh.PullRequest(ctx, t.owner, t.repo, n)
		if err != nil {
			if ghclient.IsNotFound(err) {
				continue
			}
			return fmt.Errorf("reading pull request #%d of %s/%s: %w", n, t.owner, t.repo, err)
		}
		if pr.HeadSHA == "" {
			continue
		}
		if pr.State == "open" {
			t.heads[n] = pr
		}
		// A merged or closed pull request's head keeps its statuses: its
		// anchors still show a deletion.
		if err := h.readAnchors(ctx, gh, t, pr.HeadSHA); err != nil {
			return err
		}
	}
	for _, sha := range commits {
		if err := h.readAnchors(ctx, gh, t, sha); err != nil {
			if ghclient.IsNotFound(err) || ghclient.StatusCode(err) == 422 {
				continue // a commit GitHub no longer has
			}
			return err
		}
		t.pushed = append(t.pushed, sha)
	}
	return nil
}

// anchorTargets are the pull requests carrying the thread's outcomes (from
// the markers, tampered ones too) and, for outcomes posted without a pull
// request (pushed straight to a branch), the commits that added them.
func anchorTargets(t *thread) (prs []int, commits []string) {
	seenPR, seenCommit := map[int]bool{}, map[string]bool{}
	add := func(pr int, commit string) {
		switch {
		case pr > 0 && !seenPR[pr]:
			seenPR[pr] = true
			prs = append(prs, pr)
		case pr == 0 && commit != "" && !seenCommit[commit]:
			seenCommit[commit] = true
			commits = append(commits, commit)
		}
	}
	for _, o := range t.st.Outcomes {
		add(o.PR, o.Commit)
	}
	for _, tm := range t.st.Tampered {
		if c, ok := t.comment(tm.CommentID); ok {
			if marks := outcome.ParseMarkers(c.Body); len(marks) > 0 && marks[0].Kind == outcome.KindOutcome {
				add(marks[0].PR, marks[0].Commit)
			}
		}
	}
	sort.Ints(prs)
	sort.Strings(commits)
	return prs, commits
}

// readAnchors reads the phasegate/decisions history of sha and records
// every phasegate comment of this issue it points at that is gone.
func (h *Handler) readAnchors(ctx context.Context, gh GitHub, t *thread, sha string) error {
	history, err := gh.Statuses(ctx, t.owner, t.repo, sha, ContextDecisions)
	if err != nil {
		return fmt.Errorf("reading the statuses of %s in %s/%s: %w", shortSHA(sha), t.owner, t.repo, err)
	}
	t.statuses[sha] = history
	identity := t.cfg.IdentityOrDefault()
	present := map[int64]bool{}
	for _, c := range t.comments {
		present[c.ID] = true
	}
	for _, s := range history {
		if !strings.EqualFold(s.Creator, identity) {
			continue
		}
		if issue, id, ok := anchorOf(s.TargetURL); ok && issue == t.issue && !present[id] {
			t.deleted = append(t.deleted, id)
			t.st.Deleted(id)
		}
	}
	return nil
}
