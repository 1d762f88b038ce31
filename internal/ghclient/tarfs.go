package ghclient

import (
	"archive/tar"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"strings"
	"sync/atomic"
)

// loadArchive fills f from the commit's tarball, for a tree listing GitHub
// truncated: regular files (their first MaxFileBytes bytes) and symlinks,
// read whole into memory within f's limits.
func (f *CommitFS) loadArchive() error {
	f.fromArchive = true
	f.requests.Add(2) // the redirect and the download
	rc, err := f.c.Archive(f.ctx, f.owner, f.repo, f.sha, f.lim.MaxArchiveBytes)
	if err == nil {
		err = f.readTarGz(&countingReader{r: rc, n: &f.archiveBytes})
		rc.Close()
	}
	if err != nil && !errors.Is(err, ErrTreeTooLarge) {
		err = fmt.Errorf("%w: %w", err, ErrTreeTooLarge)
	}
	return err
}

func (f *CommitFS) readTarGz(r io.Reader) error {
	zr, err := gzip.NewReader(r)
	if err != nil {
		return fmt.Errorf("decompress the archive: %w", err)
	}
	if err := f.readTar(zr); err != nil {
		return err
	}
	f.root.dropSubmodules()
	f.root.sortAll()
	return nil
}

// dropSubmodules removes the empty directories git archive writes for
// submodules (a git tree has no other empty directory), as the tree listing
// leaves submodules out. It does not cascade: a directory that held only a
// submodule stays, as it does in the listing.
func (n *node) dropSubmodules() {
	for name, c := range n.kids {
		if c.kind == kindDir && len(c.kids) == 0 {
			delete(n.kids, name)
		}
	}
	for _, c := range n.kids {
		if c.kind == kindDir {
			c.dropSubmodules()
		}
	}
}

// readTar reads an archive in GitHub's layout — every entry under one top
// directory — into f. The archive is untrusted: a name that is not a
// clean relative path under the top directory, a name given twice, or an
// entry beneath a file or symlink is an error, so nothing lands outside the
// tree; only directories, regular files and symlinks are kept; the
// uncompressed stream is bounded by MaxArchiveBytes, the entries by
// MaxEntries, and the bytes kept by MaxFileBytes per file and MaxTotalBytes
// in all.
func (f *CommitFS) readTar(r io.Reader) error {
	tr := tar.NewReader(&capReader{rc: io.NopCloser(r), left: f.lim.MaxArchiveBytes, max: f.lim.MaxArchiveBytes,
		what: "the uncompressed archive"})
	top, entries := "", 0
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
		if err != nil || rel == "" {
			if err != nil {
				return err
			}
			continue // the top directory itself
		}
		if entries++; entries > f.lim.MaxEntries {
			return fmt.Errorf("the archive has over %d entries: %w", f.lim.MaxEntries, ErrTreeTooLarge)
		}
		n, err := f.archiveNode(tr, h, path.Base(rel))
		if err != nil {
			return fmt.Errorf("archive entry %q: %w", h.Name, err)
		}
		if n == nil {
			continue
		}
		if err := f.add(rel, n); err != nil {
			return fmt.Errorf("archive entry %q: %w", h.Name, err)
		}
	}
}

// archiveNode makes the node of one archive entry, reading what is kept of
// its content; nil for an entry of a type a git tree does not have.
func (f *CommitFS) archiveNode(tr *tar.Reader, h *tar.Header, name string) (*node, error) {
	switch h.Typeflag {
	case tar.TypeDir:
		return newDir(name), nil
	case tar.TypeReg:
		keep := min(h.Size, f.lim.MaxFileBytes)
		if err := f.reserve(keep); err != nil {
			return nil, err
		}
		data := make([]byte, keep)
		if _, err := io.ReadFull(tr, data); err != nil {
			return nil, err
		}
		f.bytes.Add(keep)
		return &node{name: name, kind: kindFile, exec: h.Mode&0o111 != 0, size: h.Size, loaded: true, data: data}, nil
	case tar.TypeSymlink:
		if len(h.Linkname) > maxLinkTarget {
			return nil, fmt.Errorf("symlink target of %d bytes, the limit is %d: %w", len(h.Linkname), maxLinkTarget, ErrTooLarge)
		}
		if err := f.reserve(int64(len(h.Linkname))); err != nil {
			return nil, err
		}
		f.bytes.Add(int64(len(h.Linkname)))
		return &node{name: name, kind: kindSymlink, size: int64(len(h.Linkname)), loaded: true, data: []byte(h.Linkname)}, nil
	}
	return nil, nil // hard links, devices, fifos: never in a git tree
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
