package ghclient

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Defaults of TreeLimits.
const (
	DefaultMaxTreeEntries  = 1000000
	DefaultMaxFileBytes    = 1 << 20
	DefaultMaxTotalBytes   = 64 << 20
	DefaultMaxArchiveBytes = 256 << 20
	DefaultMaxListingBytes = 32 << 20
)

// maxLinkTarget bounds a symlink's target (PATH_MAX).
const maxLinkTarget = 4096

// maxLinkHops bounds the symlinks followed while resolving one name, as
// Linux's ELOOP does.
const maxLinkHops = 40

// TreeLimits bounds what a CommitFS reads. Zero fields take the defaults.
type TreeLimits struct {
	// MaxEntries bounds the tree's entries (files, directories, symlinks,
	// submodules); more is ErrTreeTooLarge. Default 1,000,000 (GitHub cuts one
	// recursive listing at 100,000; a TreeCache reads past it subtree by
	// subtree).
	MaxEntries int
	// MaxFileBytes bounds what is fetched of one file. A larger file's Stat
	// shows its true size, and reading it gives its first MaxFileBytes
	// bytes, then an error wrapping ErrTooLarge — never a silent io.EOF.
	// Default 1 MiB.
	MaxFileBytes int64
	// MaxTotalBytes bounds the file bytes held in memory (blobs fetched,
	// and files read from the archive's spool until they are closed); a
	// read past it fails with ErrTreeTooLarge. Default 64 MiB.
	MaxTotalBytes int64
	// MaxArchiveBytes bounds the tarball read (ArchiveOver), compressed and
	// uncompressed alike, and so the spool its files wait in on disk (a
	// temporary file, removed by Close). Default 256 MiB.
	MaxArchiveBytes int64
	// MaxListingBytes bounds the bytes of the paths a tree read level by
	// level holds (a listing GitHub truncated, TreeChange). Default 32 MiB.
	MaxListingBytes int64
	// Wanted says which files the caller will read; with ArchiveOver, more
	// than ArchiveOver wanted files make the FS read the commit's archive
	// (two requests) instead of one request per blob — with Trees, only
	// once more than ArchiveOver/4 blobs (and a hundredth of the tree's
	// entries) had to be fetched; the archive's files are kept, each
	// verified against the listing, in a temporary file (the spool)
	// rather than in memory. What the archive does not give (within its
	// limits, verified) is fetched blob by blob.
	// Zero or nil: blobs only.
	Wanted      func(path string) bool
	ArchiveOver int
	// Trees, when set, keeps the tree listings between CommitFSes: a
	// commit's listing reads only the trees it does not hold, so a
	// commit that changes one file of a large repository costs a
	// request per directory above that file, and a repository of any
	// size is read (subtree by subtree where GitHub truncates a
	// recursive listing) within MaxEntries and MaxListingBytes.
	Trees *TreeCache
}

func (l TreeLimits) withDefaults() TreeLimits {
	l.MaxEntries = cmp.Or(l.MaxEntries, DefaultMaxTreeEntries)
	l.MaxFileBytes = cmp.Or(l.MaxFileBytes, DefaultMaxFileBytes)
	l.MaxTotalBytes = cmp.Or(l.MaxTotalBytes, DefaultMaxTotalBytes)
	l.MaxArchiveBytes = cmp.Or(l.MaxArchiveBytes, DefaultMaxArchiveBytes)
	l.MaxListingBytes = cmp.Or(l.MaxListingBytes, DefaultMaxListingBytes)
	return l
}

// FSStats measures what a CommitFS fetched.
type FSStats struct {
	// Requests counts the API requests the FS made: the tree listing (and
	// one per tree when GitHub truncated it), one per blob, two for the
	// archive (the redirect and the download).
	// Retries are counted in Client.Stats.
	Requests int64
	// Blobs counts the blobs fetched (files read, symlinks resolved).
	Blobs int64
	// Bytes counts the file bytes fetched (for the archive: spooled).
	Bytes int64
	// ArchiveBytes counts the bytes of the compressed archive read.
	ArchiveBytes int64
	// FromArchive says the archive was read whole: the files it gave that
	// match the listing came from it.
	FromArchive bool
}

