package ghclient

import (
	"archive/tar"
	"compress/gzip"
	"crypto/sha1"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"
	"sync/atomic"
)

// loadArchive reads the commit's tarball (two requests) to fill the listed
// files' contents instead of one request per blob. The archive never
// decides what the tree holds: GitHub builds it with git archive, which
// obeys the commit's own .gitattributes (export-ignore leaves files out,
// export-subst rewrites them). Only an entry at a path the listing has as
// a file or symlink, of that type, whose git blob id is the listed one is
// kept (in the spool); anything else is ignored, and what the archive did
// not fill is fetched as a blob when it is read.
func (f *CommitFS) loadArchive() error {
	f.requests.Add(2) // the redirect and the download
	rc, err := f.c.Archive(f.ctx, f.owner, f.repo, f.sha, f.lim.MaxArchiveBytes)
	if err != nil {
		return err
	}
	defer rc.Close()
	if err := f.readTarGz(&countingReader{r: rc, n: &f.archiveBytes}); err != nil {
		return err
	}
	f.fromArchive.Store(true)
	return nil
}

func (f *CommitFS) readTarGz(r io.Reader) error {
	zr, err := gzip.NewReader(r)
	if err != nil {
		return fmt.Errorf("decompress the archive: %w", err)
	}
	return f.readTar(zr)
}

// readTar reads an archive in GitHub's layout — every entry under one top
// directory — and spools the listed files and symlinks it verifies (fill).
// The archive is untrusted: a name that is not a clean relative path under
// the top directory is an error; the uncompressed stream is bounded by
// MaxArchiveBytes (and so is the spool), the entries by MaxEntries, and
// the bytes kept by MaxFileBytes per file. Every listed file it verifies
// is kept, wanted or not: the checker reads other files too (a unit's
// companions), and disk, not memory, holds them.
func (f *CommitFS) readTar(r io.Reader) error {
	if err := f.openSpool(); err != nil {
		return err
	}
	tr := tar.NewReader(&capReader{rc: io.NopCloser(r), left: f.lim.MaxArchiveBytes, max: f.lim.MaxArchiveBytes,
		what: "the uncompressed archive"})
	top, entries, buf := "", 0, make([]byte, 32<<10)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("read the archive: %w", err)
		}
		if h.Typeflag == tar.TypeXGlobalHeader {
			continue // git archive's: the commit id
		}
		rel, err := archivePath(h.Name, &top)
		if err != nil {
			return err
		}
		if entries++; entries > f.lim.MaxEntries {
			return fmt.Errorf("the archive has over %d entries: %w", f.lim.MaxEntries, ErrTreeTooLarge)
		}
		n := f.listed(rel)
		if n == nil {
			continue // not in the listing: ignored
		}
		if err := f.fillLocked(n, tr, h, buf); err != nil {
			return fmt.Errorf("archive entry %q: %w", h.Name, err)
		}
	}
}

// listed finds the file or symlink the listing has at p, following no
// symlink; nil when there is none.
func (f *CommitFS) listed(p string) *node {
	n := f.root
	for _, el := range strings.Split(p, "/") {
		if n.kind != kindDir {
			return nil
		}
		if n = n.kids[el]; n == nil {
			return nil
		}
	}
	if n.kind == kindDir {
		return nil
	}
	return n
}

// fillLocked is fill under n's lock, for a node not loaded yet.
func (f *CommitFS) fillLocked(n *node, tr *tar.Reader, h *tar.Header, buf []byte) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.loaded || n.spooled {
		return nil
	}
	return f.fill(n, tr, h, buf)
}

