package ghfake

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha1"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io/fs"
	"net/url"
	"sort"
	"strings"
	"time"
)

// Git tree modes as GitHub's tree API shows them.
const (
	ModeFile       = "100644"
	ModeExecutable = "100755"
	ModeSymlink    = "120000"
	ModeSubmodule  = "160000"
	ModeDir        = "040000"
)

// GitHub's limits on a recursive tree listing: beyond either, the listing
// is cut and says "truncated": true.
const (
	DefaultTreeMaxEntries = 100000
	DefaultTreeMaxBytes   = 7 << 20
)

// TreeFile is one entry of a commit's file set (SetTree).
type TreeFile struct {
	// Path is slash-separated and relative (no ".", ".." or empty
	// element); directories are implied by the paths under them.
	Path string
	// Content is a file's content, or a symlink's target.
	Content []byte
	// Mode is ModeFile (the default), ModeExecutable, ModeSymlink or
	// ModeSubmodule.
	Mode string
	// Commit is a submodule's commit SHA (ModeSubmodule only).
	Commit string
}

// gitTree is a git tree object: its entries in git's order.
type gitTree struct {
	entries []treeEntry
}

type treeEntry struct {
	name, mode, typ, sha string
	size                 int // blobs only
}

// dirBuild is a directory being assembled by SetTree.
type dirBuild struct {
	dirs   map[string]*dirBuild
	leaves map[string]treeEntry
}

// SetTree sets the full file set of commit sha — regular and executable
// files, symlinks (Content is the target) and submodules — and returns the
// SHA of its root tree. Tree and blob SHAs are git's, so a test can compare
// them with `git hash-object` / `git write-tree`. The commit's tree is then
// served by GET git/trees/{sha} (by commit, tree or branch), its blobs by GET
// git/blobs/{sha}, its archive by GET tarball/{ref}, and its regular files by
// the contents API at ref sha. A malformed file set panics (a test bug).
func (s *Server) SetTree(owner, name, sha string, files []TreeFile) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.repoLocked(owner, name)
	root := &dirBuild{dirs: map[string]*dirBuild{}, leaves: map[string]treeEntry{}}
	contents := map[string][]byte{}
	for _, f := range files {
		e := leafOf(f)
		if e.typ == "blob" {
			blob := bytes.Clone(f.Content)
			r.blobs[e.sha] = blob
			if e.mode != ModeSymlink {
				contents[f.Path] = blob // never written to: one copy serves both
			}
		}
		root.insert(f.Path, e)
	}
	treeSHA := r.storeTree(root)
	r.commitTrees[sha] = treeSHA
	delete(r.derived, sha)
	r.files[sha] = contents
	return treeSHA
}

// SetTreeFiles is SetTree for regular files only: path → content.
func (s *Server) SetTreeFiles(owner, name, sha string, files map[string]string) string {
	list := make([]TreeFile, 0, len(files))
	for p, c := range files {
		list = append(list, TreeFile{Path: p, Content: []byte(c)})
	}
	return s.SetTree(owner, name, sha, list)
}

// SetTreeTruncation sets where a recursive tree listing is cut (entries,
// and bytes of JSON entries); zero or less restores GitHub's 100,000
// entries and 7 MB. A non-recursive listing (one tree's entries, what
// GitHub says to read when the recursive one is cut) is cut at GitHub's
// limits only.
func (s *Server) SetTreeTruncation(maxEntries, maxBytes int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.treeMaxEntries, s.treeMaxBytes = maxEntries, maxBytes
}

// SetArchive makes GET tarball/{sha} serve data (gzip-compressed tar bytes,
// hostile ones included) instead of the archive built from SetTree.
func (s *Server) SetArchive(owner, name, sha string, data []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.repoLocked(owner, name).archives[sha] = append([]byte(nil), data...)
}

func leafOf(f TreeFile) treeEntry {
	if !fs.ValidPath(f.Path) || f.Path == "." {
		panic(fmt.Sprintf("ghfake: SetTree: invalid path %q", f.Path))
	}
	mode := f.Mode
	if mode == "" {
		mode = ModeFile
	}
	name := f.Path[strings.LastIndexByte(f.Path, '/')+1:]
	switch mode {
	case ModeFile, ModeExecutable, ModeSymlink:
		return treeEntry{name: name, mode: mode, typ: "blob", sha: blobSHA(f.Content), size: len(f.Content)}
	case ModeSubmodule:
		if len(f.Commit) != 40 {
			panic(fmt.Sprintf("ghfake: SetTree: submodule %q needs a 40-hex commit", f.Path))
		}
		return treeEntry{name: name, mode: mode, typ: "commit", sha: f.Commit}
	}
	panic(fmt.Sprintf("ghfake: SetTree: mode %q of %q", mode, f.Path))
}

