package ghfake

import (
	"fmt"
	"sort"
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
// OpenAPI commit-comparison shape: the comparison set with SetCompare or
// SetComparison, else the one derived from what the fake knows of the two
// commits (derivedComparison), else 404. The commits list is empty (the
// fake keeps no ancestry), total_commits is ahead_by.
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
		if c, ok = s.derivedComparison(rp, resolveRef(rp, base), resolveRef(rp, head)); !ok {
			return notFound()
		}
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

// derivedComparison is the comparison of two commits nobody set, as GitHub
// keeps it consistent with what it has: the files of a pull request whose
// base and head are exactly base and head (SetPullRequestFiles: a pull
// request's files are the comparison of its base and head), else the
// difference of the two commits' trees (SetTree, or the files SetFile set
// at them). The fake keeps no ancestry: head is one commit ahead of base,
// which is the merge base. false when neither is known.
func (s *Server) derivedComparison(rp *repo, base, head string) (Comparison, bool) {
	c := Comparison{Status: "ahead", AheadBy: 1, MergeBase: base}
	if base == head {
		c.Status, c.AheadBy = "identical", 0
	}
	for _, is := range s.pulls(rp) {
		if files, set := rp.prFiles[is.number]; set && is.pr.BaseSHA == base && is.pr.HeadSHA == head {
			c.Files = append([]File(nil), files...)
			sort.SliceStable(c.Files, func(i, j int) bool { return c.Files[i].Filename < c.Files[j].Filename })
			return c, true
		}
	}
	bt, okBase := rp.treeOf(base)
	ht, okHead := rp.treeOf(head)
	if !okBase || !okHead {
		return Comparison{}, false
	}
	before, after := map[string]treeEntry{}, map[string]treeEntry{}
	rp.flatten(bt, "", before)
	rp.flatten(ht, "", after)
	for p, e := range after {
		switch o, had := before[p]; {
		case !had:
			c.Files = append(c.Files, File{Filename: p, Status: "added"})
		case o.sha != e.sha:
			c.Files = append(c.Files, File{Filename: p, Status: "modified"})
		case o.mode != e.mode:
			c.Files = append(c.Files, File{Filename: p, Status: "changed"})
		}
	}
	for p := range before {
		if _, kept := after[p]; !kept {
			c.Files = append(c.Files, File{Filename: p, Status: "removed"})
		}
	}
	sort.Slice(c.Files, func(i, j int) bool { return c.Files[i].Filename < c.Files[j].Filename })
	return c, true
}

// flatten adds the files (blobs and submodules) of tree sha to out, by
// path under prefix.
func (r *repo) flatten(sha, prefix string, out map[string]treeEntry) {
	for _, e := range r.trees[sha].entries {
		if e.typ == "tree" {
			r.flatten(e.sha, prefix+e.name+"/", out)
			continue
		}
		out[prefix+e.name] = e
	}
}
