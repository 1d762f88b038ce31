package ghclient

import (
	"context"
	"encoding/json"
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
	return c.listTree(ctx, owner, repo, sha, true, DefaultMaxTreeEntries)
}

// listTree reads GET git/trees/{sha} (recursive: ?recursive=1), decoding
// its entries one at a time as they arrive, never the whole response nor
// a copy of it in GitHub's shape (a recursive listing of 100,000 entries
// is tens of megabytes of JSON); over max entries is an error wrapping
// ErrTreeTooLarge.
func (c *Client) listTree(ctx context.Context, owner, repo, sha string, recursive bool, max int) (Tree, error) {
	where := fmt.Sprintf("list the tree of %s@%s", repoName(owner, repo), sha)
	u := fmt.Sprintf("repos/%s/%s/git/trees/%s", url.PathEscape(owner), url.PathEscape(repo), url.PathEscape(sha))
	if recursive {
		u += "?recursive=1"
	}
	resp, err := c.stream(withOp(ctx, "Tree"), u, "")
	if err != nil {
		return Tree{}, fmt.Errorf("%s: %w", where, err)
	}
	defer resp.Body.Close()
	t, err := decodeTree(resp.Body, max)
	return t, wrapf(err, "%s", where)
}

// decodeTree decodes a tree listing (GitHub's JSON) an entry at a time,
// at most max entries.
func decodeTree(r io.Reader, max int) (Tree, error) {
	var t Tree
	dec := json.NewDecoder(r)
	err := jsonObject(dec, func(key string) error {
		switch key {
		case "sha":
			return dec.Decode(&t.SHA)
		case "truncated":
			return dec.Decode(&t.Truncated)
		case "tree":
			return jsonArray(dec, func() error {
				var e struct {
					Path, Mode, Type, SHA string
					Size                  int64
				}
				if len(t.Entries) >= max {
					return fmt.Errorf("over %d entries, the limit is MaxEntries %d: %w", max, max, ErrTreeTooLarge)
				}
				if err := dec.Decode(&e); err != nil {
					return err
				}
				e.Mode, e.Type = intern(e.Mode), intern(e.Type) // a few values, held once
				t.Entries = append(t.Entries, TreeEntry(e))
				return nil
			})
		}
		var skip json.RawMessage
		return dec.Decode(&skip)
	})
	return t, err
}

// interned are the values of a tree entry's mode and type.
var interned = map[string]string{ModeFile: ModeFile, ModeExecutable: ModeExecutable, ModeSymlink: ModeSymlink,
	ModeDir: ModeDir, ModeSubmodule: ModeSubmodule, "blob": "blob", "tree": "tree", "commit": "commit"}

// intern is s, shared when it is one of the interned values.
func intern(s string) string {
	if v, ok := interned[s]; ok {
		return v
	}
	return s
}

// jsonObject reads a JSON object from dec, calling value for each key to
// decode what follows it.
func jsonObject(dec *json.Decoder, value func(key string) error) error {
	if err := jsonDelim(dec, '{'); err != nil {
		return err
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		if err := value(tok.(string)); err != nil { // a key: the decoder checks the syntax
			return err
		}
	}
	return jsonDelim(dec, '}')
}

// jsonArray reads a JSON array from dec, calling item to decode each.
func jsonArray(dec *json.Decoder, item func() error) error {
	if err := jsonDelim(dec, '['); err != nil {
		return err
	}
	for dec.More() {
		if err := item(); err != nil {
			return err
		}
	}
	return jsonDelim(dec, ']')
}

func jsonDelim(dec *json.Decoder, want json.Delim) error {
	tok, err := dec.Token()
	if err == nil && tok != want {
		err = fmt.Errorf("%v where %v was expected", tok, want)
	}
	return err
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
