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
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/config"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/storage/filesystem"
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

// KnownIDs returns the git blob ids of the regular files under dir that git
// has already hashed and that have not changed since, keyed by their path
// relative to dir: the index's entries whose file still has the size,
// modification time and inode the index recorded, as `git status` decides
// without reading a file. An entry written in the same instant as the
// index or later is left out (git's "racy" case: the file may have changed
// after the index saw it), as are conflicts, sparse and intent-to-add
// entries. It is nil when dir is in no work tree or its index cannot be
// read, and when git may convert what it checks out (a .gitattributes file,
// .git/info/attributes, or core.autocrlf or core.eol set): a file on disk
// is then not the blob the index names. Whoever needs an id it does not
// give hashes the file.
func KnownIDs(dir string) map[string]string {
	repo, err := git.PlainOpenWithOptions(dir, &git.PlainOpenOptions{DetectDotGit: true})
	if err != nil {
		return nil
	}
	prefix, err := repoPrefix(repo, dir)
	store, ok := repo.Storer.(*filesystem.Storage)
	if err != nil || !ok {
		return nil
	}
	written, err := os.Stat(filepath.Join(store.Filesystem().Root(), "index"))
	if err != nil {
		return nil
	}
	idx, err := repo.Storer.Index()
	wt, _ := repo.Worktree() // repoPrefix opened it
	if err != nil || converts(repo, store) {
		return nil
	}
	out := make(map[string]string, len(idx.Entries))
	for _, e := range idx.Entries {
		if path.Base(e.Name) == ".gitattributes" {
			return nil
		}
		// Stage 0 is a merged entry (go-git's index.Merged is 1, the
		// common ancestor's stage in a conflict, as its Stage decodes).
		name, ok := strings.CutPrefix(e.Name, prefix)
		if !ok || e.Stage != 0 || e.SkipWorktree || e.IntentToAdd ||
			(!e.Mode.IsRegular() && e.Mode != filemode.Executable) || !e.ModifiedAt.Before(written.ModTime()) {
			continue
		}
		info, err := os.Lstat(filepath.Join(wt.Filesystem.Root(), filepath.FromSlash(e.Name)))
		if err != nil || !info.Mode().IsRegular() || info.Size() != int64(e.Size) ||
			!info.ModTime().Equal(e.ModifiedAt) || inode(info) != e.Inode {
			continue
		}
		out[name] = e.Hash.String()
	}
	return out
}

// converts tells whether git may check a file out as other bytes than its
// blob: attributes outside the tree, or line-ending conversion configured
// in any scope.
func converts(repo *git.Repository, store *filesystem.Storage) bool {
	if _, err := store.Filesystem().Stat(filepath.Join("info", "attributes")); err == nil {
		return true
	}
	cfg, err := repo.ConfigScoped(config.SystemScope)
	if err != nil {
		return true
	}
	core := cfg.Raw.Section("core")
	crlf := strings.ToLower(core.Option("autocrlf"))
	return (crlf != "" && crlf != "false") || core.Option("eol") != ""
}
