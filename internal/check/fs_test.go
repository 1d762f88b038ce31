package check

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"sync"
	"testing"
	"testing/fstest"

	"github.com/phasegate/phasegate/internal/artifact"
	"github.com/phasegate/phasegate/internal/config"
	"github.com/phasegate/phasegate/internal/testutil"
)

// countingFS wraps an FS and records which files are opened (directories
// aside) and how many bytes are read of each: the caller's way to learn
// what a run reads. Open of a name in fail fails with that error.
type countingFS struct {
	fsys fs.FS
	fail map[string]error

	mu     sync.Mutex
	opened map[string]int
	read   map[string]int64
}

func newCountingFS(fsys fs.FS, fail map[string]error) *countingFS {
	return &countingFS{fsys: fsys, fail: fail, opened: map[string]int{}, read: map[string]int64{}}
}

func (c *countingFS) Open(name string) (fs.File, error) {
	if err := c.fail[name]; err != nil {
		return nil, &fs.PathError{Op: "open", Path: name, Err: err}
	}
	f, err := c.fsys.Open(name)
	if err != nil {
		return nil, err
	}
	if info, err := f.Stat(); err == nil && info.IsDir() {
		return f, nil
	}
	c.mu.Lock()
	c.opened[name]++
	c.mu.Unlock()
	return &countingFile{File: f, c: c, name: name}, nil
}

// ReadDir, Stat, ReadLink and Lstat are passed through: they read no file.
func (c *countingFS) ReadDir(name string) ([]fs.DirEntry, error) { return fs.ReadDir(c.fsys, name) }
func (c *countingFS) Stat(name string) (fs.FileInfo, error)      { return fs.Stat(c.fsys, name) }
func (c *countingFS) ReadLink(name string) (string, error)       { return fs.ReadLink(c.fsys, name) }
func (c *countingFS) Lstat(name string) (fs.FileInfo, error)     { return fs.Lstat(c.fsys, name) }

// openedFiles lists the opened files, sorted, each with "×n" when opened
// more than once.
func (c *countingFS) openedFiles() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := []string{}
	for name, n := range c.opened {
		if n > 1 {
			name += fmt.Sprintf(" ×%d", n)
		}
		out = append(out, name)
	}
	sort.Strings(out)
	return out
}

type countingFile struct {
	fs.File
	c    *countingFS
	name string
}

func (f *countingFile) Read(p []byte) (int, error) {
	n, err := f.File.Read(p)
	f.c.mu.Lock()
	f.c.read[f.name] += int64(n)
	f.c.mu.Unlock()
	return n, err
}

// mapTree copies the files under dir (a testdata tree; "" for none) into a
// MapFS and adds files (path → content) on top.
func mapTree(t *testing.T, dir string, files map[string]string) fstest.MapFS {
	t.Helper()
	m := fstest.MapFS{}
	if dir != "" {
		err := fs.WalkDir(os.DirFS(dir), ".", func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			data, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(p)))
			m[p] = &fstest.MapFile{Data: data}
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	for p, content := range files {
		m[p] = &fstest.MapFile{Data: []byte(content)}
	}
	return m
}

// sccTask is the task folder of the SCC unit tree.
const sccTask = "artifacts/5b0f3c9e-2a41-4c7d-9e8f-0123456789ab/"

