package artifact

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/phasegate/phasegate/internal/testutil"
)

// mapFS builds an in-memory FS: path → content; a content of "->target"
// makes a symlink to target.
func mapFS(files map[string]string) fstest.MapFS {
	m := fstest.MapFS{}
	for p, content := range files {
		if target, ok := strings.CutPrefix(content, "->"); ok {
			m[p] = &fstest.MapFile{Data: []byte(target), Mode: fs.ModeSymlink}
			continue
		}
		m[p] = &fstest.MapFile{Data: []byte(content)}
	}
	return m
}

// noLinks hides MapFS's ReadLink and Lstat: an FS that cannot read links.
type noLinks struct{ fsys fs.FS }

func (n noLinks) Open(name string) (fs.File, error) { return n.fsys.Open(name) }

// foundPaths renders files as found does, with the path to open when it is
// not the file's own.
func foundPaths(files []File) []string {
	out := found(files)
	for i, f := range files {
		if f.Path != f.Rel {
			out[i] += " @" + f.Path
		}
	}
	return out
}

func TestWalkFS(t *testing.T) {
	tests := []struct {
		name  string
		files map[string]string
		opts  DiscoverOptions
		want  []string
	}{
		{
			name: "conventions, candidates and skipped directories",
			files: map[string]string{
				".pace/day-1/gate.md":                  "day: 1\n",
				".pipeline/7/plan.json":                "{}",
				"config/settings.json":                 "{}",
				"docs/readme.md":                       "# hi\n",
				"notes.txt":                            "x",
				".git/objects/plan.json":               "{}",
				"node_modules/pkg/.pace/day-1/gate.md": "x",
				"vendor/x/artifacts/t/submit.json":     "{}",
				"sub/vendor/a.yaml":                    "{}",
			},
			want: []string{
				".pace/day-1/gate.md pace.gate-report",
				".pipeline/7/plan.json jg.plan",
				"config/settings.json ?",
			},
		},
		{
			name: "ignore globs",
			files: map[string]string{
				".pace/day-1/gate.md":          "x",
				"examples/.pace/day-1/gate.md": "x",
				"legacy/old.yaml":              "x",
				"build/out.json":               "x",
				"keep.yaml":                    "x",
				"drafts/a.draft.yaml":          "x",
			},
			opts: DiscoverOptions{Ignore: []string{"examples/**", "legacy", "build/", "**/*.draft.yaml"}},
			want: []string{".pace/day-1/gate.md pace.gate-report", "keep.yaml ?"},
		},
		{
			name:  "config globs",
			files: map[string]string{"records/day1.txt": "x", "other.json": "{}"},
			opts:  DiscoverOptions{Globs: map[string][]string{"pace.cycle": {"records/*.txt"}}},
			want:  []string{"other.json ?", "records/day1.txt pace.cycle"},
		},
		{
			name: "a Dir inside a marker keeps the paths relative to the FS",
			files: map[string]string{
				"demo/.pace/day-1/gate.md": "x",
				"demo/.pace/plan.yaml":     "x",
				"demo/other.yaml":          "x",
			},
			opts: DiscoverOptions{Dir: "demo/.pace"},
			want: []string{"demo/.pace/day-1/gate.md pace.gate-report", "demo/.pace/plan.yaml pace.plan"},
		},
		{
			name:  "a Dir that is a file is the named file, with the prefix",
			files: map[string]string{"notes/day.txt": "x"},
			opts:  DiscoverOptions{Dir: "notes/day.txt", Prefix: "../"},
			want:  []string{"../notes/day.txt ? @notes/day.txt"},
		},
		{
			name:  "a named file takes --kind",
			files: map[string]string{"notes/day.txt": "x"},
			opts:  DiscoverOptions{Dir: "notes/day.txt", Kind: KindByID("pace.cycle")},
			want:  []string{"notes/day.txt pace.cycle"},
		},
		{
			name: "symlinks resolved lexically inside the FS",
			files: map[string]string{
				"real/gate.yaml":          "day: 1\n",
				".pace/day-1/gate.md":     "->../../real/gate.yaml",
				".pace/day-2/gate.md":     "->/etc/passwd",
				".pace/day-3/gate.md":     "->../../../outside/gate.yaml",
				".pace/day-4/gate.md":     "->../day-1/gate.md", // a chain: link → link → file
				".pace/day-5/gate.md":     "->../../linked-dir/gate.yaml",
				".pace/day-6/gate.md":     "->../../escape-dir/secret.yaml",
				".pipeline/1/plan.json":   "->nowhere.json",
				".pipeline/2/plan.json":   "->../2/plan.json", // a loop
				".pipeline/3/plan.json":   "->../../real",     // a directory
				"escape-dir":              "->../outside",
				"linked-dir":              "->real",
				"escape.txt":              "->/etc/passwd", // not a candidate: skipped
				"artifacts/t/submit.json": "->../../real/gate.yaml",
			},
			want: []string{
				".pace/day-1/gate.md pace.gate-report @real/gate.yaml",
				".pace/day-2/gate.md pace.gate-report !discovery.symlink-escape",
				".pace/day-3/gate.md pace.gate-report !discovery.symlink-escape",
				".pace/day-4/gate.md pace.gate-report @real/gate.yaml",
				".pace/day-5/gate.md pace.gate-report @real/gate.yaml",
				".pace/day-6/gate.md pace.gate-report !discovery.symlink-escape",
				"artifacts/t/submit.json scc.submit @real/gate.yaml",
				"real/gate.yaml ?",
			},
		},
		{
			name: "a link out of Dir is an escape, even inside the FS",
			files: map[string]string{
				"demo/.pace/day-1/gate.md": "->../../README.yaml",
				"demo/.pace/day-2/gate.md": "->../day-1/real.md",
				"demo/.pace/day-1/real.md": "x",
				"demo/README.yaml":         "x",
			},
			opts: DiscoverOptions{Dir: "demo/.pace"},
			want: []string{
				"demo/.pace/day-1/gate.md pace.gate-report !discovery.symlink-escape",
				"demo/.pace/day-2/gate.md pace.gate-report @demo/.pace/day-1/real.md",
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			files, err := DiscoverFS(mapFS(tc.files), tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			if got := foundPaths(files); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("DiscoverFS:\n  %s\nwant:\n  %s", strings.Join(got, "\n  "), strings.Join(tc.want, "\n  "))
			}
			for _, f := range files {
				if !fs.ValidPath(f.Path) {
					t.Errorf("%s: Path %q is not a valid FS path", f.Rel, f.Path)
				}
			}
		})
	}
}