// CommitFS is the file tree of one commit, read through the API: one
// recursive tree listing, and each file's blob fetched when the file is
// first read (then kept for the FS's life, or, with a TreeCache, until it
// is closed), or the archive's files spooled to disk. It implements fs.FS,
// fs.ReadDirFS, fs.StatFS and fs.ReadLinkFS (ReadLink and Lstat).
//
// Symlinks (mode 120000) are followed by Open, Stat and ReadDir, and by
// every directory element of a name, within the tree only: a target that is
// absolute or climbs above the root leads nowhere (fs.ErrNotExist).
// Submodules are left out. When GitHub truncates the listing, the tree is
// read level by level (non-recursive listings) within MaxEntries and
// MaxListingBytes, or CommitFS fails with ErrTreeTooLarge. The listing is
// the truth: the archive (ArchiveOver) only fills files whose git blob id
// it matches.
//
// A CommitFS fetches with the context it was made with: once that ends,
// reads of files not yet fetched fail. It is safe for concurrent use.
// Close it when done: it removes the spool.
type CommitFS struct {
	c                *Client
	ctx              context.Context
	owner, repo, sha string
	lim              TreeLimits
	root             *node

	budgetMu sync.Mutex
	fetched  int64 // bytes reserved against MaxTotalBytes

	requests, blobs, bytes, archiveBytes atomic.Int64
	fromArchive                          atomic.Bool

	// archive: the caller wants more files than ArchiveOver; the archive
	// is read (once) at once, or, with a TreeCache (the caller keeps
	// results between commits: check.Cache), when more than
	// ArchiveOver/4 blobs, and a hundredth of the tree's entries, were
	// needed, so that a check reusing most results reads few blobs and no
	// archive, however large the repository.
	archive      bool
	archiveAfter int64 // max(ArchiveOver/4, a hundredth of the entries)
	misses       atomic.Int64
	archiveOnce  sync.Once
	// spool holds the files the archive gave, verified, one after the
	// other (a node's at its off), on disk rather than in memory; written
	// under archiveOnce, removed by Close.
	spool     *os.File
	spoolName string // "" once removed
	spoolEnd  int64
	// kept is the spool of the repository's last archive read, which its
	// TreeCache kept: whole files by blob id, read before any is fetched.
	kept *keptSpool
}

type nodeKind uint8

const (
	kindDir nodeKind = iota
	kindFile
	kindSymlink
)

// node is one file, directory or symlink of the tree.
type node struct {
	name     string
	kind     nodeKind
	exec     bool
	sha      string
	size     int64
	kids     map[string]*node // directories: by name
	children []*node          // directories: sorted by name (sortAll)

	mu      sync.Mutex
	loaded  bool
	data    []byte // at most MaxFileBytes of a file; a symlink's target
	open    int    // a file's handles not closed
	spooled bool   // data is in the spool, at off
	off     int64
}

// CommitFS lists the tree of commit sha (one request; level by level when
// GitHub truncates that listing) and returns its files as an fs.FS that
// fetches each blob when it is first read.
func (c *Client) CommitFS(ctx context.Context, owner, repo, sha string, lim TreeLimits) (*CommitFS, error) {
	f := &CommitFS{c: c, ctx: ctx, owner: owner, repo: repo, sha: sha, lim: lim.withDefaults(),
		root: newDir(".")}
	where := fmt.Sprintf("the tree of %s@%s", repoName(owner, repo), sha)
	t, err := f.listing(ctx, where)
	if err != nil {
		return nil, err
	}
	f.root.sha = t.SHA
	if len(t.Entries) > f.lim.MaxEntries {
		return nil, fmt.Errorf("%s: %d entries, the limit is %d: %w", where, len(t.Entries), f.lim.MaxEntries, ErrTreeTooLarge)
	}
	if err := f.build(t.Entries); err != nil {
		return nil, fmt.Errorf("%s: %w", where, err)
	}
	f.archiveAfter = int64(max(f.lim.ArchiveOver/4, len(t.Entries)/100))
	if f.lim.Trees != nil {
		f.kept = f.lim.Trees.spoolOf(repoName(owner, repo))
	}
	if f.archive = f.preferArchive(t); f.archive && f.lim.Trees == nil {
		f.archiveOnce.Do(func() { _ = f.loadArchive() })
	}
	return f, nil
}