func (d *dirBuild) insert(p string, e treeEntry) {
	dir, rest, nested := strings.Cut(p, "/")
	if !nested {
		if _, dup := d.leaves[dir]; dup || d.dirs[dir] != nil {
			panic(fmt.Sprintf("ghfake: SetTree: %q given twice", p))
		}
		d.leaves[dir] = e
		return
	}
	if _, clash := d.leaves[dir]; clash {
		panic(fmt.Sprintf("ghfake: SetTree: %q is a file and a directory", dir))
	}
	sub := d.dirs[dir]
	if sub == nil {
		sub = &dirBuild{dirs: map[string]*dirBuild{}, leaves: map[string]treeEntry{}}
		d.dirs[dir] = sub
	}
	sub.insert(rest, e)
}

// storeTree stores d's tree objects, bottom up, and returns d's SHA.
func (r *repo) storeTree(d *dirBuild) string {
	t := &gitTree{}
	for name, sub := range d.dirs {
		t.entries = append(t.entries, treeEntry{name: name, mode: ModeDir, typ: "tree", sha: r.storeTree(sub)})
	}
	for _, e := range d.leaves {
		t.entries = append(t.entries, e)
	}
	// git's order: names compared as if a directory's had a trailing "/".
	sortKey := func(e treeEntry) string {
		if e.typ == "tree" {
			return e.name + "/"
		}
		return e.name
	}
	sort.Slice(t.entries, func(i, j int) bool { return sortKey(t.entries[i]) < sortKey(t.entries[j]) })
	var obj bytes.Buffer
	for _, e := range t.entries {
		raw, _ := hex.DecodeString(e.sha)
		fmt.Fprintf(&obj, "%s %s\x00", strings.TrimPrefix(e.mode, "0"), e.name)
		obj.Write(raw)
	}
	h := sha1.New()
	fmt.Fprintf(h, "tree %d\x00", obj.Len())
	h.Write(obj.Bytes())
	sha := hex.EncodeToString(h.Sum(nil))
	r.trees[sha] = t
	return sha
}

// treeOf resolves a tree SHA, a commit SHA set with SetTree, or a branch
// pointing at one, to a tree SHA.
func (r *repo) treeOf(ref string) (string, bool) {
	if _, ok := r.trees[ref]; ok {
		return ref, true
	}
	sha := resolveRef(r, ref)
	if _, set := r.derived[sha]; !set {
		if t, ok := r.commitTrees[sha]; ok {
			return t, true
		}
	}
	return r.derivedTree(sha)
}

// getTree is GET /repos/{o}/{r}/git/trees/{sha}[?recursive=…]: a tree's
// entries (with recursive, the whole hierarchy, parents before children),
// cut at the truncation limits with "truncated": true.
func (s *Server) getTree(q *req) reply {
	rp, ok := s.repoOf(q)
	if !ok {
		return notFound()
	}
	sha, ok := rp.treeOf(q.params["sha"])
	if !ok {
		return notFound()
	}
	maxEntries, maxBytes := s.treeMaxEntries, s.treeMaxBytes
	recursive := q.r.URL.Query().Has("recursive")
	if !recursive {
		// GitHub's limits are the recursive listing's; one level is cut
		// only past them.
		maxEntries, maxBytes = 0, 0
	}
	if maxEntries <= 0 {
		maxEntries = DefaultTreeMaxEntries
	}
	if maxBytes <= 0 {
		maxBytes = DefaultTreeMaxBytes
	}
	l := &treeLister{q: q, rp: rp, api: q.apiBase + "/repos/" + rp.owner + "/" + rp.name, maxEntries: maxEntries,
		maxBytes: maxBytes, recursive: recursive, out: []any{}}
	l.list(sha, "")
	return reply{status: 200, body: map[string]any{"sha": sha, "url": l.api + "/git/trees/" + sha, "tree": l.out,
		"truncated": l.truncated}}
}

type treeLister struct {
	q                    *req
	rp                   *repo
	api                  string
	maxEntries, maxBytes int
	recursive, truncated bool
	bytes                int
	out                  []any
}

func (l *treeLister) list(sha, prefix string) {
	for _, e := range l.rp.trees[sha].entries {
		if l.truncated {
			return
		}
		m := map[string]any{"path": prefix + e.name, "mode": e.mode, "type": e.typ, "sha": e.sha}
		switch e.typ {
		case "blob":
			m["size"], m["url"] = e.size, l.api+"/git/blobs/"+e.sha
		case "tree":
			m["url"] = l.api + "/git/trees/" + e.sha
		}
		b, _ := json.Marshal(m)
		if len(l.out) >= l.maxEntries || l.bytes+len(b) > l.maxBytes {
			l.truncated = true
			return
		}
		l.bytes += len(b)
		l.out = append(l.out, m)
		if e.typ == "tree" && l.recursive {
			l.list(e.sha, prefix+e.name+"/")
		}
	}
}

