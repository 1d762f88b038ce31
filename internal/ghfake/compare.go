package ghfake

import (
	"fmt"
	"strings"
	"time"
)

// Comparison configures what GET /repos/{owner}/{repo}/compare/{base}...{head}
// answers (SetComparison).
type Comparison struct {
	// Status is "ahead" (the default), "behind", "diverged" or "identical".
	Status string
	// AheadBy and BehindBy count the commits head has that base has not,
	// and the reverse. Zero on a side the status says moved means 1.
	AheadBy, BehindBy int
	// MergeBase is merge_base_commit.sha. Empty: base's sha when head is
	// ahead or identical, head's when it is behind, and a made-up sha when
	// they diverged.
	MergeBase string
	// Files are the files changed from the merge base to head.
	Files []File
}

var compareStatuses = map[string]bool{"ahead": true, "behind": true, "diverged": true, "identical": true}

// SetComparison sets the comparison of base and head (as named in the
// request: branch names or SHAs).
func (s *Server) SetComparison(owner, name, base, head string, c Comparison) {
	if c.Status == "" {
		c.Status = "ahead"
	}
	if !compareStatuses[c.Status] {
		panic(fmt.Sprintf("ghfake: SetComparison: status %q is not ahead, behind, diverged or identical", c.Status))
	}
	switch c.Status {
	case "identical":
		c.AheadBy, c.BehindBy = 0, 0
	case "ahead":
		c.AheadBy, c.BehindBy = max(c.AheadBy, 1), 0
	case "behind":
		c.AheadBy, c.BehindBy = 0, max(c.BehindBy, 1)
	case "diverged":
		c.AheadBy, c.BehindBy = max(c.AheadBy, 1), max(c.BehindBy, 1)
	}
	c.Files = append([]File(nil), c.Files...)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.repoLocked(owner, name).compares[base+"..."+head] = c
}

// maxCompareFiles is GitHub's cap on the files of a comparison.
const maxCompareFiles = 300

// compare is GET /repos/{owner}/{repo}/compare/{base}...{head}, in the
// OpenAPI commit-comparison shape. Only comparisons set with SetCompare
// or SetComparison exist; the commits list is empty (the fake keeps no
// ancestry), total_commits is ahead_by.
func (s *Server) compare(q *req) reply {
	rp, ok := s.repoOf(q)
	if !ok {
		return notFound()
	}
	base, head, ok := strings.Cut(q.params["basehead"], "...")
	if !ok {
		return notFound()
	}
	c, ok := rp.compares[base+"..."+head]
	if !ok {
		return notFound()
	}
	files := []any{}
	for i, f := range c.Files {
		if i >= maxCompareFiles {
			break
		}
		files = append(files, fileJSON(q, rp, f))
	}
	baseSHA, headSHA := resolveRef(rp, base), resolveRef(rp, head)
	mergeBase := c.MergeBase
	switch {
	case mergeBase != "":
	case c.Status == "behind":
		mergeBase = headSHA
	case c.Status == "diverged":
		mergeBase = blobSHA([]byte("merge base of " + baseSHA + "..." + headSHA))
	default:
		mergeBase = baseSHA
	}
	web := s.webURL + "/" + rp.owner + "/" + rp.name + "/compare/"
	return reply{status: 200, body: map[string]any{
		"url":           q.apiBase + "/repos/" + rp.owner + "/" + rp.name + "/compare/" + base + "..." + head,
		"html_url":      web + base + "..." + head,
		"permalink_url": web + rp.owner + ":" + baseSHA + "..." + rp.owner + ":" + headSHA,
		"diff_url":      web + base + "..." + head + ".diff",
		"patch_url":     web + base + "..." + head + ".patch",
		"status":        c.Status, "ahead_by": c.AheadBy, "behind_by": c.BehindBy, "total_commits": c.AheadBy,
		"base_commit":       s.commitJSON(q, rp, s.commitOrStub(rp, baseSHA), false),
		"merge_base_commit": s.commitJSON(q, rp, s.commitOrStub(rp, mergeBase), false),
		"commits":           []any{}, "files": files,
	}}
}

// commitOrStub is the commit recorded with sha (AddCommit), or a commit
// with only that sha, no accounts, and the Unix epoch as its date (fixed, so
// that a re-read of the same comparison is a 304).
func (s *Server) commitOrStub(rp *repo, sha string) *commitRec {
	for _, c := range rp.commits {
		if c.SHA == sha {
			return c
		}
	}
	return &commitRec{Commit: Commit{SHA: sha, Date: time.Unix(0, 0).UTC()}}
}