// listing lists the commit's tree whole: through the TreeCache when
// there is one, else with one recursive listing, read level by level
// when GitHub truncates it.
func (f *CommitFS) listing(ctx context.Context, where string) (Tree, error) {
	c, owner, repo, sha := f.c, f.owner, f.repo, f.sha
	if f.lim.Trees != nil {
		return f.lim.Trees.cachedListing(ctx, c, owner, repo, sha, f.lim, &f.requests, where)
	}
	f.requests.Add(1)
	t, err := c.listTree(ctx, owner, repo, sha, true, f.lim.MaxEntries)
	if err != nil {
		return Tree{}, err
	}
	if t.Truncated {
		// The tree the listing names (not sha again: a branch may move).
		w := c.newTreeWalk(ctx, owner, repo, where+", read level by level as github truncated its listing", f.lim)
		t.Entries = nil
		err := w.all(t.SHA, "", &t.Entries)
		f.requests.Add(w.requests)
		if err != nil {
			return Tree{}, err
		}
	}
	return t, nil
}

// build makes the FS's nodes from the tree's entries (submodules left out).
func (f *CommitFS) build(entries []TreeEntry) error {
	for _, e := range entries {
		n := &node{name: strings.Clone(path.Base(e.Path)), sha: e.SHA, size: e.Size} // not the whole path's bytes
		switch {
		case e.Type == "commit":
			continue // a submodule: its files are another repository's
		case e.Type == "tree":
			n.kind = kindDir
		case e.Type == "blob" && e.Mode == ModeSymlink:
			n.kind = kindSymlink
		case e.Type == "blob":
			n.kind, n.exec = kindFile, e.Mode == ModeExecutable
		default:
			return fmt.Errorf("entry %q of unknown type %q", e.Path, e.Type)
		}
		if err := f.add(e.Path, n); err != nil {
			return err
		}
	}
	f.root.sortAll()
	return nil
}

// preferArchive says whether the caller wants more files of the tree than
// the archive threshold.
func (f *CommitFS) preferArchive(t Tree) bool {
	if f.lim.ArchiveOver <= 0 || f.lim.Wanted == nil {
		return false
	}
	n := 0
	for _, e := range t.Entries {
		if e.Type == "blob" && e.Mode != ModeSymlink && f.lim.Wanted(e.Path) {
			if n++; n > f.lim.ArchiveOver {
				return true
			}
		}
	}
	return false
}

// add puts n at p, creating the directories above it; an invalid path, a
// path given twice or a file where a directory should be is an error.
func (f *CommitFS) add(p string, n *node) error {
	if !fs.ValidPath(p) || p == "." {
		return fmt.Errorf("invalid path %q", p)
	}
	dir := f.root
	elems := strings.Split(p, "/")
	for _, el := range elems[:len(elems)-1] {
		next := dir.kids[el]
		if next == nil {
			next = newDir(el)
			dir.kids[el] = next
		}
		if next.kind != kindDir {
			return fmt.Errorf("%q: %q is not a directory", p, el)
		}
		dir = next
	}
	if old := dir.kids[n.name]; old != nil {
		if old.kind == kindDir && n.kind == kindDir {
			return nil // listed after a path beneath it
		}
		return fmt.Errorf("%q listed twice", p)
	}
	if n.kind == kindDir && n.kids == nil {
		n.kids = map[string]*node{}
	}
	dir.kids[n.name] = n
	return nil
}

