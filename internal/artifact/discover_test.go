package artifact

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/phasegate/phasegate/internal/testutil"
)

// tree writes files (path → content; a content of "->target" makes a
// symlink instead) under a new temporary directory and returns it.
func tree(t *testing.T, files map[string]string) string {
	t.Helper()
	root := t.TempDir()
	regular := map[string]string{}
	for p, content := range files {
		target, ok := strings.CutPrefix(content, "->")
		if !ok {
			regular[p] = content
			continue
		}
		full := filepath.Join(root, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(filepath.FromSlash(target), full); err != nil {
			t.Skipf("symlinks unavailable: %v", err)
		}
	}
	return testutil.WriteTree(t, root, regular)
}

// Discover walks root (a directory, or a single file) on the OS, as the CLI
// does through an os.Root: WalkFS on the directory, or on the directory
// holding a single file (FileRoot).
func Discover(root string, opts DiscoverOptions) ([]File, error) {
	info, err := os.Stat(root)
	if err != nil {
		return nil, err
	}
	base := root
	opts.Dir = "."
	if !info.IsDir() {
		base, opts.Dir, opts.Prefix = FileRoot(root)
	}
	return DiscoverFS(os.DirFS(base), opts)
}

// DiscoverFS is WalkFS collected into a list.
func DiscoverFS(fsys fs.FS, opts DiscoverOptions) ([]File, error) {
	var files []File
	err := WalkFS(fsys, opts, func(f File) error {
		files = append(files, f)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return files, nil
}

// found renders discovered files as "rel kind" (kind "?" for a content
// candidate, "!rule" for a problem).
func found(files []File) []string {
	var out []string
	for _, f := range files {
		k := "?"
		if f.Kind != nil {
			k = f.Kind.ID
		}
		if f.Problem != nil {
			k += " !" + f.Problem.Rule
		}
		if f.Kind == nil && !f.Sniff && f.Problem == nil {
			k = "(neither kind nor sniff)"
		}
		out = append(out, f.Rel+" "+k)
	}
	return out
}

func TestDiscover(t *testing.T) {
	outside := t.TempDir()
	if err := os.WriteFile(filepath.Join(outside, "secret.yaml"), []byte("token: x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
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
				".git/.pace/day-1/gate.md":             "x",
				"node_modules/pkg/.pace/day-1/gate.md": "x",
				"vendor/x/artifacts/t/submit.json":     "{}",
				"sub/vendor/a.yaml":                    "{}",
				"deep/a/b/c/.autopilot/state.json":     "{}",
			},
			want: []string{
				".pace/day-1/gate.md pace.gate-report",
				".pipeline/7/plan.json jg.plan",
				"config/settings.json ?",
				"deep/a/b/c/.autopilot/state.json autopilot.state",
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
			want: []string{
				".pace/day-1/gate.md pace.gate-report",
				"keep.yaml ?",
			},
		},
		{
			name: "config globs map a path to a kind, before the conventions",
			files: map[string]string{
				"docs/gates/day1.yaml":  "x",
				"reports/plan.json":     "x",
				".pipeline/7/plan.json": "x",
				"other/file.json":       "x",
			},
			opts: DiscoverOptions{Globs: map[string][]string{
				"pace.gate-report": {"docs/gates/*.yaml"},
				"jg.plan":          {"reports/*.json"},
				"scc.task":         {".pipeline/**/plan.json"},
			}},
			want: []string{
				".pipeline/7/plan.json scc.task",
				"docs/gates/day1.yaml pace.gate-report",
				"other/file.json ?",
				"reports/plan.json jg.plan",
			},
		},
		{
			name: "config glob for a non-sniffable name",
			files: map[string]string{
				"records/day1.txt": "x",
			},
			opts: DiscoverOptions{Globs: map[string][]string{"pace.cycle": {"records/*.txt"}}},
			want: []string{"records/day1.txt pace.cycle"},
		},
		{
			name: "symlinks",
			files: map[string]string{
				"real/gate.yaml":        "day: 1\n",
				".pace/day-1/gate.md":   "->../../real/gate.yaml",
				".pace/day-2/gate.md":   "->" + filepath.ToSlash(filepath.Join(outside, "secret.yaml")),
				"escape.yaml":           "->" + filepath.ToSlash(filepath.Join(outside, "secret.yaml")),
				"escape.txt":            "->" + filepath.ToSlash(filepath.Join(outside, "secret.yaml")),
				"dangling.yaml":         "->nowhere.yaml",
				"linked-dir":            "->real",
				"loop/self":             "->..",
				"outside-dir":           "->" + filepath.ToSlash(outside),
				".pipeline/9/plan.json": "->../../../outside-via-dots/plan.json",
			},
			// Links are resolved lexically inside the root and never
			// followed out of it, so a link above the root is reported
			// whether or not its target exists (.pipeline/9/plan.json).
			want: []string{
				".pace/day-1/gate.md pace.gate-report",
				".pace/day-2/gate.md pace.gate-report !discovery.symlink-escape",
				".pipeline/9/plan.json jg.plan !discovery.symlink-escape",
				"escape.yaml ? !discovery.symlink-escape",
				"real/gate.yaml ?",
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			root := tree(t, tc.files)
			files, err := Discover(root, tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			if got := found(files); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("Discover:\n  %s\nwant:\n  %s", strings.Join(got, "\n  "), strings.Join(tc.want, "\n  "))
			}
			for _, f := range files {
				if strings.Contains(f.Rel, `\`) || strings.HasPrefix(f.Rel, "/") {
					t.Errorf("Rel %q is not a relative slash path", f.Rel)
				}
			}
		})
	}
}

// TestDiscoverEscapingSymlinkIsReportedNotRead: a link out of the root that
// looks like an artifact carries a Problem, which the caller reports instead
// of opening the file (check's hostile test proves the "not opened" part).
func TestDiscoverEscapingSymlinkIsReportedNotRead(t *testing.T) {
	outside := t.TempDir()
	target := filepath.Join(outside, "plan.json")
	if err := os.WriteFile(target, []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	root := tree(t, map[string]string{".pipeline/1/plan.json": "->" + filepath.ToSlash(target)})
	files, err := Discover(root, DiscoverOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 1 || files[0].Problem == nil || files[0].Problem.Rule != RuleSymlink || files[0].Kind != KindByID("jg.plan") {
		t.Fatalf("files = %+v", files)
	}
	if p := files[0].Problem; p.Pos != (Pos{1, 1}) || !strings.Contains(p.Message, "outside the checked root") {
		t.Errorf("problem = %+v", p)
	}
}

func TestDiscoverSingleFile(t *testing.T) {
	root := tree(t, map[string]string{
		".pace/day-3/gate.md": "x",
		"loose.yaml":          "x",
		"notes.txt":           "x",
	})
	tests := []struct {
		name      string
		path      string
		wantKind  string
		wantSniff bool
	}{
		{"classified by path", filepath.Join(root, ".pace", "day-3", "gate.md"), "pace.gate-report", false},
		{"sniffable", filepath.Join(root, "loose.yaml"), "", true},
		{"named explicitly, so sniffed whatever its name", filepath.Join(root, "notes.txt"), "", true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			files, err := Discover(tc.path, DiscoverOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if len(files) != 1 {
				t.Fatalf("files = %+v", files)
			}
			f := files[0]
			if kindID(f.Kind) != tc.wantKind || f.Sniff != tc.wantSniff || f.Rel != filepath.ToSlash(tc.path) {
				t.Errorf("file = %+v (kind %q), want kind %q, sniff %v", f, kindID(f.Kind), tc.wantKind, tc.wantSniff)
			}
		})
	}
}

func TestDiscoverRootErrors(t *testing.T) {
	_, err := Discover(filepath.Join(t.TempDir(), "missing"), DiscoverOptions{})
	if err == nil || !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Discover(missing) error = %v, want one wrapping fs.ErrNotExist", err)
	}
}

// TestDiscoverSymlinkedRoot: a root that is itself a symlink to a directory
// (a common layout for checked-out workspaces) is walked.
func TestDiscoverSymlinkedRoot(t *testing.T) {
	real := tree(t, map[string]string{".pace/day-1/gate.md": "x", "a.json": "{}"})
	link := filepath.Join(t.TempDir(), "workspace")
	if err := os.Symlink(real, link); err != nil {
		t.Skipf("symlinks unavailable: %v", err)
	}
	files, err := Discover(link, DiscoverOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{".pace/day-1/gate.md pace.gate-report", "a.json ?"}
	if got := found(files); !reflect.DeepEqual(got, want) {
		t.Errorf("Discover(symlinked root) = %q, want %q", got, want)
	}
}

// TestDiscoverUnreadableDirectory: on the OS, a directory below the root
// that cannot be listed is a File with a read problem, not skipped
// (TestWalkFSUnreadable covers the same through an FS, as any user).
func TestDiscoverUnreadableDirectory(t *testing.T) {
	root := tree(t, map[string]string{"locked/a.json": "{}", "b.json": "{}"})
	if err := os.Chmod(filepath.Join(root, "locked"), 0o000); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Chmod(filepath.Join(root, "locked"), 0o755) })
	if _, err := os.ReadDir(filepath.Join(root, "locked")); err == nil {
		t.Skip("chmod 000 does not stop this user from listing a directory (root)")
	}
	files, err := Discover(root, DiscoverOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := found(files), []string{"b.json ?", "locked ? !" + RuleRead}; !reflect.DeepEqual(got, want) {
		t.Errorf("files = %q, want %q", got, want)
	}
}

func TestContextRoot(t *testing.T) {
	tests := []struct {
		name, root, wantBase, wantPrefix string
	}{
		{name: "repository root", root: ".", wantBase: ".", wantPrefix: ""},
		{name: "plain directory", root: "examples/demo", wantBase: "examples/demo", wantPrefix: ""},
		{name: "marker directory", root: "examples/demo/.pace", wantBase: "examples/demo", wantPrefix: ".pace/"},
		{name: "inside a marker", root: "examples/demo/.pipeline/ISSUE-42/", wantBase: "examples/demo", wantPrefix: ".pipeline/ISSUE-42/"},
		{name: "marker at the start", root: ".planning/phases/3", wantBase: ".", wantPrefix: ".planning/phases/3/"},
		{name: "absolute", root: "/w/repo/.autopilot", wantBase: "/w/repo", wantPrefix: ".autopilot/"},
		{name: "marker at the filesystem root", root: "/.pace", wantBase: "/", wantPrefix: ".pace/"},
		{name: "ordinary names are not markers", root: "testdata/units/pace/artifacts", wantBase: "testdata/units/pace/artifacts", wantPrefix: ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			base, prefix := ContextRoot(filepath.FromSlash(tt.root))
			if filepath.ToSlash(base) != tt.wantBase || prefix != tt.wantPrefix {
				t.Errorf("ContextRoot(%q) = %q, %q; want %q, %q", tt.root, base, prefix, tt.wantBase, tt.wantPrefix)
			}
		})
	}
}