func TestRunFS(t *testing.T) {
	foreign := map[string]string{
		".autopilot/state.json": `{"version": 2, "sessions": []}` + "\n", // another tool's, at a shared path
		".autopilot/notes.txt":  "x",
		"config/settings.json":  `{"theme": "dark"}` + "\n", // a candidate, not an artifact
		"src/main.go":           "package main\n",
		"README.md":             "# hi\n",
		"assets/logo.png":       "\x89PNG",
	}
	huge := `{"pad":"` + strings.Repeat("x", 2<<20) + `"}`
	tests := []struct {
		name   string
		base   string            // a unit tree under testdata/units copied first
		files  map[string]string // added on top
		opts   Options
		ignore []string // the config's ignore globs
		fail   []string // Open of these fails
		// want is every finding as "file rule"; opened, when not nil, is
		// exactly the files opened; maxRead bounds the bytes read of any file.
		wantArtifacts int
		want          []string
		opened        []string
		maxRead       int64
	}{
		{
			name: "only the artifacts, the candidates and the evidence the rules need are opened",
			base: "scc/consistent", files: foreign,
			wantArtifacts: 3,
			opened: []string{".autopilot/state.json", sccTask + "patch.diff", sccTask + "report.md", sccTask + "selftest.log",
				sccTask + "submit.json", sccTask + "task.json", sccTask + "verdict.json", "config/settings.json"},
		},
		{
			name: "an Open error is a read finding on an artifact and on a candidate, and the run goes on",
			base: "scc/consistent", files: foreign,
			fail:          []string{sccTask + "task.json", "config/settings.json"},
			wantArtifacts: 3,
			want:          []string{sccTask + "task.json " + artifact.RuleRead, "config/settings.json " + artifact.RuleRead},
		},
		{
			name:   "ignored files are never opened",
			files:  map[string]string{"legacy/.pipeline/1/plan.json": "{not json", "legacy/x.yaml": "a: 1\n", "keep.yaml": "a: 1\n"},
			ignore: []string{"legacy/**"}, opts: Options{RootName: "the tree"},
			want: []string{" " + RuleNothingFound}, opened: []string{"keep.yaml"},
		},
		{
			name:  "nothing found names the FS's root",
			files: map[string]string{"README.md": "# hi\n", "src/main.go": "package main\n"},
			want:  []string{" " + RuleNothingFound}, opened: []string{},
		},
		{
			name:  "a Dir inside a marker keeps the paths relative to the FS",
			base:  "pace/inconsistent",
			opts:  Options{Dir: ".pace"},
			files: map[string]string{"other/.pace/day-1/gate-report.yaml": "{not yaml"}, // outside Dir
			// the findings of Run on pace/inconsistent, with the same paths
			wantArtifacts: -1,
		},
		{
			name:          "a Dir that is a file is checked as named, with no nothing-found warning",
			files:         map[string]string{"notes/x.yaml": "a: 1\n"},
			opts:          Options{Dir: "notes/x.yaml"},
			wantArtifacts: 0,
			want:          []string{"notes/x.yaml " + RuleUnknownKind},
			opened:        []string{"notes/x.yaml"},
		},
		{
			name:          "an oversized file is read only for its head",
			files:         map[string]string{".pipeline/huge/plan.json": huge},
			wantArtifacts: 1,
			want:          []string{".pipeline/huge/plan.json limits.file-size"},
			maxRead:       sniffSize,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			base := ""
			if tc.base != "" {
				base = filepath.Join("testdata", "units", filepath.FromSlash(tc.base))
			}
			fail := map[string]error{}
			for _, name := range tc.fail {
				fail[name] = fs.ErrPermission
			}
			fsys := newCountingFS(mapTree(t, base, tc.files), fail)
			opts := tc.opts
			opts.Config = config.Default()
			opts.Config.Ignore = tc.ignore
			res, err := sharedValidator.RunFS(context.Background(), fsys, opts)
			if err != nil {
				t.Fatal(err)
			}
			want, wantArtifacts := tc.want, tc.wantArtifacts
			if wantArtifacts < 0 { // the same as Run on the base tree
				whole, err := sharedValidator.Run(context.Background(), base, Options{Config: config.Default()})
				if err != nil {
					t.Fatal(err)
				}
				wantArtifacts = whole.Artifacts
				for _, f := range whole.Findings {
					want = append(want, f.File+" "+f.Rule)
				}
			}
			var got []string
			for _, f := range res.Findings {
				got = append(got, f.File+" "+f.Rule)
				if f.Rule == RuleNothingFound && !strings.Contains(f.Message, "under "+nameOr(opts.RootName, ".")+":") {
					t.Errorf("the warning does not name the root %q: %s", nameOr(opts.RootName, "."), f.Message)
				}
				if f.Rule == artifact.RuleRead && !strings.Contains(f.Message, "permission denied") {
					t.Errorf("the read finding does not say why: %s", f.Message)
				}
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("findings:\n  %s\nwant:\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
			}
			if res.Artifacts != wantArtifacts {
				t.Errorf("Artifacts = %d, want %d", res.Artifacts, wantArtifacts)
			}
			if tc.opened != nil {
				if got := fsys.openedFiles(); !reflect.DeepEqual(got, tc.opened) {
					t.Errorf("opened:\n  %s\nwant:\n  %s", strings.Join(got, "\n  "), strings.Join(tc.opened, "\n  "))
				}
			}
			for name, n := range fsys.read {
				if tc.maxRead > 0 && n > tc.maxRead {
					t.Errorf("read %d bytes of %s, want at most %d", n, name, tc.maxRead)
				}
			}
		})
	}
}