func newDir(name string) *node { return &node{name: name, kind: kindDir, kids: map[string]*node{}} }

// sortAll lists every directory's children in name order.
func (n *node) sortAll() {
	n.children = slices.SortedFunc(maps.Values(n.kids), func(a, b *node) int { return strings.Compare(a.name, b.name) })
	for _, c := range n.children {
		if c.kind == kindDir {
			c.sortAll()
		}
	}
}

func (f *CommitFS) Stats() FSStats {
	return FSStats{Requests: f.requests.Load(), Blobs: f.blobs.Load(), Bytes: f.bytes.Load(),
		ArchiveBytes: f.archiveBytes.Load(), FromArchive: f.fromArchive.Load()}
}

// reserve counts n more bytes held, refused past MaxTotalBytes.
func (f *CommitFS) reserve(n int64) error {
	limit := f.lim.MaxTotalBytes
	f.budgetMu.Lock()
	defer f.budgetMu.Unlock()
	if f.fetched+n > limit {
		return fmt.Errorf("fetching %d more bytes would pass the %d fetched in all: %w", n, limit, ErrTreeTooLarge)
	}
	f.fetched += n
	return nil
}

func (f *CommitFS) release(n int64) {
	f.budgetMu.Lock()
	f.fetched -= n
	f.budgetMu.Unlock()
}