// TestWalkFSWithoutReadLink: an FS that cannot read links has its symlink
// entries skipped, never read nor reported.
func TestWalkFSWithoutReadLink(t *testing.T) {
	fsys := noLinks{mapFS(map[string]string{
		"real/gate.yaml":      "x",
		".pace/day-1/gate.md": "->../../real/gate.yaml",
		".pace/day-2/gate.md": "->/etc/passwd",
	})}
	files, err := DiscoverFS(fsys, DiscoverOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := found(files), []string{"real/gate.yaml ?"}; !reflect.DeepEqual(got, want) {
		t.Errorf("DiscoverFS = %q, want %q", got, want)
	}
}

func TestWalkFSErrors(t *testing.T) {
	fsys := mapFS(map[string]string{"a.json": "{}"})
	tests := []struct {
		name string
		opts DiscoverOptions
		want error
	}{
		{name: "missing Dir", opts: DiscoverOptions{Dir: "missing"}, want: fs.ErrNotExist},
		{name: "invalid Dir", opts: DiscoverOptions{Dir: "../x"}, want: fs.ErrInvalid},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := WalkFS(fsys, tc.opts, func(File) error { return nil })
			if !errors.Is(err, tc.want) || !strings.Contains(err.Error(), tc.opts.Dir) {
				t.Errorf("WalkFS error = %v, want one wrapping %v and naming %s", err, tc.want, tc.opts.Dir)
			}
		})
	}
	stop := errors.New("stop here")
	n := 0
	err := WalkFS(mapFS(map[string]string{"a.json": "{}", "b.json": "{}"}), DiscoverOptions{}, func(File) error { n++; return stop })
	if err != stop || n != 1 {
		t.Errorf("WalkFS returned %v after %d calls, want fn's error as is after one", err, n)
	}
}

