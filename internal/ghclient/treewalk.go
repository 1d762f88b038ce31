package ghclient

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
)

// treeWalk reads trees one level at a time (GET git/trees/{sha} without
// recursive), counting what it read against its limits: the entries read
// (MaxEntries) and the bytes of their paths (MaxListingBytes).
type treeWalk struct {
	c           *Client
	ctx         context.Context
	owner, repo string
	lim         TreeLimits
	entries     int
	pathBytes   int64
	requests    int64
	where       string
}

// newTreeWalk starts a walk whose errors begin with where.
func (c *Client) newTreeWalk(ctx context.Context, owner, repo, where string, lim TreeLimits) *treeWalk {
	return &treeWalk{c: c, ctx: ctx, owner: owner, repo: repo, lim: lim.withDefaults(), where: where}
}

// level reads the entries of one tree (sha: a tree, or a commit for its
// root tree) and returns the tree's id and its entries, each Path prefix
// plus the entry's name. A listing GitHub truncated, a name that is not one
// path element, or a read past the limits is an error.
func (w *treeWalk) level(sha, prefix string) (string, []TreeEntry, error) {
	w.requests++
	t, err := w.c.listTree(w.ctx, w.owner, w.repo, sha, false, w.lim.MaxEntries)
	if err != nil {
		return "", nil, fmt.Errorf("%s: read tree %s: %w", w.where, sha, err)
	}
	if t.Truncated {
		return "", nil, fmt.Errorf("%s: github truncated the listing of tree %s (%d entries): %w", w.where, sha,
			len(t.Entries), ErrTreeTooLarge)
	}
	if w.entries += len(t.Entries); w.entries > w.lim.MaxEntries {
		return "", nil, fmt.Errorf("%s: over %d tree entries read, the limit is MaxEntries %d: %w", w.where,
			w.lim.MaxEntries, w.lim.MaxEntries, ErrTreeTooLarge)
	}
	out := t.Entries[:0]
	for _, e := range t.Entries {
		name := e.Path
		if name == "" || name == "." || name == ".." || strings.Contains(name, "/") {
			return "", nil, fmt.Errorf("%s: tree %s has an entry named %q", w.where, sha, name)
		}
		p := prefix + name
		if w.pathBytes += int64(len(p)); w.pathBytes > w.lim.MaxListingBytes {
			return "", nil, fmt.Errorf("%s: over %d bytes of paths read, the limit is MaxListingBytes %d: %w", w.where,
				w.lim.MaxListingBytes, w.lim.MaxListingBytes, ErrTreeTooLarge)
		}
		e.Path = p
		out = append(out, e)
	}
	return t.SHA, out, nil
}

// all lists the whole tree under sha, as a recursive listing does (parents
// before children), level by level.
func (w *treeWalk) all(sha, prefix string, out *[]TreeEntry) error {
	_, entries, err := w.level(sha, prefix)
	if err != nil {
		return err
	}
	for _, e := range entries {
		*out = append(*out, e)
		if e.Type == "tree" {
			if err := w.all(e.SHA, e.Path+"/", out); err != nil {
				return err
			}
		}
	}
	return nil
}

// Changes of TreeChange.
const (
	ChangeAdded    = "added"
	ChangeRemoved  = "removed"
	ChangeModified = "modified"
)

// TreeChange lists what changed between two commits by walking their trees from the root and descending
// only into subtrees whose ids differ (an unchanged subtree settles all its files): path → "added",
// "removed" or "modified" (a file that changed type or mode counts as modified; a path that was a file and is
// now a directory is the file removed and the directory's files added). Submodules are compared by commit id.
// It reads non-recursive trees only, bounded by lim.MaxEntries entries read; past it: an error wrapping
// ErrTreeTooLarge naming the limit.
func (c *Client) TreeChange(ctx context.Context, owner, repo, base, head string, lim TreeLimits) (map[string]string, error) {
	w := c.newTreeWalk(ctx, owner, repo, fmt.Sprintf("the change %s..%s of %s", base, head,
		repoName(owner, repo)), lim)
	out := map[string]string{}
	if err := w.diffTrees(base, head, "", out); err != nil {
		return nil, err
	}
	return out, nil
}

// diff compares the entries of two trees (of the same directory).
func (w *treeWalk) diff(base, head []TreeEntry, out map[string]string) error {
	byName := map[string][2]*TreeEntry{} // base's entry, head's
	for side, entries := range [][]TreeEntry{base, head} {
		for i, e := range entries {
			pair := byName[e.Path]
			pair[side] = &entries[i]
			byName[e.Path] = pair
		}
	}
	for _, p := range slices.Sorted(maps.Keys(byName)) {
		if err := w.diffEntry(byName[p][0], byName[p][1], out); err != nil {
			return err
		}
	}
	return nil
}

// diffEntry compares one path of two trees; nil is absent.
func (w *treeWalk) diffEntry(b, h *TreeEntry, out map[string]string) error {
	bDir, hDir := b != nil && b.Type == "tree", h != nil && h.Type == "tree"
	switch {
	case bDir && hDir:
		if b.SHA == h.SHA {
			return nil // the same subtree: all its files unchanged
		}
		return w.diffTrees(b.SHA, h.SHA, b.Path+"/", out)
	case b != nil && h != nil && !bDir && !hDir:
		if b.SHA != h.SHA || b.Mode != h.Mode || b.Type != h.Type {
			out[b.Path] = ChangeModified
		}
		return nil
	}
	if b != nil {
		if err := w.settle(b, ChangeRemoved, out); err != nil {
			return err
		}
	}
	if h != nil {
		return w.settle(h, ChangeAdded, out)
	}
	return nil
}

// diffTrees compares two trees (or the root trees of two commits) at
// prefix; trees of one id are the same.
func (w *treeWalk) diffTrees(base, head, prefix string, out map[string]string) error {
	baseTree, b, err := w.level(base, prefix)
	if err != nil {
		return err
	}
	headTree, h, err := w.level(head, prefix)
	if err != nil || baseTree == headTree {
		return err
	}
	return w.diff(b, h, out)
}

// settle marks e — a file, or every file under a directory — as change.
func (w *treeWalk) settle(e *TreeEntry, change string, out map[string]string) error {
	if e.Type != "tree" {
		out[e.Path] = change
		return nil
	}
	var files []TreeEntry
	if err := w.all(e.SHA, e.Path+"/", &files); err != nil {
		return err
	}
	for _, f := range files {
		if f.Type != "tree" {
			out[f.Path] = change
		}
	}
	return nil
}