// load returns a file's head (at most MaxFileBytes) or a symlink's target,
// from the spool or fetching its blob the first time.
func (f *CommitFS) load(n *node) ([]byte, error) {
	n.mu.Lock()
	if n.loaded || n.spooled {
		defer n.mu.Unlock()
		return f.held(n)
	}
	if data, ok := f.cachedBlob(n); ok {
		defer n.mu.Unlock()
		if err := f.reserve(int64(len(data))); err != nil {
			return nil, err
		}
		n.data, n.loaded = data, true
		return data, nil
	}
	if f.kept != nil {
		data, ok, err := f.fromKept(n)
		if ok || err != nil {
			defer n.mu.Unlock()
			n.data, n.loaded = data, ok
			return data, err
		}
	}
	n.mu.Unlock()
	if f.archive && f.misses.Add(1) > f.archiveAfter {
		// Only a shortcut: what it could not fill (within its limits,
		// verified) is fetched blob by blob, as listed. No node's lock
		// is held here: the archive takes each node's as it fills it.
		f.archiveOnce.Do(func() { _ = f.loadArchive() })
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.loaded || n.spooled {
		return f.held(n)
	}
	want := min(n.size, f.lim.MaxFileBytes)
	if n.kind == kindSymlink && n.size > maxLinkTarget {
		return nil, fmt.Errorf("symlink target of %d bytes, the limit is %d: %w", n.size, maxLinkTarget, ErrTooLarge)
	}
	if err := f.reserve(want); err != nil {
		return nil, err
	}
	f.requests.Add(1)
	data, err := f.c.blobHead(f.ctx, f.owner, f.repo, n.sha, want)
	if err == nil && int64(len(data)) != want {
		err = fmt.Errorf("blob %s has %d bytes, the tree lists %d", n.sha, len(data), n.size)
	}
	if err != nil {
		f.release(want)
		return nil, err
	}
	f.blobs.Add(1)
	f.bytes.Add(want)
	n.data, n.loaded = data, true
	if want == n.size && f.lim.Trees != nil && n.kind == kindFile {
		f.lim.Trees.keepBlob(repoName(f.owner, f.repo), n.sha, data)
	}
	return data, nil
}

// held is what n holds, read from the spool if need be; n's lock is held.
func (f *CommitFS) held(n *node) ([]byte, error) {
	if n.loaded {
		return n.data, nil
	}
	return f.fromSpool(n)
}

// cachedBlob is a file's head (at most MaxFileBytes) from the TreeCache's
// whole blobs, which the listing's id and size name exactly.
func (f *CommitFS) cachedBlob(n *node) ([]byte, bool) {
	if f.lim.Trees == nil || n.kind != kindFile {
		return nil, false
	}
	data, ok := f.lim.Trees.blobs.Get(treeKey{repoName(f.owner, f.repo), n.sha})
	if !ok || int64(len(data)) != n.size {
		return nil, false
	}
	return data[:min(n.size, f.lim.MaxFileBytes)], true
}

// resolve finds the node of name, following symlinks in every element but
// the last, and in the last too when follow is set.
func (f *CommitFS) resolve(op, name string, follow bool) (*node, error) {
	if !fs.ValidPath(name) {
		return nil, &fs.PathError{Op: op, Path: name, Err: fs.ErrInvalid}
	}
	stack := []*node{f.root} // the directories from the root down
	var todo []string
	if name != "." {
		todo = strings.Split(name, "/")
	}
	for hops := 0; len(todo) > 0; {
		el := todo[0]
		todo = todo[1:]
		cur := stack[len(stack)-1]
		switch el {
		case "", ".":
			continue
		case "..":
			if len(stack) == 1 {
				return nil, &fs.PathError{Op: op, Path: name, Err: fs.ErrNotExist} // above the root
			}
			stack = stack[:len(stack)-1]
			continue
		}
		var next *node
		if cur.kind == kindDir {
			next = cur.kids[el]
		}
		if next == nil {
			return nil, &fs.PathError{Op: op, Path: name, Err: fs.ErrNotExist}
		}
		if next.kind == kindSymlink && (len(todo) > 0 || follow) {
			if hops++; hops > maxLinkHops {
				return nil, &fs.PathError{Op: op, Path: name, Err: errors.New("too many levels of symbolic links")}
			}
			target, err := f.load(next)
			if err != nil {
				return nil, &fs.PathError{Op: op, Path: name, Err: err}
			}
			if len(target) == 0 || target[0] == '/' {
				return nil, &fs.PathError{Op: op, Path: name, Err: fs.ErrNotExist} // outside the tree
			}
			todo = append(strings.Split(string(target), "/"), todo...)
			continue
		}
		stack = append(stack, next)
	}
	return stack[len(stack)-1], nil
}

// Open opens a file or directory, following symlinks.
func (f *CommitFS) Open(name string) (fs.File, error) {
	n, err := f.resolve("open", name, true)
	if err != nil {
		return nil, err
	}
	if n.kind == kindDir {
		return &dirHandle{n: n, name: name}, nil
	}
	n.mu.Lock()
	n.open++
	n.mu.Unlock()
	return &fileHandle{f: f, n: n, name: name}, nil
}

// closed is a file handle's end: with a TreeCache, or when the spool
// holds it, a file no handle has open any more gives its bytes back to
// MaxTotalBytes (the cache or the spool may still hold it), so what a
// commit holds at once, not what it read in all, is bounded.
func (f *CommitFS) closed(n *node) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.open--; n.open > 0 || (f.lim.Trees == nil && !n.spooled) || !n.loaded {
		return
	}
	f.release(int64(len(n.data)))
	n.data, n.loaded = nil, false
}

// Stat describes a file, following symlinks.
func (f *CommitFS) Stat(name string) (fs.FileInfo, error) { return f.stat("stat", name, true) }

// Lstat describes a file without following a final symlink.
func (f *CommitFS) Lstat(name string) (fs.FileInfo, error) { return f.stat("lstat", name, false) }

func (f *CommitFS) stat(op, name string, follow bool) (fs.FileInfo, error) {
	n, err := f.resolve(op, name, follow)
	if err != nil {
		return nil, err
	}
	return info{n}, nil
}

// ReadLink returns a symlink's target (its blob), as written.
func (f *CommitFS) ReadLink(name string) (string, error) {
	n, err := f.resolve("readlink", name, false)
	if err != nil {
		return "", err
	}
	if n.kind != kindSymlink {
		return "", &fs.PathError{Op: "readlink", Path: name, Err: fs.ErrInvalid}
	}
	target, err := f.load(n)
	if err != nil {
		return "", &fs.PathError{Op: "readlink", Path: name, Err: err}
	}
	return string(target), nil
}