// TestWalkFSUnreadable: a directory below Dir that cannot be listed is
// handed out with a read problem naming it and why, never skipped; the
// walk goes on. (An unreadable file is found as usual: reading it is the
// checker's, which reports it.)
func TestWalkFSUnreadable(t *testing.T) {
	files := map[string]string{
		".pace/day-1/gate.md":    "day: 1\n",
		".pace/day-2/gate.md":    "day: 2\n",
		"locked/deep/plan.json":  "{}",
		"ignored/x/plan.json":    "{}",
		"z.json":                 "{}",
		"node_modules/a/x.json":  "{}",
		".pipeline/7/plan.json":  "{}",
		".pipeline/8/state.yaml": "{}",
	}
	tests := []struct {
		name   string
		denied []string
		opts   DiscoverOptions
		want   []string
	}{
		{
			name:   "unlistable directories are reported where they are",
			denied: []string{".pace/day-2", "locked", ".pipeline/8"},
			want: []string{".pace/day-1/gate.md pace.gate-report", ".pace/day-2 ? !" + RuleRead, ".pipeline/7/plan.json jg.plan",
				".pipeline/8 ? !" + RuleRead, "ignored/x/plan.json ?", "locked ? !" + RuleRead, "z.json ?"},
		},
		{
			name:   "an ignored or skipped directory is never listed, so never reported",
			denied: []string{"ignored/x", "node_modules/a"},
			opts:   DiscoverOptions{Ignore: []string{"ignored/**"}},
			want:   []string{".pace/day-1/gate.md pace.gate-report", ".pace/day-2/gate.md pace.gate-report", ".pipeline/7/plan.json jg.plan", ".pipeline/8/state.yaml jg.state", "locked/deep/plan.json ?", "z.json ?"},
		},
		{
			name:   "the prefix of a checked subdirectory is kept",
			denied: []string{".pace/day-2"},
			opts:   DiscoverOptions{Dir: ".pace"},
			want:   []string{".pace/day-1/gate.md pace.gate-report", ".pace/day-2 ? !" + RuleRead},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			denied := map[string]bool{}
			for _, d := range tc.denied {
				denied[d] = true
			}
			got, err := DiscoverFS(testutil.DeniedFS{FS: mapFS(files), Denied: denied}, tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			if names := found(got); !reflect.DeepEqual(names, tc.want) {
				t.Errorf("files:\n  %s\nwant:\n  %s", strings.Join(names, "\n  "), strings.Join(tc.want, "\n  "))
			}
			for _, f := range got {
				if f.Problem == nil {
					continue
				}
				if !f.Dir || f.Path != strings.TrimPrefix(f.Rel, tc.opts.Prefix) || !strings.Contains(f.Problem.Message, "permission denied") || !strings.Contains(f.Problem.Message, "directory") {
					t.Errorf("%s: Dir %v, Path %q, problem %q: want a directory problem saying why", f.Rel, f.Dir, f.Path, f.Problem.Message)
				}
			}
		})
	}
	if err := WalkFS(testutil.DeniedFS{FS: mapFS(files), Denied: map[string]bool{".": true}}, DiscoverOptions{}, func(File) error { return nil }); !errors.Is(err, fs.ErrPermission) {
		t.Errorf("an unlistable root: error %v, want a permission error (could not run)", err)
	}
}

func TestResolveFS(t *testing.T) {
	fsys := mapFS(map[string]string{
		"a/file":      "x",
		"a/up":        "->..",
		"a/abs":       "->/etc",
		"a/self":      "->self",
		"b/to-file":   "->../a/file",
		"b/via-dir":   "->../c/file",
		"c":           "->a",
		"d/chain":     "->../b/to-file",
		"d/dangling":  "->missing",
		"d/escape":    "->../../x",
		"d/dotdot-up": "->../a/up/../../x",
	})
	tests := []struct {
		name, path, want string
		wantErr          error
	}{
		{name: "no link", path: "a/file", want: "a/file"},
		{name: "the root", path: ".", want: "."},
		{name: "a link to a file", path: "b/to-file", want: "a/file"},
		{name: "through a linked directory", path: "b/via-dir", want: "a/file"},
		{name: "a chain", path: "d/chain", want: "a/file"},
		{name: "a link component then ..", path: "a/up/a/file", want: "a/file"},
		{name: "dangling", path: "d/dangling", wantErr: fs.ErrNotExist},
		{name: "absolute", path: "a/abs", wantErr: ErrLinkEscapes},
		{name: "above the root", path: "d/escape", wantErr: ErrLinkEscapes},
		{name: ".. after a link goes from the target", path: "d/dotdot-up", wantErr: ErrLinkEscapes},
		{name: "a loop", path: "a/self"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ResolveFS(fsys, tc.path)
			if tc.want == "" {
				if err == nil || tc.wantErr != nil && !errors.Is(err, tc.wantErr) {
					t.Errorf("ResolveFS(%s) = %q, %v; want an error %v", tc.path, got, err, tc.wantErr)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Errorf("ResolveFS(%s) = %q, %v; want %q", tc.path, got, err, tc.want)
			}
		})
	}
}

