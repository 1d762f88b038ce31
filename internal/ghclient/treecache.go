package ghclient

import (
	"context"
	"fmt"
	"io/fs"
	"path"
	"strings"
	"sync"
	"sync/atomic"

	lru "github.com/hashicorp/golang-lru/v2"
)

// TreeCache keeps tree listings, one level each, by repository and tree
// id. A tree's id names its content, so a listing read once serves every
// later commit holding the same tree: a CommitFS with a TreeCache reads
// only the trees that changed (TreeLimits.Trees). Safe for concurrent
// use.
type TreeCache struct {
	levels *lru.Cache[treeKey, []TreeEntry]
	// blobs keeps whole files by blob id, within maxBlobBytes: the files
	// of a changed unit that did not change are not fetched again.
	blobs        *lru.Cache[treeKey, []byte]
	blobBytes    atomic.Int64
	maxBlobBytes int64
	// spools keeps each repository's latest archive spool on disk
	// (keptSpool), at most maxKeptSpools of them.
	spools  *lru.Cache[string, *keptSpool]
	spoolMu sync.Mutex
}

type treeKey struct{ repo, sha string }

// NewTreeCache keeps at most n levels (n > 0), and blobs of blobBytes in
// all (none when 0).
func NewTreeCache(n int, blobBytes int64) *TreeCache {
	tc := &TreeCache{maxBlobBytes: blobBytes}
	tc.levels, _ = lru.New[treeKey, []TreeEntry](max(n, 1)) // errs only on n <= 0
	tc.blobs, _ = lru.NewWithEvict(1<<20, func(_ treeKey, data []byte) { tc.blobBytes.Add(-int64(len(data))) })
	tc.spools, _ = lru.NewWithEvict(maxKeptSpools, func(_ string, ks *keptSpool) { tc.dropSpool(ks) })
	return tc
}

// keepBlob holds the whole content of blob sha of repo (never written to
// after), evicting the blobs used least recently past the byte budget.
func (tc *TreeCache) keepBlob(repo, sha string, data []byte) {
	if int64(len(data)) > tc.maxBlobBytes/8 {
		return
	}
	if held, _ := tc.blobs.ContainsOrAdd(treeKey{repo, sha}, data); held {
		return
	}
	tc.blobBytes.Add(int64(len(data)))
	for tc.blobBytes.Load() > tc.maxBlobBytes {
		if _, _, ok := tc.blobs.RemoveOldest(); !ok {
			return
		}
	}
}

// treeRead is one commit's listing read level by level through a
// TreeCache: entries are bounded by MaxEntries, their paths' bytes by
// MaxListingBytes, and requests are counted.
type treeRead struct {
	c           *Client
	ctx         context.Context
	owner, repo string
	key         string // owner/repo
	cache       *TreeCache
	lim         TreeLimits
	requests    *atomic.Int64
	where       string
	entries     int
	pathBytes   int64
	out         []TreeEntry
	// read holds the levels this read fetched, whatever the cache
	// evicts meanwhile.
	read map[string][]TreeEntry
}

// get is the level of tree sha, from this read or the cache.
func (r *treeRead) get(sha string) ([]TreeEntry, bool) {
	if level, ok := r.read[sha]; ok {
		return level, true
	}
	return r.cache.levels.Get(treeKey{r.key, sha})
}

// put keeps the level of tree sha.
func (r *treeRead) put(sha string, level []TreeEntry) {
	r.read[sha] = level
	r.cache.levels.Add(treeKey{r.key, sha}, level)
}

// cachedListing lists the tree of commit sha as a recursive listing does
// (parents before children), from the cache where it can: a repository
// the cache knows nothing of is listed recursively (one request; subtree
// by subtree when GitHub truncates it); else the commit's root tree is
// read, and below it only the trees the cache does not hold — one level
// at a time while their children are known, one recursive listing for a
// tree none of whose subtrees is known (new ground).
func (tc *TreeCache) cachedListing(ctx context.Context, c *Client, owner, repo, sha string, lim TreeLimits, requests *atomic.Int64, where string) (Tree, error) {
	r := &treeRead{c: c, ctx: ctx, owner: owner, repo: repo, key: repoName(owner, repo), cache: tc, lim: lim, requests: requests, where: where,
		read: map[string][]TreeEntry{}}
	// A repository the cache knows is read from its root level down.
	read := r.subtree
	if _, known := tc.levels.Get(treeKey{repo: r.key}); known {
		read = r.level
	}
	root, err := read(sha)
	if err == nil {
		level, _ := r.get(root)
		err = r.grow(level, "")
	}
	if err != nil {
		return Tree{}, err
	}
	tc.levels.Add(treeKey{repo: r.key}, nil) // the repository is known
	return Tree{SHA: root, Entries: r.out}, nil
}