func nameOr(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// TestRunMatchesRunFS: Run on a directory and RunFS on os.DirFS of the same
// directory give the same result, over every unit tree of testdata/units
// (and with a root inside a marker directory, placed by Dir).
func TestRunMatchesRunFS(t *testing.T) {
	dirs, err := filepath.Glob(filepath.Join("testdata", "units", "*", "*"))
	if err != nil {
		t.Fatal(err)
	}
	type pair struct{ root, base, dir string }
	var pairs []pair
	for _, d := range dirs {
		if info, err := os.Stat(d); err != nil || !info.IsDir() {
			continue
		}
		pairs = append(pairs, pair{root: d, base: d})
		markers, _ := filepath.Glob(filepath.Join(d, ".*"))
		for _, m := range markers {
			if info, err := os.Stat(m); err == nil && info.IsDir() {
				pairs = append(pairs, pair{root: m, base: d, dir: filepath.Base(m)})
			}
		}
	}
	if len(pairs) < 10 {
		t.Fatalf("only %d unit trees found", len(pairs))
	}
	for _, p := range pairs {
		t.Run(filepath.ToSlash(p.root), func(t *testing.T) {
			opts := Options{Config: config.Default(), KeepOutcomes: true}
			viaRun, err := sharedValidator.Run(context.Background(), p.root, opts)
			if err != nil {
				t.Fatal(err)
			}
			opts.Dir, opts.RootName = p.dir, p.root
			viaFS, err := sharedValidator.RunFS(context.Background(), os.DirFS(p.base), opts)
			if err != nil {
				t.Fatal(err)
			}
			if viaRun.Artifacts == 0 {
				t.Fatal("no artifact checked")
			}
			if !reflect.DeepEqual(viaRun, viaFS) {
				t.Errorf("Run and RunFS differ:\nRun:   %+v\nRunFS: %+v", viaRun, viaFS)
			}
		})
	}
}

// TestRunFSSymlinksOnDirFS: on os.DirFS, which would follow any link the
// OS way, a link inside the root is read as its target, and a link out of
// it (absolute, above the root, or through a linked directory that leaves
// it) is a symlink finding and is never read — the same as Run, which
// checks through an os.Root.
func TestRunFSSymlinksOnDirFS(t *testing.T) {
	outside := t.TempDir()
	// Not valid JSON: reading it would add a syntax finding.
	if err := os.WriteFile(filepath.Join(outside, "plan.json"), []byte("{not json"), 0o644); err != nil {
		t.Fatal(err)
	}
	links := []struct {
		name, path, target string
		want               string // the finding's rule, "" for none
	}{
		{name: "inside, to a broken file", path: ".pipeline/1/plan.json", target: "../../real/plan.json", want: artifact.RuleSyntax},
		{name: "absolute", path: ".pipeline/2/plan.json", target: filepath.Join(outside, "plan.json"), want: artifact.RuleSymlink},
		{name: "above the root", path: ".pipeline/3/plan.json", target: "../../../" + filepath.Base(outside) + "/plan.json", want: artifact.RuleSymlink},
		{name: "through a linked directory out", path: ".pipeline/4/plan.json", target: "../../out/plan.json", want: artifact.RuleSymlink},
		{name: "dangling", path: ".pipeline/5/plan.json", target: "missing.json"},
		{name: "to a directory", path: ".pipeline/6/plan.json", target: "../../real"},
	}
	root := testutil.WriteTree(t, t.TempDir(), map[string]string{"real/plan.json": "{not json either"})
	if err := os.Symlink(outside, filepath.Join(root, "out")); err != nil {
		t.Skipf("symlinks unavailable: %v", err)
	}
	for _, l := range links {
		full := filepath.Join(root, filepath.FromSlash(l.path))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(filepath.FromSlash(l.target), full); err != nil {
			t.Fatal(err)
		}
	}
	opts := Options{Config: config.Default(), RootName: root}
	fsys := newCountingFS(os.DirFS(root), nil)
	viaFS, err := sharedValidator.RunFS(context.Background(), fsys, opts)
	if err != nil {
		t.Fatal(err)
	}
	viaRun, err := sharedValidator.Run(context.Background(), root, opts)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(viaRun, viaFS) {
		t.Errorf("Run and RunFS differ:\nRun:   %+v\nRunFS: %+v", viaRun, viaFS)
	}
	byFile := map[string][]string{}
	for _, f := range viaFS.Findings {
		byFile[f.File] = append(byFile[f.File], f.Rule)
	}
	for _, l := range links {
		t.Run(l.name, func(t *testing.T) {
			got := byFile[l.path]
			if l.want == "" && len(got) != 0 || l.want != "" && (len(got) != 1 || got[0] != l.want) {
				t.Errorf("findings %v, want exactly [%s]", got, l.want)
			}
		})
	}
	if got, want := fsys.openedFiles(), []string{"real/plan.json ×2"}; !reflect.DeepEqual(got, want) {
		t.Errorf("opened %v, want %v (the file and the link inside to it, nothing outside)", got, want)
	}
}

// TestGroupReadsConfined: the rules read the tree through the run's FS,
// confined to it whatever the FS: on os.DirFS a link out of the tree is not
// followed; through an os.Root (what Run gives the rules) neither, while a
// link out of the directory but inside the tree is.
func TestGroupReadsConfined(t *testing.T) {
	outside := t.TempDir()
	if err := os.WriteFile(filepath.Join(outside, "secret.log"), []byte("secret"), 0o644); err != nil {
		t.Fatal(err)
	}
	root := testutil.WriteTree(t, t.TempDir(), map[string]string{"ev/ok.log": "ok", "big.log": strings.Repeat("x", 100), "sib/x.log": "sib"})
	for link, target := range map[string]string{"ev/out.log": filepath.Join(outside, "secret.log"), "ev/in.log": "ok.log", "ev/up.log": "../../" + filepath.Base(outside) + "/secret.log", "outdir": outside, "ev/sib.log": "../sib/x.log", "ev/sibdir": "../sib"} {
		if err := os.Symlink(target, filepath.Join(root, filepath.FromSlash(link))); err != nil {
			t.Skipf("symlinks unavailable: %v", err)
		}
	}
	tree, err := os.OpenRoot(root)
	if err != nil {
		t.Fatal(err)
	}
	defer tree.Close()
	groups := map[string]*Group{
		"os.DirFS": {files: os.DirFS(root), limit: 50},
		"os.Root":  {files: tree.FS(), root: tree, limit: 50},
	}
	tests := []struct {
		rel    string
		want   string // content; "" for an error
		exists bool
	}{
		{rel: "ev/ok.log", want: "ok", exists: true},
		{rel: "ev/in.log", want: "ok", exists: true},
		{rel: "ev/./../ev/ok.log", want: "ok", exists: true},
		{rel: "ev", exists: true},
		{rel: "ev/", exists: true},
		{rel: "big.log", exists: true}, // over the limit: not read
		{rel: "ev/out.log"},
		{rel: "ev/up.log"},
		{rel: "outdir/secret.log"},
		{rel: "../secret.log"},
		{rel: filepath.ToSlash(filepath.Join(outside, "secret.log"))},
		{rel: "ev/missing.log"},
		{rel: "ev/sib.log", want: "sib", exists: true},
		{rel: "ev/sibdir/x.log", want: "sib", exists: true},
		{rel: "sib/x.log", want: "sib", exists: true},
	}
	for name, g := range groups {
		for _, tc := range tests {
			t.Run(name+"/"+tc.rel, func(t *testing.T) {
				data, err := g.ReadFile(tc.rel)
				if tc.want == "" && err == nil || tc.want != "" && (err != nil || string(data) != tc.want) {
					t.Errorf("ReadFile = %q, %v; want %q", data, err, tc.want)
				}
				if got := g.Exists(tc.rel); got != tc.exists {
					t.Errorf("Exists = %v, want %v", got, tc.exists)
				}
			})
		}
	}
	if _, err := (&Group{}).ReadFile("ev/ok.log"); err == nil || !strings.Contains(err.Error(), "no directory") {
		t.Errorf("ReadFile without a tree: %v", err)
	}
}

// TestGroupReadErrorsMatch: a file the rules read through an os.Root (what
// Run gives them) gives the answers and errors os.DirFS gives: over the
// limit, not a regular file, at the limit, empty, missing.
func TestGroupReadErrorsMatch(t *testing.T) {
	root := testutil.WriteTree(t, t.TempDir(), map[string]string{"ev/ok.log": "ok", "ev/big.log": strings.Repeat("x", 100), "ev/limit.log": strings.Repeat("y", 50), "ev/sub/x": "x", "ev/empty.log": ""})
	tree, err := os.OpenRoot(root)
	if err != nil {
		t.Fatal(err)
	}
	defer tree.Close()
	plain := &Group{files: os.DirFS(root), limit: 50}
	viaDir := &Group{files: tree.FS(), root: tree, limit: 50}
	for _, rel := range []string{"ev/ok.log", "ev/big.log", "ev/limit.log", "ev/sub", "ev/empty.log", "ev/missing.log"} {
		want, wantErr := plain.ReadFile(rel)
		got, gotErr := viaDir.ReadFile(rel)
		if string(got) != string(want) || (gotErr == nil) != (wantErr == nil) || rel != "ev/missing.log" && gotErr != nil && gotErr.Error() != wantErr.Error() {
			t.Errorf("%s: ReadFile = %q, %v; the tree's FS gives %q, %v", rel, got, gotErr, want, wantErr)
		}
		if got, want := viaDir.Exists(rel), plain.Exists(rel); got != want {
			t.Errorf("%s: Exists = %v, the tree's FS says %v", rel, got, want)
		}
	}
}

// TestRunFSCancelled: a cancelled context is an error of the run, as is.
func TestRunFSCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := sharedValidator.RunFS(ctx, mapTree(t, filepath.Join("testdata", "units", "jg", "consistent"), nil), Options{Config: config.Default()})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("RunFS error = %v, want context.Canceled", err)
	}
}