// TestWalkFSSymlinksOnTheOS: the same resolution on os.DirFS (which would
// follow any link the OS way) and on an os.Root's FS: a link through a
// linked directory that leaves the root is an escape, never read, whichever
// FS is walked.
func TestWalkFSSymlinksOnTheOS(t *testing.T) {
	outside := t.TempDir()
	if err := os.WriteFile(filepath.Join(outside, "secret.yaml"), []byte("token: x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	root := tree(t, map[string]string{
		"real/gate.yaml":        "day: 1\n",
		".pace/day-1/gate.md":   "->../../real/gate.yaml",
		".pace/day-2/gate.md":   "->../../out/secret.yaml",
		".pipeline/9/plan.json": "->missing.json",
		"out":                   "->" + filepath.ToSlash(outside),
	})
	// An absolute target is refused whatever it names, even a file inside
	// the root.
	day3 := filepath.Join(root, ".pace", "day-3")
	if err := os.MkdirAll(day3, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(root, "real", "gate.yaml"), filepath.Join(day3, "gate.md")); err != nil {
		t.Fatal(err)
	}
	want := []string{
		".pace/day-1/gate.md pace.gate-report @real/gate.yaml",
		".pace/day-2/gate.md pace.gate-report !discovery.symlink-escape",
		".pace/day-3/gate.md pace.gate-report !discovery.symlink-escape",
		"real/gate.yaml ?",
	}
	osRoot, err := os.OpenRoot(root)
	if err != nil {
		t.Fatal(err)
	}
	defer osRoot.Close()
	for name, fsys := range map[string]fs.FS{"os.DirFS": os.DirFS(root), "os.Root": osRoot.FS()} {
		t.Run(name, func(t *testing.T) {
			files, err := DiscoverFS(fsys, DiscoverOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if got := foundPaths(files); !reflect.DeepEqual(got, want) {
				t.Errorf("DiscoverFS:\n  %s\nwant:\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
			}
		})
	}
}

// FuzzResolveFS: link targets are agent-controlled. Whatever they say,
// ResolveFS ends (no loop runs away), and what it returns is a valid path
// inside the FS with no symlink on the way.
func FuzzResolveFS(f *testing.F) {
	f.Add("../file", "../a/l1", "b/l2")
	f.Add("..", "../../x", "a/l1/file")
	f.Add("l1", "/etc/passwd", "a/l1")
	f.Add("./././file", "../b/l2/../a", "b/l2/file")
	f.Fuzz(func(t *testing.T, target1, target2, name string) {
		if !fs.ValidPath(name) || target1 == "" || target2 == "" {
			return
		}
		fsys := mapFS(map[string]string{"a/file": "x", "a/l1": "->" + target1, "b/l2": "->" + target2})
		got, err := ResolveFS(fsys, name)
		if err != nil {
			return
		}
		if !fs.ValidPath(got) {
			t.Fatalf("ResolveFS(%q) = %q, not a valid path", name, got)
		}
		if got == "." {
			return
		}
		segs := strings.Split(got, "/")
		for i := range segs {
			p := strings.Join(segs[:i+1], "/")
			info, err := fsys.Lstat(p)
			if err != nil || info.Mode()&fs.ModeSymlink != 0 {
				t.Fatalf("ResolveFS(%q) = %q, but %s is a link or missing (%v)", name, got, p, err)
			}
		}
	})
}