// fetch reads one tree (sha: a tree, or a commit for its root tree):
// its id and its entries, named by their base names; recursive lists
// everything below it, named by their paths under it.
func (r *treeRead) fetch(sha string, recursive bool) (string, []TreeEntry, error) {
	if !recursive {
		w := r.c.newTreeWalk(r.ctx, r.owner, r.repo, r.where, r.lim)
		defer func() { r.requests.Add(w.requests) }()
		return w.level(sha, "")
	}
	r.requests.Add(1)
	t, err := r.c.listTree(r.ctx, r.owner, r.repo, sha, true, r.lim.MaxEntries)
	if err != nil || t.Truncated { // truncated: the caller reads it subtree by subtree
		return t.SHA, nil, wrapf(err, "%s: read tree %s", r.where, sha)
	}
	return t.SHA, t.Entries, nil
}

// level puts the level of tree sha (or a commit's root tree) in the
// cache, and returns the tree's id.
func (r *treeRead) level(sha string) (string, error) {
	id, level, err := r.fetch(sha, false)
	if err == nil {
		r.put(id, level)
	}
	return id, err
}

// subtree puts every level below tree sha (or a commit's root tree) in
// the cache with one recursive listing, or, when GitHub truncates it, its
// own level and then each subtree the same way. It returns the tree's id.
func (r *treeRead) subtree(sha string) (string, error) {
	id, all, err := r.fetch(sha, true)
	if err != nil {
		return "", err
	}
	if all == nil { // truncated
		id, err := r.level(sha)
		if err != nil {
			return "", err
		}
		level, _ := r.get(id)
		for _, e := range level {
			if _, ok := r.get(e.SHA); e.Type == "tree" && !ok {
				if _, err := r.subtree(e.SHA); err != nil {
					return "", err
				}
			}
		}
		return id, nil
	}
	// Split the listing into levels: a directory's id is in its entry.
	ids := map[string]string{"": id}
	levels := map[string][]TreeEntry{}
	for _, e := range all {
		if e.Path == "." || !fs.ValidPath(e.Path) {
			return "", fmt.Errorf("%s: tree %s lists an entry at %q", r.where, id, e.Path)
		}
		dir, name := path.Split(e.Path)
		dir = strings.TrimSuffix(dir, "/")
		if e.Type == "tree" {
			ids[e.Path] = e.SHA
		}
		e.Path = strings.Clone(name) // not the whole path's bytes
		levels[dir] = append(levels[dir], e)
	}
	for dir, level := range levels {
		dirID, ok := ids[dir]
		if !ok {
			return "", fmt.Errorf("%s: tree %s lists %q under no directory it lists", r.where, id, dir)
		}
		r.put(dirID, level)
	}
	for dir, dirID := range ids {
		if _, ok := levels[dir]; !ok {
			r.put(dirID, []TreeEntry{}) // an empty tree
		}
	}
	return id, nil
}

// grow appends the entries of one level (at prefix) and everything below
// them, reading the trees the cache does not hold.
func (r *treeRead) grow(level []TreeEntry, prefix string) error {
	var trees, missing int
	for _, e := range level {
		if e.Type == "tree" {
			trees++
			if _, ok := r.get(e.SHA); !ok {
				missing++
			}
		}
	}
	newGround := missing >= 2 && missing == trees
	for _, e := range level {
		p := prefix + e.Path
		if e.SHA == "" {
			return fmt.Errorf("%s: %q is listed without an id", r.where, p)
		}
		if r.entries++; r.entries > r.lim.MaxEntries {
			return fmt.Errorf("%s: over %d entries, the limit is %d: %w", r.where, r.lim.MaxEntries, r.lim.MaxEntries, ErrTreeTooLarge)
		}
		if r.pathBytes += int64(len(p)); r.pathBytes > r.lim.MaxListingBytes {
			return fmt.Errorf("%s: over %d bytes of paths, the limit is MaxListingBytes %d: %w", r.where,
				r.lim.MaxListingBytes, r.lim.MaxListingBytes, ErrTreeTooLarge)
		}
		e.Path = p
		r.out = append(r.out, e)
		if e.Type != "tree" {
			continue
		}
		below, ok := r.get(e.SHA)
		if !ok {
			read := r.level
			if newGround {
				read = r.subtree
			}
			if _, err := read(e.SHA); err != nil {
				return err
			}
			if below, ok = r.get(e.SHA); !ok {
				return fmt.Errorf("%s: tree %s of %q was read but not listed", r.where, e.SHA, p)
			}
		}
		if err := r.grow(below, p+"/"); err != nil {
			return err
		}
	}
	return nil
}