// TestRunFSUnreadable: nothing phasegate cannot read is skipped silently —
// a directory it cannot list, an artifact, a candidate that might be one, a
// named file, an evidence file a rule needs: each is a finding with its path.
func TestRunFSUnreadable(t *testing.T) {
	outcome := "phase: build\npending_decisions: []\n"
	tests := []struct {
		name          string
		files         map[string]string
		denied        []string
		dir           string // Options.Dir
		want          []string
		wantArtifacts int
	}{
		{
			name:   "a directory that cannot be listed",
			files:  map[string]string{"locked/x.outcome.yaml": outcome},
			denied: []string{"locked"},
			want:   []string{"locked io.read error"}, wantArtifacts: 3,
		},
		{
			name:   "a directory of a unit that cannot be listed",
			denied: []string{sccTask + "evidence"},
			want:   []string{sccTask + "evidence io.read error"}, wantArtifacts: 3,
		},
		{
			name:   "a candidate that cannot be read",
			files:  map[string]string{"notes/x.yaml": outcome},
			denied: []string{"notes/x.yaml"},
			want:   []string{"notes/x.yaml io.read error"}, wantArtifacts: 3,
		},
		{
			name:   "an artifact that cannot be read",
			denied: []string{sccTask + "verdict.json"},
			want:   []string{sccTask + "verdict.json io.read error"}, wantArtifacts: 3,
		},
		{
			name:   "a named file that cannot be read",
			files:  map[string]string{"notes/x.yaml": outcome},
			denied: []string{"notes/x.yaml"},
			dir:    "notes/x.yaml",
			want:   []string{"notes/x.yaml io.read error"}, wantArtifacts: 0,
		},
		{
			name:   "an evidence file that cannot be read",
			denied: []string{sccTask + "selftest.log"},
			want:   []string{sccTask + "submit.json scc.submit.evidence-readable warning"}, wantArtifacts: 3,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			denied := map[string]bool{}
			for _, d := range tc.denied {
				denied[d] = true
			}
			fsys := testutil.DeniedFS{FS: mapTree(t, filepath.Join("testdata", "units", "scc", "consistent"), tc.files), Denied: denied}
			res, err := sharedValidator.RunFS(context.Background(), fsys, Options{Config: config.Default(), Dir: tc.dir})
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, f := range res.Findings {
				got = append(got, f.File+" "+f.Rule+" "+string(f.Severity))
				if !strings.Contains(f.Message, "permission denied") {
					t.Errorf("%s does not say why: %s", f.File, f.Message)
				}
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("findings:\n  %s\nwant:\n  %s", strings.Join(got, "\n  "), strings.Join(tc.want, "\n  "))
			}
			if res.Artifacts != tc.wantArtifacts {
				t.Errorf("Artifacts = %d, want %d", res.Artifacts, tc.wantArtifacts)
			}
		})
	}
}

