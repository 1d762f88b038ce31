package artifact

import (
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/bmatcuk/doublestar/v4"
)

// DiscoverOptions tune discovery.
type DiscoverOptions struct {
	// Globs maps a kind ID to extra globs (relative to the root, doublestar
	// syntax) whose files are of that kind, whatever the conventions say.
	Globs map[string][]string
	// Ignore are globs of files and directories never read.
	Ignore []string
	// Kind, when set, is the kind of a root that is a single file, whatever
	// its path or content say (--kind).
	Kind *Kind
	// Prefix is prepended to every path relative to the root, so that a
	// root inside a family's marker directory (.pace, .pipeline, …) keeps its
	// place in the conventions; see ContextRoot.
	Prefix string
	// Dir is, for WalkFS, the path inside the FS to check
	// ("" for the whole FS): a directory, walked, or a single file, checked
	// as named (see File.Named). Paths stay relative to the FS, not to Dir:
	// a Dir inside a marker directory keeps its place in the conventions.
	Dir string
}

// File is a discovered file: classified by path (Kind set), or a candidate to
// classify by content (Kind nil, Sniff true).
type File struct {
	// Rel is the path relative to the root, with '/' (DiscoverOptions.Prefix
	// and the path inside the walked FS).
	Rel string
	// Path is the path to open inside the walked FS: the file's own path,
	// or, for a symlink, its target's (resolved inside the FS).
	Path string
	// Kind is the kind by path or config glob; nil for a content candidate.
	Kind *Kind
	// Sniff means: read the head and classify by content.
	Sniff bool
	// Problem, when set, is reported instead of reading the file (a symlink
	// that leaves the root).
	Problem *Problem
	// ByPath means Kind comes from the path conventions (not a config glob
	// or --kind), so a kind at a shared path must claim the file by its
	// content (Claims) before it is checked.
	ByPath bool
	// Named means the file is the root itself: the user named it, so a file
	// that matches no kind is reported, not skipped.
	Named bool
	// Dir means the entry is a directory below the root that could not be
	// listed: Problem (RuleRead) says why. It is not an artifact, and
	// nothing under it was walked.
	Dir bool
}

// skippedDirs are never descended into.
var skippedDirs = map[string]bool{".git": true, "node_modules": true, "vendor": true}

// FileRoot places a root that is a single file for WalkFS: the directory
// holding it (dir, to open as an FS), its name there (DiscoverOptions.Dir)
// and the prefix (DiscoverOptions.Prefix) that makes its File.Rel the path
// as given, with '/'.
func FileRoot(root string) (dir, name, prefix string) {
	dir, name = filepath.Dir(root), filepath.Base(root)
	prefix = strings.TrimSuffix(filepath.ToSlash(filepath.Clean(root)), name)
	return dir, name, prefix
}

// WalkFS calls fn for each file to check under opts.Dir of fsys, in lexical
// order (a depth-first walk, so the files under one directory come one
// after the other), without holding the list. Every read goes through
// fsys, so discovery does not know where the files come from (the OS, an
// os.Root, a tree fetched from GitHub).
//
// Directories named .git, node_modules and vendor are skipped, and so are
// ignored paths and what is not a regular file. Symlinks are resolved
// lexically inside fsys (fs.ReadLinkFS; without it, symlinks are skipped):
// a link to a regular file inside opts.Dir is read like a file (File.Path
// is its target), a dangling link or a link to a directory is skipped, and
// a link out of opts.Dir (an absolute target, a target above it) is kept
// with a RuleSymlink problem, not read. An error from fn stops the walk and
// is returned; the other errors are for a Dir that cannot be walked at all.
// A directory below Dir that cannot be listed is not skipped: it is handed
// to fn as a File with Dir set and a RuleRead problem.
func WalkFS(fsys fs.FS, opts DiscoverOptions, fn func(File) error) error {
	dir := cmp.Or(opts.Dir, ".")
	if !fs.ValidPath(dir) {
		return fmt.Errorf("reading %s: %w", dir, fs.ErrInvalid)
	}
	info, err := fs.Stat(fsys, dir)
	if err != nil {
		return fmt.Errorf("reading %s: %w", dir, err)
	}
	if !info.IsDir() {
		return fn(namedFile(dir, opts))
	}
	w := walker{fsys: fsys, dir: dir, realDir: dir, opts: &opts}
	if lfs, ok := fsys.(fs.ReadLinkFS); ok {
		w.links = lfs
		if real, err := ResolveFS(lfs, dir); err == nil {
			w.realDir = real
		}
	}
	var fnErr error
	walkErr := fs.WalkDir(fsys, dir, func(p string, d fs.DirEntry, err error) error {
		f, ok, ret := w.visit(p, d, err)
		if !ok {
			return ret
		}
		if fnErr = fn(f); fnErr != nil {
			return errStop
		}
		return nil
	})
	if fnErr != nil {
		return fnErr
	}
	if walkErr != nil {
		return fmt.Errorf("walking %s: %w", dir, walkErr)
	}
	return nil
}