// fill spools the content of archive entry h for listed node n when the
// entry is of n's type and size and its git blob id — the SHA-1 of
// "blob <size>\x00" and the whole content, though only the first
// MaxFileBytes are kept — is n's; otherwise n is left to its blob. What
// is written before the id is known is overwritten by the next entry.
func (f *CommitFS) fill(n *node, tr *tar.Reader, h *tar.Header, buf []byte) error {
	var content io.Reader
	size := h.Size
	switch {
	case n.kind == kindFile && h.Typeflag == tar.TypeReg:
		content = tr
	case n.kind == kindSymlink && h.Typeflag == tar.TypeSymlink && len(h.Linkname) <= maxLinkTarget:
		content, size = strings.NewReader(h.Linkname), int64(len(h.Linkname))
	default:
		return nil
	}
	if size != n.size {
		return nil
	}
	keep := min(size, f.lim.MaxFileBytes)
	id := sha1.New()
	fmt.Fprintf(id, "blob %d\x00", size)
	// One buffer for every entry: io.Copy would make one per call.
	_, err := io.CopyBuffer(io.MultiWriter(id, io.NewOffsetWriter(f.spool, f.spoolEnd)), io.LimitReader(content, keep), buf)
	if err == nil {
		_, err = io.CopyBuffer(id, content, buf)
	}
	if err != nil || hex.EncodeToString(id.Sum(nil)) != n.sha {
		return err
	}
	f.bytes.Add(keep)
	n.off, n.spooled = f.spoolEnd, true
	f.spoolEnd += keep
	return nil
}

// openSpool makes the spool: a temporary file, removed at once where the
// system allows (it lives while it is open), else by Close.
func (f *CommitFS) openSpool() error {
	if f.spool != nil {
		return nil
	}
	sp, err := os.CreateTemp("", "phasegate-archive-*")
	if err != nil {
		return fmt.Errorf("spool the archive: %w", err)
	}
	f.spool = sp
	if os.Remove(sp.Name()) != nil {
		f.spoolName = sp.Name()
	}
	return nil
}

// fromSpool reads a spooled node's kept bytes, counted against
// MaxTotalBytes until the node is given back.
func (f *CommitFS) fromSpool(n *node) ([]byte, error) {
	want := min(n.size, f.lim.MaxFileBytes)
	if err := f.reserve(want); err != nil {
		return nil, err
	}
	data := make([]byte, want)
	if _, err := f.spool.ReadAt(data, n.off); err != nil {
		f.release(want)
		return nil, fmt.Errorf("read %s from the spooled archive: %w", n.sha, err)
	}
	n.data, n.loaded = data, true
	return data, nil
}

// Close ends the FS: the archive is not read any more, and its spool is
// closed and removed, or, with a TreeCache, kept there for the
// repository's later commits. Reads of files not held fail after it.
func (f *CommitFS) Close() error {
	f.archiveOnce.Do(func() {}) // no archive read after, and none under way
	var err error
	if f.kept != nil {
		err, f.kept = f.lim.Trees.releaseSpool(f.kept), nil
	}
	if f.spool == nil {
		return err
	}
	if f.lim.Trees != nil {
		f.handOver()
		f.spool = nil
		return err
	}
	err = errors.Join(err, f.spool.Close())
	if f.spoolName != "" {
		err = errors.Join(err, os.Remove(f.spoolName))
	}
	return err
}

// archivePath maps an archive name to a path of the tree: it must lie
// under the one top directory every entry shares; "" is that directory.
func archivePath(name string, top *string) (string, error) {
	first, rest, _ := strings.Cut(name, "/")
	if first == "" || first == "." || first == ".." {
		return "", fmt.Errorf("archive entry %q is not under a top directory", name)
	}
	if *top == "" {
		*top = first
	} else if first != *top {
		return "", fmt.Errorf("archive entry %q is not under %q", name, *top)
	}
	rest = strings.TrimSuffix(rest, "/")
	if rest == "" {
		return "", nil
	}
	if !fs.ValidPath(rest) {
		return "", fmt.Errorf("archive entry %q: invalid path", name)
	}
	return rest, nil
}

// countingReader counts the bytes read through it.
type countingReader struct {
	r io.Reader
	n *atomic.Int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n.Add(int64(n))
	return n, err
}
