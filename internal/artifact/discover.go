package artifact

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
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
}

// File is a discovered file: classified by path (Kind set), or a candidate to
// classify by content (Kind nil, Sniff true).
type File struct {
	// Rel is the path relative to the root, with '/'.
	Rel string
	// Abs is the path to open.
	Abs string
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
}

// skippedDirs are never descended into.
var skippedDirs = map[string]bool{".git": true, "node_modules": true, "vendor": true}

// Discover walks root (a directory, or a single file) and returns the files
// to check, in lexical order. Directories named .git, node_modules and vendor
// are skipped, symlinked directories are not followed, and a symlinked file
// is read only when its target stays inside the root. The error is for a root
// that cannot be walked at all; unreadable entries below it are skipped.
func Discover(root string, opts DiscoverOptions) ([]File, error) {
	var files []File
	err := Walk(root, opts, func(f File) error {
		files = append(files, f)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return files, nil
}

// Walk is Discover as a stream: it calls fn for each file to check, in
// lexical order (a depth-first walk, so the files under one directory come
// one after the other), without holding the list. An error from fn stops the
// walk and is returned.
func Walk(root string, opts DiscoverOptions, fn func(File) error) error {
	info, err := os.Stat(root)
	if err != nil {
		return fmt.Errorf("reading %s: %w", root, err)
	}
	if !info.IsDir() {
		return fn(namedFile(root, opts))
	}
	walkRoot, realRoot, err := resolveRoot(root)
	if err != nil {
		return err
	}
	w := walker{root: walkRoot, realRoot: realRoot, opts: &opts}
	var fnErr error
	walkErr := filepath.WalkDir(walkRoot, func(p string, d fs.DirEntry, err error) error {
		f, ok, ret := w.visit(p, d, err)
		if !ok {
			return ret
		}
		return emit(fn, f, &fnErr)
	})
	if fnErr != nil {
		return fnErr
	}
	if walkErr != nil {
		return fmt.Errorf("walking %s: %w", walkRoot, walkErr)
	}
	return nil
}

// namedFile is the File of a root that is a file: the user named it, so it
// is checked as opts.Kind when set, and sniffed when its path says nothing.
func namedFile(root string, opts DiscoverOptions) File {
	rel := filepath.ToSlash(filepath.Clean(root))
	f := classify(rel, root, opts)
	if opts.Kind != nil {
		f.Kind, f.ByPath = opts.Kind, false
	}
	if f.Kind == nil {
		f.Sniff = true
	}
	f.Named = true
	return f
}

// walker is one walk of a directory root. It holds no callback, so that
// the caller's fn stays on its stack (Walk calls it).
type walker struct {
	root     string // the directory walked: the root, or its target when the root is a symlink
	realRoot string // the root with symlinks resolved, absolute: what a symlinked file must stay inside
	opts     *DiscoverOptions
}

// resolveRoot returns the directory to walk and the root with symlinks
// resolved, absolute. The directory is the root, or its target when the
// root is itself a symlink (to a directory): WalkDir does not descend into
// a symlink, so the target is walked under the same relative paths.
func resolveRoot(root string) (walkRoot, realRoot string, err error) {
	realRoot, err = filepath.EvalSymlinks(root)
	if err != nil {
		return "", "", fmt.Errorf("resolving %s: %w", root, err)
	}
	if realRoot, err = filepath.Abs(realRoot); err != nil {
		return "", "", fmt.Errorf("resolving %s: %w", root, err)
	}
	if li, err := os.Lstat(root); err == nil && li.Mode()&fs.ModeSymlink != 0 {
		return realRoot, realRoot, nil
	}
	return root, realRoot, nil
}

// visit decides on one entry of the walk: ok says to hand f to the
// caller's fn; otherwise ret is what the WalkDir callback returns. It skips
// ignored and skipped directories, ignored entries and what is not a
// regular file (or a symlink to one inside the root), and emits the rest
// that a path classifies or that may be sniffed.
func (w *walker) visit(p string, d fs.DirEntry, err error) (f File, ok bool, ret error) {
	if err != nil {
		if p == w.root {
			return File{}, false, err
		}
		return File{}, false, nil // an unreadable entry below the root: skip it
	}
	rel, rerr := filepath.Rel(w.root, p)
	if rerr != nil || rel == "." {
		return File{}, false, nil
	}
	rel = w.opts.Prefix + filepath.ToSlash(rel)
	if d.IsDir() {
		if skippedDirs[d.Name()] || ignored(rel+"/", w.opts.Ignore) || ignored(rel, w.opts.Ignore) {
			return File{}, false, filepath.SkipDir
		}
		return File{}, false, nil
	}
	if ignored(rel, w.opts.Ignore) {
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

// visitLink deals with a symlinked file f: a dangling link, or a link to
// something other than a regular file, is skipped; a link out of the root
// is kept with a problem, not read (if it could be an artifact). done is
// false for a link to a regular file inside the root, which is read like
// any file; otherwise keep says whether f is handed to the caller.
func (w *walker) visitLink(p, rel string, f *File) (done, keep bool) {
	target, err := filepath.EvalSymlinks(p)
	if err != nil {
		return true, false // dangling link: nothing to read
	}
	if abs, err := filepath.Abs(target); err != nil || !inside(w.realRoot, abs) {
		if f.Kind == nil && !Sniffable(rel) {
			return true, false
		}
		f.Problem = &Problem{Pos: Pos{1, 1}, Rule: RuleSymlink, Message: "symlink points outside the checked root; it is not read"}
		return true, true
	}
	if ti, err := os.Stat(target); err != nil || !ti.Mode().IsRegular() {
		return true, false // a link to a directory is not followed
	}
	return false, false
}

// errStop stops WalkDir after fn failed; the failure is returned as is.
var errStop = errors.New("stop")

func emit(fn func(File) error, f File, fnErr *error) error {
	if err := fn(f); err != nil {
		*fnErr = err
		return errStop
	}
	return nil
}

func classify(rel, abs string, opts DiscoverOptions) File {
	f := File{Rel: rel, Abs: abs}
	for _, k := range kinds {
		for _, g := range opts.Globs[k.ID] {
			if ok, _ := doublestar.Match(g, rel); ok {
				f.Kind = k
				return f
			}
		}
	}
	f.Kind = ClassifyPath(rel)
	f.ByPath = f.Kind != nil
	return f
}

func ignored(rel string, globs []string) bool {
	for _, g := range globs {
		if ok, _ := doublestar.Match(g, rel); ok {
			return true
		}
	}
	return false
}

func inside(root, p string) bool {
	r, err := filepath.Rel(root, p)
	return err == nil && r != ".." && !strings.HasPrefix(r, ".."+string(filepath.Separator)) && !filepath.IsAbs(r)
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
