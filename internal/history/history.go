// Package history tells which files changed between a base revision and HEAD,
// read from the repository's own .git with go-git: the released container
// image has no git binary, and a library works the same on a laptop, in
// pre-commit, in any CI and in the action (whose checkout must then include
// the base commit: actions/checkout with fetch-depth: 0). It is read-only.
package history

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/utils/merkletrie"
)

// Change is how a file changed.
type Change string

const (
	Added    Change = "added"
	Modified Change = "modified"
	Deleted  Change = "deleted"
)

// Changed returns the files changed between the merge base of base and HEAD,
// and HEAD (what `git diff base...HEAD` shows), keyed by their path relative
// to dir with '/' separators. Files outside dir are left out. dir may be any
// directory inside a work tree.
func Changed(ctx context.Context, dir, base string) (map[string]Change, error) {
	repo, headCommit, err := openHead(dir)
	if err != nil {
		return nil, err
	}
	prefix, err := repoPrefix(repo, dir)
	if err != nil {
		return nil, err
	}
	baseHash, err := repo.ResolveRevision(plumbing.Revision(base))
	if err != nil {
		return nil, fmt.Errorf("resolving base revision %q in %s: %w (in a shallow clone, fetch it first: actions/checkout with fetch-depth: 0)", base, dir, err)
	}
	baseCommit, err := repo.CommitObject(*baseHash)
	if err != nil {
		return nil, fmt.Errorf("reading base commit %s: %w", baseHash, err)
	}
	if bases, err := baseCommit.MergeBase(headCommit); err == nil && len(bases) > 0 {
		baseCommit = bases[0]
	}
	baseTree, err := baseCommit.Tree()
	if err != nil {
		return nil, fmt.Errorf("reading the tree of %s: %w", baseCommit.Hash, err)
	}
	headTree, err := headCommit.Tree()
	if err != nil {
		return nil, fmt.Errorf("reading the tree of %s: %w", headCommit.Hash, err)
	}
	changes, err := object.DiffTreeWithOptions(ctx, baseTree, headTree, &object.DiffTreeOptions{})
	if err != nil {
		return nil, fmt.Errorf("comparing %s with HEAD: %w", base, err)
	}
	out := map[string]Change{}
	for _, ch := range changes {
		action, err := ch.Action()
		if err != nil {
			return nil, fmt.Errorf("comparing %s with HEAD: %w", base, err)
		}
		switch action {
		case merkletrie.Insert:
			add(out, prefix, ch.To.Name, Added)
		case merkletrie.Delete:
			add(out, prefix, ch.From.Name, Deleted)
		case merkletrie.Modify:
			add(out, prefix, ch.To.Name, Modified)
		}
	}
	return out, nil
}

func add(out map[string]Change, prefix, name string, c Change) {
	if name, ok := strings.CutPrefix(name, prefix); ok {
		out[name] = c
	}
}

// repoPrefix is dir's path inside the work tree, with a trailing '/', or "".
func repoPrefix(repo *git.Repository, dir string) (string, error) {
	wt, err := repo.Worktree()
	if err != nil {
		if errors.Is(err, git.ErrIsBareRepository) {
			return "", fmt.Errorf("%s is a bare repository: check a work tree", dir)
		}
		return "", fmt.Errorf("opening the work tree of %s: %w", dir, err)
	}
	top, err := filepath.EvalSymlinks(wt.Filesystem.Root())
	if err != nil {
		return "", fmt.Errorf("resolving %s: %w", wt.Filesystem.Root(), err)
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", fmt.Errorf("resolving %s: %w", dir, err)
	}
	if abs, err = filepath.EvalSymlinks(abs); err != nil {
		return "", fmt.Errorf("resolving %s: %w", dir, err)
	}
	rel, err := filepath.Rel(top, abs)
	if err != nil || rel == "." {
		return "", nil
	}
	return filepath.ToSlash(rel) + "/", nil
}

// Head returns the commit checked out in the work tree that holds dir and
// its parents' hashes (read from the commit object: a shallow clone knows
// them without having the parents).
func Head(dir string) (sha string, parents []string, err error) {
	_, c, err := openHead(dir)
	if err != nil {
		return "", nil, err
	}
	for _, p := range c.ParentHashes {
		parents = append(parents, p.String())
	}
	return c.Hash.String(), parents, nil
}

// openHead opens the git repository of the work tree that holds dir and
// reads the commit checked out there.
func openHead(dir string) (*git.Repository, *object.Commit, error) {
	repo, err := git.PlainOpenWithOptions(dir, &git.PlainOpenOptions{DetectDotGit: true})
	if err != nil {
		return nil, nil, fmt.Errorf("opening the git repository of %s: %w", dir, err)
	}
	head, err := repo.Head()
	if err != nil {
		return nil, nil, fmt.Errorf("resolving HEAD in %s: %w", dir, err)
	}
	c, err := repo.CommitObject(head.Hash())
	if err != nil {
		return nil, nil, fmt.Errorf("reading HEAD commit %s: %w", head.Hash(), err)
	}
	return repo, c, nil
}