// lyingSizeFS reports every file's size as size, whatever its content: a
// file that grew or shrank between Stat and Read, or an FS that does not
// know sizes (0).
type lyingSizeFS struct {
	fstest.MapFS
	size int64
}

func (l lyingSizeFS) Open(name string) (fs.File, error) {
	f, err := l.MapFS.Open(name)
	if err != nil {
		return nil, err
	}
	return lyingFile{f, l.size}, nil
}

type lyingFile struct {
	fs.File
	size int64
}

func (l lyingFile) Stat() (fs.FileInfo, error) {
	info, err := l.File.Stat()
	if err != nil {
		return nil, err
	}
	return lyingInfo{info, l.size}, nil
}

type lyingInfo struct {
	fs.FileInfo
	size int64
}

func (l lyingInfo) Size() int64 { return l.size }

// TestReadLimitedWhateverStatSays: readLimited reads a file whole (up to the
// limit, and one byte more to see it is over) whatever size Stat reported.
func TestReadLimitedWhateverStatSays(t *testing.T) {
	content := strings.Repeat("abcdefghij", 100) // 1,000 bytes
	tests := []struct {
		name     string
		stat     int64
		max      int64
		wantLen  int
		wantSize int64
	}{
		{name: "the true size", stat: 1000, max: 4096, wantLen: 1000, wantSize: 1000},
		{name: "grew since Stat", stat: 10, max: 4096, wantLen: 1000, wantSize: 1000},
		{name: "no size known", stat: 0, max: 4096, wantLen: 1000, wantSize: 1000},
		{name: "shrank since Stat", stat: 3000, max: 4096, wantLen: 1000, wantSize: 1000},
		{name: "grew over the limit", stat: 10, max: 500, wantLen: 501, wantSize: 501},
		{name: "at the limit exactly", stat: 1000, max: 1000, wantLen: 1000, wantSize: 1000},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			fsys := lyingSizeFS{fstest.MapFS{"f.yaml": {Data: []byte(content)}}, tc.stat}
			data, size, err := readLimited(fsys, "f.yaml", tc.max)
			if err != nil {
				t.Fatal(err)
			}
			if len(data) != tc.wantLen || size != tc.wantSize || string(data) != content[:tc.wantLen] {
				t.Errorf("read %d bytes, size %d; want %d bytes of the content, size %d", len(data), size, tc.wantLen, tc.wantSize)
			}
		})
	}
}