// getBlob is GET /repos/{o}/{r}/git/blobs/{sha}: base64 content in GitHub's
// blob shape, or the raw bytes for Accept: application/vnd.github.raw(+json).
func (s *Server) getBlob(q *req) reply {
	rp, ok := s.repoOf(q)
	if !ok {
		return notFound()
	}
	sha := q.params["sha"]
	content, ok := rp.blobs[sha]
	if !ok {
		content, ok = blobInFiles(rp, sha)
	}
	if !ok {
		return notFound()
	}
	if strings.Contains(q.r.Header.Get("Accept"), "raw") {
		return reply{status: 200, raw: append([]byte{}, content...), ctype: "application/vnd.github.raw"}
	}
	return reply{status: 200, body: map[string]any{"sha": sha, "size": len(content), "encoding": "base64",
		"content": wrap60(base64.StdEncoding.EncodeToString(content)), "node_id": "B_" + sha,
		"url": q.apiBase + "/repos/" + rp.owner + "/" + rp.name + "/git/blobs/" + sha}}
}

func blobInFiles(rp *repo, sha string) ([]byte, bool) {
	for _, files := range rp.files {
		for _, content := range files {
			if blobSHA(content) == sha {
				return content, true
			}
		}
	}
	return nil, false
}

// getTarball is GET /repos/{o}/{r}/tarball[/{ref}]: 302 to the fake's
// codeload, as GitHub redirects to codeload.github.com with a short-lived
// token in the query.
func (s *Server) getTarball(q *req) reply {
	rp, ok := s.repoOf(q)
	if !ok {
		return notFound()
	}
	ref := q.params["ref"]
	if ref == "" {
		ref = rp.defaultBranch
	}
	sha := resolveRef(rp, ref)
	_, hasTree := rp.commitTrees[sha]
	if _, hasArchive := rp.archives[sha]; !hasTree && !hasArchive {
		return notFound()
	}
	tok := fmt.Sprintf("CL%d", s.nextID())
	s.codeload[tok] = true
	loc := "http://" + q.r.Host + "/_codeload/" + url.PathEscape(rp.owner) + "/" + url.PathEscape(rp.name) +
		"/legacy.tar.gz/" + sha + "?token=" + tok
	return reply{status: 302, header: map[string][]string{"Location": {loc}}}
}

// getCodeload serves the archive a tarball redirect names: a gzip tar whose
// entries sit under one top directory "<owner>-<repo>-<sha7>/", with git
// archive's pax global header (the commit id), directories, files,
// symlinks, and an empty directory for each submodule — obeying the
// commit's .gitattributes as git archive does (archiver).
func (s *Server) getCodeload(q *req) reply {
	rp, ok := s.repoOf(q)
	if !ok || !s.codeload[q.query("token")] {
		return notFound()
	}
	sha := q.params["sha"]
	if data, ok := rp.archives[sha]; ok {
		return reply{status: 200, raw: append([]byte(nil), data...), ctype: "application/x-gzip"}
	}
	tree, ok := rp.commitTrees[sha]
	if !ok {
		return notFound()
	}
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	top := rp.owner + "-" + rp.name + "-" + sha[:min(7, len(sha))] + "/"
	mtime := time.Unix(0, 0)
	_ = tw.WriteHeader(&tar.Header{Typeflag: tar.TypeXGlobalHeader, Name: "pax_global_header", PAXRecords: map[string]string{"comment": sha}})
	_ = tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: top, Mode: 0o775, ModTime: mtime})
	a := archiver{tw: tw, rp: rp, commit: sha, top: top, mtime: mtime}
	a.tree(tree, "", nil)
	_ = tw.Close()
	_ = zw.Close()
	return reply{status: 200, raw: buf.Bytes(), ctype: "application/x-gzip"}
}

// archiver writes a commit's tree as git archive does, obeying the
// commit's own .gitattributes (root and nested): export-ignore leaves a
// file or a whole directory out, export-subst expands $Format:…$.
type archiver struct {
	tw     *tar.Writer
	rp     *repo
	commit string
	top    string
	mtime  time.Time
}

func (a *archiver) tree(sha, rel string, rules []exportRule) {
	entries := a.rp.trees[sha].entries
	for _, e := range entries {
		if e.name == ".gitattributes" && e.typ == "blob" && e.mode != ModeSymlink {
			rules = append(rules[:len(rules):len(rules)], parseAttributes(rel, a.rp.blobs[e.sha])...)
		}
	}
	for _, e := range entries {
		p := rel + e.name
		ignore, subst := exportAttrs(rules, p, e.typ == "tree")
		if ignore {
			continue
		}
		h := &tar.Header{Typeflag: tar.TypeDir, Name: a.top + p + "/", Mode: 0o775, ModTime: a.mtime}
		var data []byte
		switch {
		case e.typ == "tree" || e.typ == "commit": // a submodule: an empty directory
		case e.mode == ModeSymlink:
			h.Typeflag, h.Name, h.Linkname, h.Mode = tar.TypeSymlink, a.top+p, string(a.rp.blobs[e.sha]), 0o777
		default:
			data = a.rp.blobs[e.sha]
			if subst {
				data = substitute(data, a.commit)
			}
			h.Typeflag, h.Name, h.Size, h.Mode = tar.TypeReg, a.top+p, int64(len(data)), 0o664
			if e.mode == ModeExecutable {
				h.Mode = 0o775
			}
		}
		_ = a.tw.WriteHeader(h)
		_, _ = a.tw.Write(data)
		if e.typ == "tree" {
			a.tree(e.sha, p+"/", rules)
		}
	}
}