// ObjectID is the git object id of the entry at name (with follow, of
// what a final symlink leads to): "blob <sha>", "tree <sha>" or
// "link <sha>", from the tree listing (nothing is fetched but the
// targets of symlinks in the way). It makes CommitFS a check.IDFS.
func (f *CommitFS) ObjectID(name string, follow bool) (string, error) {
	n, err := f.resolve("objectid", name, follow)
	if err != nil {
		return "", err
	}
	return [...]string{kindDir: "tree ", kindFile: "blob ", kindSymlink: "link "}[n.kind] + n.sha, nil
}

// ReadDir lists a directory, sorted by name, following symlinks.
func (f *CommitFS) ReadDir(name string) ([]fs.DirEntry, error) {
	n, err := f.resolve("readdir", name, true)
	if err != nil {
		return nil, err
	}
	if n.kind != kindDir {
		return nil, &fs.PathError{Op: "readdir", Path: name, Err: errors.New("not a directory")}
	}
	return (&dirHandle{n: n}).ReadDir(-1)
}

type info struct{ n *node }

func (i info) Name() string       { return i.n.name }
func (i info) Size() int64        { return i.n.size }
func (i info) ModTime() time.Time { return time.Time{} }
func (i info) IsDir() bool        { return i.n.kind == kindDir }
func (i info) Sys() any           { return nil }
func (i info) Mode() fs.FileMode {
	switch {
	case i.n.kind == kindDir:
		return fs.ModeDir | 0o755
	case i.n.kind == kindSymlink:
		return fs.ModeSymlink | 0o777
	case i.n.exec:
		return 0o755
	}
	return 0o644
}

// fileHandle is an open file; its blob is fetched on the first Read.
type fileHandle struct {
	f      *CommitFS
	n      *node
	name   string
	off    int64
	closed bool
}

func (h *fileHandle) Stat() (fs.FileInfo, error) { return info{h.n}, nil }

func (h *fileHandle) Read(p []byte) (int, error) {
	if h.closed {
		return 0, &fs.PathError{Op: "read", Path: h.name, Err: fs.ErrClosed}
	}
	if h.off >= h.n.size {
		return 0, io.EOF
	}
	data, err := h.f.load(h.n)
	if err != nil {
		return 0, &fs.PathError{Op: "read", Path: h.name, Err: err}
	}
	if h.off >= int64(len(data)) {
		return 0, &fs.PathError{Op: "read", Path: h.name, Err: fmt.Errorf("only the first %d of its %d bytes are read: %w",
			len(data), h.n.size, ErrTooLarge)}
	}
	n := copy(p, data[h.off:])
	h.off += int64(n)
	return n, nil
}

func (h *fileHandle) Close() error {
	if h.closed {
		return &fs.PathError{Op: "close", Path: h.name, Err: fs.ErrClosed}
	}
	h.closed = true
	h.f.closed(h.n)
	return nil
}

type dirHandle struct {
	n    *node
	name string
	off  int
}

func (d *dirHandle) Stat() (fs.FileInfo, error) { return info{d.n}, nil }

func (d *dirHandle) Read([]byte) (int, error) {
	return 0, &fs.PathError{Op: "read", Path: d.name, Err: errors.New("is a directory")}
}

func (d *dirHandle) Close() error { return nil }

// ReadDir lists the directory's entries in order, n at a time (all when
// n <= 0), as fs.ReadDirFile requires.
func (d *dirHandle) ReadDir(n int) ([]fs.DirEntry, error) {
	rest := d.n.children[d.off:]
	if n > 0 && len(rest) == 0 {
		return nil, io.EOF
	}
	if n > 0 && n < len(rest) {
		rest = rest[:n]
	}
	d.off += len(rest)
	out := make([]fs.DirEntry, len(rest))
	for i, c := range rest {
		out[i] = fs.FileInfoToDirEntry(info{c})
	}
	return out, nil
}