// namedFile is the File of a root that is a file: the user named it, so it
// is checked as opts.Kind when set, and sniffed when its path says nothing.
func namedFile(name string, opts DiscoverOptions) File {
	f := classify(opts.Prefix+name, name, opts)
	if opts.Kind != nil {
		f.Kind, f.ByPath = opts.Kind, false
	}
	if f.Kind == nil {
		f.Sniff = true
	}
	f.Named = true
	return f
}

// walker is one walk of a directory of an FS. It holds no callback, so that
// the caller's fn stays on its stack (WalkFS calls it).
type walker struct {
	fsys    fs.FS
	links   fs.ReadLinkFS // fsys, when it reads symlinks; nil otherwise
	dir     string        // the directory walked
	realDir string        // dir with symlinks resolved: what a symlinked file must stay inside
	opts    *DiscoverOptions
}

// visit decides on one entry of the walk: ok says to hand f to the
// caller's fn; otherwise ret is what the WalkDir callback returns. It skips
// ignored and skipped directories, ignored entries and what is not a
// regular file (or a symlink to one inside the root), and emits the rest
// that a path classifies or that may be sniffed.
func (w *walker) visit(p string, d fs.DirEntry, err error) (f File, ok bool, ret error) {
	if err != nil {
		if p == w.dir {
			return File{}, false, err
		}
		// WalkDir's second call for a directory it could not list: the
		// directory is handed out with a problem, never skipped silently.
		return unreadableDir(w.opts.Prefix+p, p, err), true, nil
	}
	if p == w.dir {
		return File{}, false, nil
	}
	rel := w.opts.Prefix + p
	if d.IsDir() {
		if skippedDirs[d.Name()] || matchesAny(rel+"/", w.opts.Ignore) || matchesAny(rel, w.opts.Ignore) {
			return File{}, false, fs.SkipDir
		}
		return File{}, false, nil
	}
	if matchesAny(rel, w.opts.Ignore) {
		return File{}, false, nil
	}
	f = classify(rel, p, *w.opts)
	switch {
	case d.Type()&fs.ModeSymlink != 0:
		if done, keep := w.visitLink(p, rel, &f); done {
			return f, keep, nil
		}
	case !d.Type().IsRegular():
		return File{}, false, nil
	}
	if f.Kind == nil {
		if !Sniffable(rel) {
			return File{}, false, nil
		}
		f.Sniff = true
	}
	return f, true, nil
}

// unreadableDir is the File of a directory below the root that could not be
// listed: a RuleRead problem naming why, so that what it may hold is not
// passed over in silence.
func unreadableDir(rel, p string, err error) File {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	return File{Rel: rel, Path: p, Dir: true, Problem: &Problem{Pos: Pos{1, 1}, Rule: RuleRead,
		Message: fmt.Sprintf("could not read the directory: %v; nothing under it was checked (list it under `ignore:` in .github/phasegate.yml if it holds no artifact)", err)}}
}

// visitLink deals with a symlinked file f: a dangling link, or a link to
// something other than a regular file, is skipped, and so is every link
// when the FS cannot read links; a link out of the walked directory is
// kept with a problem, not read (if it could be an artifact). done is false
// for a link to a regular file inside the directory, which is read like
// any file (f.Path becomes its target); otherwise keep says whether f is
// handed to the caller.
func (w *walker) visitLink(p, rel string, f *File) (done, keep bool) {
	if w.links == nil {
		return true, false
	}
	target, err := ResolveFS(w.links, p)
	if errors.Is(err, ErrLinkEscapes) || err == nil && !inside(w.realDir, target) {
		if f.Kind == nil && !Sniffable(rel) {
			return true, false
		}
		f.Problem = &Problem{Pos: Pos{1, 1}, Rule: RuleSymlink, Message: "symlink points outside the checked root; it is not read"}
		return true, true
	}
	if err != nil {
		return true, false // dangling, or a loop: nothing to read
	}
	if ti, err := w.links.Lstat(target); err != nil || !ti.Mode().IsRegular() {
		return true, false // a link to a directory is not followed
	}
	f.Path = target
	return false, false
}

