package ghclient

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"

	"github.com/google/go-github/v60/github"
)

// ErrTooLarge is wrapped by the error of a read that would go past the
// limit its caller set: an archive (Archive), or the rest of
// a file larger than a CommitFS's MaxFileBytes.
var ErrTooLarge = errors.New("over the size limit")

// ErrTreeTooLarge is wrapped by the error of a CommitFS that cannot show a
// commit's files whole within its TreeLimits: too many entries, more bytes
// than MaxTotalBytes, or a truncated tree listing whose archive could not be
// read either. A caller fails its check on it: the FS never serves a
// partial tree.
var ErrTreeTooLarge = errors.New("the commit's tree is too large to read within the limits")

// Git modes of tree entries.
const (
	ModeFile       = "100644"
	ModeExecutable = "100755"
	ModeSymlink    = "120000"
	ModeDir        = "040000"
	ModeSubmodule  = "160000"
)

// TreeEntry is one entry of a git tree listing.
type TreeEntry struct {
	Path string // slash-separated, relative to the root of the tree
	Mode string // ModeFile, ModeExecutable, ModeSymlink, ModeDir or ModeSubmodule
	Type string // blob (files and symlinks), tree or commit (a submodule)
	SHA  string
	Size int64 // blobs only
}

// Tree is a recursive listing of a commit's tree.
type Tree struct {
	SHA     string // the tree's SHA
	Entries []TreeEntry
	// Truncated is GitHub's word that the listing is incomplete (over
	// 100,000 entries or 7 MB): Entries are then only the first ones.
	Truncated bool
}

// Tree lists the tree of sha (a commit, a tree or a branch), recursively:
// GET /repos/{o}/{r}/git/trees/{sha}?recursive=1. A listing GitHub cut says
// Truncated.
func (c *Client) Tree(ctx context.Context, owner, repo, sha string) (Tree, error) {
	ctx = withOp(ctx, "Tree")
	t, _, err := c.gh.Git.GetTree(ctx, owner, repo, sha, true)
	if err != nil {
		return Tree{}, fmt.Errorf("list the tree of %s@%s: %w", repoName(owner, repo), sha, err)
	}
	entries := convert(t.Entries, func(e *github.TreeEntry) TreeEntry {
		return TreeEntry{Path: e.GetPath(), Mode: e.GetMode(), Type: e.GetType(), SHA: e.GetSHA(), Size: int64(e.GetSize())}
	})
	return Tree{SHA: t.GetSHA(), Truncated: t.GetTruncated(), Entries: entries}, nil
}

// Archive opens the gzip-compressed tarball of a commit: GET
// /repos/{o}/{r}/tarball/{sha}, which GitHub answers with a redirect to
// codeload, followed here (the token is not sent there: the redirect's URL
// carries its own). The body is streamed, not buffered: reading more than
// max bytes fails with an error wrapping ErrTooLarge (at once when the
// length is announced), and a read that makes no progress within
// Options.AttemptTimeout fails. Close it.
func (c *Client) Archive(ctx context.Context, owner, repo, sha string, max int64) (io.ReadCloser, error) {
	where := fmt.Sprintf("download the archive of %s@%s", repoName(owner, repo), sha)
	resp, err := c.stream(withOp(ctx, "Archive"), fmt.Sprintf("repos/%s/%s/tarball/%s",
		url.PathEscape(owner), url.PathEscape(repo), url.PathEscape(sha)), "")
	if err != nil {
		return nil, fmt.Errorf("%s: %w", where, err)
	}
	if resp.ContentLength > max {
		resp.Body.Close()
		return nil, fmt.Errorf("%s: %d bytes, the limit is %d: %w", where, resp.ContentLength, max, ErrTooLarge)
	}
	return &capReader{rc: resp.Body, left: max, max: max, what: where}, nil
}

// blobHead reads the first n bytes of a blob, raw and streamed: the rest is
// never downloaded.
func (c *Client) blobHead(ctx context.Context, owner, repo, sha string, n int64) ([]byte, error) {
	where := fmt.Sprintf("read blob %s of %s", sha, repoName(owner, repo))
	resp, err := c.stream(withOp(ctx, "Blob"), fmt.Sprintf("repos/%s/%s/git/blobs/%s",
		url.PathEscape(owner), url.PathEscape(repo), url.PathEscape(sha)), "application/vnd.github.raw+json")
	if err != nil {
		return nil, fmt.Errorf("%s: %w", where, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, n))
	return data, wrapf(err, "%s", where)
}

// stream sends a GET whose successful body the caller reads and closes.
func (c *Client) stream(ctx context.Context, u, accept string) (*github.Response, error) {
	req, err := c.gh.NewRequest("GET", u, nil)
	if err != nil {
		return nil, err
	}
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	return c.gh.BareDo(streaming(ctx), req)
}

// capReader fails a read past max bytes with ErrTooLarge.
type capReader struct {
	rc        io.ReadCloser
	left, max int64
	what      string
}

func (r *capReader) Read(p []byte) (int, error) {
	if r.left < 0 {
		return 0, fmt.Errorf("%s: over %d bytes: %w", r.what, r.max, ErrTooLarge)
	}
	if int64(len(p)) > r.left+1 {
		p = p[:r.left+1]
	}
	n, err := r.rc.Read(p)
	r.left -= int64(n)
	if r.left < 0 {
		return n - int(-r.left), fmt.Errorf("%s: over %d bytes: %w", r.what, r.max, ErrTooLarge)
	}
	return n, err
}

func (r *capReader) Close() error { return r.rc.Close() }
