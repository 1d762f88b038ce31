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
		rel := filepath.ToSlash(filepath.Clean(root))
		f := classify(rel, root, opts)
		if opts.Kind != nil {
			f.Kind, f.ByPath = opts.Kind, false
		}
		if f.Kind == nil {
			f.Sniff = true
		}
		f.Named = true
		return fn(f)
	}
	realRoot, err := filepath.EvalSymlinks(root)
	if err != nil {
		return fmt.Errorf("resolving %s: %w", root, err)
	}
	if realRoot, err = filepath.Abs(realRoot); err != nil {
		return fmt.Errorf("resolving %s: %w", root, err)
	}
	// WalkDir does not descend into a root that is itself a symlink (to a
	// directory): walk its target instead, under the same relative paths.
	if li, err := os.Lstat(root); err == nil && li.Mode()&fs.ModeSymlink != 0 {
		root = realRoot
	}
	var fnErr error
	walkErr := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p == root {
				return err
			}
			return nil // an unreadable entry below the root: skip it
		}
		rel, rerr := filepath.Rel(root, p)
		if rerr != nil || rel == "." {
			return nil
		}
		rel = opts.Prefix + filepath.ToSlash(rel)
		if d.IsDir() {
			if skippedDirs[d.Name()] || ignored(rel+"/", opts.Ignore) || ignored(rel, opts.Ignore) {
				return filepath.SkipDir
			}
			return nil
		}
		if ignored(rel, opts.Ignore) {
			return nil
		}
		f := classify(rel, p, opts)
		switch {
		case d.Type()&fs.ModeSymlink != 0:
			target, err := filepath.EvalSymlinks(p)
			if err != nil {
				return nil // dangling link: nothing to read
			}
			if abs, err := filepath.Abs(target); err != nil || !inside(realRoot, abs) {
				if f.Kind == nil && !Sniffable(rel) {
					return nil
				}
				f.Problem = &Problem{Pos: Pos{1, 1}, Rule: RuleSymlink, Message: "symlink points outside the checked root; it is not read"}
				return emit(fn, f, &fnErr)
			}
			if ti, err := os.Stat(target); err != nil || !ti.Mode().IsRegular() {
				return nil // a link to a directory is not followed
			}
		case !d.Type().IsRegular():
			return nil
		}
		if f.Kind == nil {
			if !Sniffable(rel) {
				return nil
			}
			f.Sniff = true
		}
		return emit(fn, f, &fnErr)
	})
	if fnErr != nil {
		return fnErr
	}
	if walkErr != nil {
		return fmt.Errorf("walking %s: %w", root, walkErr)
	}
	return nil
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