// maxLinks bounds the symlinks followed to resolve one path.
const maxLinks = 16

// ErrLinkEscapes is ResolveFS's error for a path whose symlinks lead out of
// the FS: an absolute target, or a ".." above its root.
var ErrLinkEscapes = errors.New("symlink leads out of the root")

// ResolveFS returns the path inside fsys that name (a valid fs path) leads
// to once every symlink on the way is followed, resolved lexically: each
// component is looked at with Lstat, and a link's target (ReadLink) is
// resolved from the link's directory, as the OS would, without ever asking
// the OS to follow it. An absolute target or a ".." above the root is
// ErrLinkEscapes; a missing component is the Lstat error; more than a small
// number of links (a loop) is an error too.
func ResolveFS(fsys fs.ReadLinkFS, name string) (string, error) {
	var done []string
	todo := strings.Split(name, "/")
	links := 0
	for len(todo) > 0 {
		c := todo[0]
		todo = todo[1:]
		switch c {
		case "", ".":
			continue
		case "..":
			if len(done) == 0 {
				return "", fmt.Errorf("resolving %s: %w", name, ErrLinkEscapes)
			}
			done = done[:len(done)-1]
			continue
		}
		p := strings.Join(append(done, c), "/")
		info, err := fsys.Lstat(p)
		if err != nil {
			return "", fmt.Errorf("resolving %s: %w", name, err)
		}
		if info.Mode()&fs.ModeSymlink == 0 {
			done = append(done, c)
			continue
		}
		if links++; links > maxLinks {
			return "", fmt.Errorf("resolving %s: more than %d symlinks", name, maxLinks)
		}
		target, err := fsys.ReadLink(p)
		if err != nil {
			return "", fmt.Errorf("resolving %s: %w", name, err)
		}
		if target == "" || path.IsAbs(target) || filepath.IsAbs(target) || filepath.VolumeName(target) != "" {
			return "", fmt.Errorf("resolving %s: %w", name, ErrLinkEscapes)
		}
		todo = append(strings.Split(filepath.ToSlash(target), "/"), todo...)
	}
	if len(done) == 0 {
		return ".", nil
	}
	return strings.Join(done, "/"), nil
}

// errStop stops WalkDir after fn failed; the failure is returned as is.
var errStop = errors.New("stop")

func classify(rel, p string, opts DiscoverOptions) File {
	f := File{Rel: rel, Path: p}
	for _, k := range kinds {
		if matchesAny(rel, opts.Globs[k.ID]) {
			f.Kind = k
			return f
		}
	}
	f.Kind = ClassifyPath(rel)
	f.ByPath = f.Kind != nil
	return f
}

func matchesAny(rel string, globs []string) bool {
	return slices.ContainsFunc(globs, func(g string) bool { ok, _ := doublestar.Match(g, rel); return ok })
}

// inside reports whether the FS path p is dir or below it.
func inside(dir, p string) bool {
	return dir == "." || p == dir || strings.HasPrefix(p, dir+"/")
}

// markerDirs are the hidden directories the families' path conventions start
// at (Family.Markers; artifacts/ and pace/ are ordinary names, too common to
// be markers).
var markerDirs = func() map[string]bool {
	m := map[string]bool{}
	for _, f := range families {
		for _, d := range f.Markers {
			m[d] = true
		}
	}
	return m
}()

// ContextRoot places a directory root that lies inside a family's marker
// directory: `phasegate validate examples/demo/.pace` must classify
// day-1/gate.md as .pace/day-1/gate.md. It looks at the path as given (not
// at the directories above it, which the user did not name) for the last
// marker directory and returns the directory that holds it (base) and the
// root's path relative to base with a trailing '/' (prefix). Without a
// marker, base is root and prefix is empty.
func ContextRoot(root string) (base, prefix string) {
	segs := strings.Split(filepath.ToSlash(filepath.Clean(root)), "/")
	for i := len(segs) - 1; i >= 0; i-- {
		if !markerDirs[segs[i]] {
			continue
		}
		prefix = strings.Join(segs[i:], "/") + "/"
		switch {
		case i == 0:
			base = "."
		case i == 1 && segs[0] == "":
			base = "/"
		default:
			base = strings.Join(segs[:i], "/")
		}
		return filepath.FromSlash(base), prefix
	}
	return root, ""
}
