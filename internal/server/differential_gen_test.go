package server_test

// The differential suite's repositories (differential_test.go): commits
// made by the real git binary from shipped artifacts and their mutations,
// and what GitHub would serve of them, read back from git's own objects.

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/phasegate/phasegate/internal/ghfake"
)

// entry is one path of a commit: a file, a symlink (data is its target)
// or a submodule (gitlink: its commit).
type entry struct {
	data    []byte
	link    bool
	gitlink string
}

type files map[string]entry

func (f files) clone() files {
	out := make(files, len(f))
	for p, e := range f {
		out[p] = e
	}
	return out
}

func (f files) set(p, data string) { f[p] = entry{data: []byte(data)} }

// paths are f's regular files whose path matches keep, sorted.
func (f files) paths(keep func(string) bool) []string {
	var out []string
	for p, e := range f {
		if !e.link && e.gitlink == "" && keep(p) {
			out = append(out, p)
		}
	}
	sort.Strings(out)
	return out
}

// gitRepo is a repository the git binary builds, in a directory of the
// test's.
type gitRepo struct {
	t     testing.TB
	dir   string
	n     int                      // commits made: their dates
	diffs map[string][]ghfake.File // diff's answers
}

// newGitRepo needs the git binary: without it the suite fails, it never
// skips (a differential suite that did not run must not pass).
func newGitRepo(t testing.TB) *gitRepo {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Fatalf("the differential suite needs the git binary: %v", err)
	}
	g := &gitRepo{t: t, dir: t.TempDir(), diffs: map[string][]ghfake.File{}}
	g.git(nil, "init", "-q", "-b", "main")
	return g
}

// git runs git in the repository with a fixed identity and dates and no
// user or system configuration, and returns its standard output.
func (g *gitRepo) git(stdin []byte, args ...string) []byte {
	g.t.Helper()
	date := fmt.Sprintf("%d +0000", 1767225600+g.n*60)
	cmd := exec.Command("git", append([]string{"-c", "core.symlinks=true", "-c", "core.autocrlf=false", "-c", "commit.gpgsign=false",
		"-c", "advice.detachedHead=false"}, args...)...)
	cmd.Dir = g.dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL="+os.DevNull, "HOME="+g.dir,
		"GIT_AUTHOR_NAME=agent", "GIT_AUTHOR_EMAIL=agent@example.com", "GIT_COMMITTER_NAME=agent", "GIT_COMMITTER_EMAIL=agent@example.com",
		"GIT_AUTHOR_DATE="+date, "GIT_COMMITTER_DATE="+date, "LC_ALL=C",
		// glibc grows the heap in small steps, each a slow brk on a loaded
		// VM: 12,000 of them made one fast-import of 3,000 files take 2 s.
		"MALLOC_TOP_PAD_=67108864", "MALLOC_TRIM_THRESHOLD_=268435456")
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		g.t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, errb.String())
	}
	return out.Bytes()
}

func (g *gitRepo) line(args ...string) string {
	g.t.Helper()
	return strings.TrimSpace(string(g.git(nil, args...)))
}

// commits makes the commits of cs in one `git fast-import` (a commit per
// element, in order: exactly its files, on its parent, the tip of its
// branch) and returns their SHAs.
func (g *gitRepo) commits(cs []commitSpec) []string {
	g.t.Helper()
	var in bytes.Buffer
	for i, c := range cs {
		g.n++
		fmt.Fprintf(&in, "commit refs/heads/%s\nmark :%d\ncommitter agent <agent@example.com> %d +0000\ndata %d\n%s\n",
			c.branch, i+1, 1767225600+g.n*60, len("commit "+c.branch), "commit "+c.branch)
		if c.parent > 0 {
			fmt.Fprintf(&in, "from :%d\n", c.parent)
		}
		in.WriteString("deleteall\n")
		names := make([]string, 0, len(c.files))
		for p := range c.files {
			names = append(names, p)
		}
		sort.Strings(names)
		for _, p := range names {
			e := c.files[p]
			switch {
			case e.gitlink != "":
				fmt.Fprintf(&in, "M 160000 %s %s\n", e.gitlink, p)
				continue
			case e.link:
				fmt.Fprintf(&in, "M 120000 inline %s\n", p)
			default:
				fmt.Fprintf(&in, "M 100644 inline %s\n", p)
			}
			fmt.Fprintf(&in, "data %d\n", len(e.data))
			in.Write(e.data)
			in.WriteString("\n")
		}
	}
	marks := filepath.Join(g.t.TempDir(), "marks")
	g.git(in.Bytes(), "fast-import", "--quiet", "--export-marks="+marks)
	data, err := os.ReadFile(marks)
	if err != nil {
		g.t.Fatal(err)
	}
	out := make([]string, len(cs))
	for _, l := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		mark, sha, _ := strings.Cut(l, " ")
		if i, err := strconv.Atoi(strings.TrimPrefix(mark, ":")); err == nil && i >= 1 && i <= len(cs) {
			out[i-1] = sha
		}
	}
	return out
}

// commitSpec is one commit for commits: its files, its parent (the
// 1-based index of an earlier commit; 0: none) and its branch.
type commitSpec struct {
	files  files
	parent int
	branch string
}

// checkout makes the work tree sha's, detached, as `git checkout` leaves
// it for `phasegate gate`.
func (g *gitRepo) checkout(sha string) {
	g.t.Helper()
	g.git(nil, "checkout", "-q", "-f", "--detach", sha)
}

// treeFiles are each commit's entries as GitHub's tree API lists them,
// read from git's objects: ls-tree for the entries, one cat-file for the
// blobs of them all.
func (g *gitRepo) treeFiles(shas []string) map[string][]ghfake.TreeFile {
	g.t.Helper()
	type row struct{ mode, typ, obj, path string }
	rows := map[string][]row{}
	var batch bytes.Buffer
	for _, sha := range shas {
		for _, rec := range strings.Split(string(g.git(nil, "ls-tree", "-r", "-z", sha)), "\x00") {
			meta, p, ok := strings.Cut(rec, "\t")
			if !ok {
				continue
			}
			f := strings.Fields(meta)
			rows[sha] = append(rows[sha], row{mode: f[0], typ: f[1], obj: f[2], path: p})
			if f[1] == "blob" {
				batch.WriteString(f[2] + "\n")
			}
		}
	}
	blobs := map[string][]byte{}
	r := bufio.NewReader(bytes.NewReader(g.git(batch.Bytes(), "cat-file", "--batch")))
	for {
		head, err := r.ReadString('\n')
		if err != nil {
			break
		}
		f := strings.Fields(head)
		size, _ := strconv.Atoi(f[2])
		data := make([]byte, size+1)
		if _, err := io.ReadFull(r, data); err != nil {
			g.t.Fatalf("cat-file: %v", err)
		}
		blobs[f[0]] = data[:size]
	}
	out := map[string][]ghfake.TreeFile{}
	for sha, rs := range rows {
		for _, rw := range rs {
			tf := ghfake.TreeFile{Path: rw.path, Mode: rw.mode}
			if rw.typ == "commit" {
				tf.Commit = rw.obj
			} else {
				tf.Content = blobs[rw.obj]
			}
			out[sha] = append(out[sha], tf)
		}
	}
	return out
}

// archive is sha's tarball as GitHub's codeload builds it: `git archive`,
// which obeys the commit's .gitattributes (export-ignore, export-subst),
// under one top directory owner-repo-sha7/.
func (g *gitRepo) archive(sha, owner, repo string) []byte {
	g.t.Helper()
	return g.git(nil, "archive", "--format=tar.gz", "--prefix="+owner+"-"+repo+"-"+sha[:7]+"/", sha)
}

// diff is the change from the merge base of base and head to head as
// GitHub lists a pull request's files or a comparison's: renames detected,
// in path order.
func (g *gitRepo) diff(base, head string) []ghfake.File {
	g.t.Helper()
	if d, ok := g.diffs[base+"..."+head]; ok {
		return d
	}
	fields := strings.Split(strings.TrimSuffix(string(g.git(nil, "diff", "-z", "--name-status", "-M", base+"..."+head)), "\x00"), "\x00")
	var out []ghfake.File
	for i := 0; i+1 < len(fields); {
		st := fields[i]
		switch st[0] {
		case 'R', 'C':
			status := "renamed"
			if st[0] == 'C' {
				status = "copied"
			}
			out = append(out, ghfake.File{Filename: fields[i+2], Status: status, PreviousFilename: fields[i+1]})
			i += 3
			continue
		case 'A':
			out = append(out, ghfake.File{Filename: fields[i+1], Status: "added"})
		case 'D':
			out = append(out, ghfake.File{Filename: fields[i+1], Status: "removed"})
		case 'T':
			out = append(out, ghfake.File{Filename: fields[i+1], Status: "changed"})
		default:
			out = append(out, ghfake.File{Filename: fields[i+1], Status: "modified"})
		}
		i += 2
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Filename < out[j].Filename })
	g.diffs[base+"..."+head] = out
	return out
}

// changed is the change from the merge base of base and head to head as a
// tree comparison sees it (no renames): path → A, D, M or T.
func (g *gitRepo) changed(base, head string) map[string]string {
	g.t.Helper()
	fields := strings.Split(strings.TrimSuffix(string(g.git(nil, "diff", "-z", "--name-status", "--no-renames", base+"..."+head)), "\x00"), "\x00")
	out := map[string]string{}
	for i := 0; i+1 < len(fields); i += 2 {
		out[fields[i+1]] = fields[i][:1]
	}
	return out
}

// show is path's content at rev (false: no such file).
func (g *gitRepo) show(rev, p string) ([]byte, bool) {
	g.t.Helper()
	cmd := exec.Command("git", "-C", g.dir, "cat-file", "blob", rev+":"+p)
	out, err := cmd.Output()
	return out, err == nil
}

// ---- the artifacts the commits are made of ----

// pool is the shipped artifacts: each family's consistent and inconsistent
// units (internal/check/testdata/units) and the demo repository
// (examples/demo), keyed by path in the repository.
type pool struct {
	units map[string]map[string]files // family → "consistent"/"inconsistent" → files
	demo  files
}

var (
	poolOnce sync.Once
	thePool  pool
	poolErr  error
)

var families = []string{"autopilot", "jg", "outcome", "pace", "scc"}

func loadPool(t testing.TB) pool {
	t.Helper()
	poolOnce.Do(func() {
		thePool.units = map[string]map[string]files{}
		for _, fam := range families {
			thePool.units[fam] = map[string]files{}
			for _, v := range []string{"consistent", "inconsistent"} {
				fs, err := readDir(filepath.Join("..", "check", "testdata", "units", fam, v))
				if err != nil {
					poolErr = err
					return
				}
				thePool.units[fam][v] = fs
			}
		}
		thePool.demo, poolErr = readDir(filepath.Join("..", "..", "examples", "demo"))
		delete(thePool.demo, ".github/phasegate.yml") // the configuration is the scenario's
	})
	if poolErr != nil {
		t.Fatalf("reading the shipped artifacts: %v", poolErr)
	}
	return thePool
}

func readDir(dir string) (files, error) {
	out := files{}
	err := fs.WalkDir(os.DirFS(dir), ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(p)))
		out[p] = entry{data: data}
		return err
	})
	return out, err
}

// ---- scenarios ----

// sequences are the orders of events the App sees; each ends with the head
// checked (see runSequence).
var sequences = []string{"pr", "push-pr-race", "base-edit", "close-reopen", "config-change", "push"}

const (
	configPath  = ".github/phasegate.yml"
	workflowYML = "name: ci\non: pull_request\njobs:\n  gate:\n    runs-on: ubuntu-latest\n    steps:\n      - uses: PhaseGate/phasegate@v1\n"
	// loosened is the configuration edit an agent would like to merge.
	loosened = "identity: github-actions[bot]\nignore:\n  - \"**\"\n"
)

// configs are the default branch's configurations. Each names another
// poster than the App, so that the App posts no outcome (posting vets the
// outcomes' issues, which is not the checkout's business).
var configs = []string{
	"identity: github-actions[bot]\n",
	"identity: github-actions[bot]\nrules:\n  schema.convention: off\n",
	"identity: github-actions[bot]\nignore:\n  - \".pace/**\"\n",
	"identity: github-actions[bot]\nrules:\n  jg.scope.extra: warning\n  outcome.approval-blocking: off\n",
	"identity: github-actions[bot]\nlimits:\n  max_file_size: 2000000\n",
}

// scenario is one generated repository and the sequence of events played
// on it.
type scenario struct {
	seed        uint64
	index       int
	seq         string
	queue       string // "memory" or "redis"
	archiveOver int    // the App's TreeLimits.ArchiveOver (0: serve's default)
	features    []string
	repo        *gitRepo
	// base is main's commit, mid the feature branch's first commit (the
	// scratch branch of base-edit), head its second; next is main's
	// commit with another configuration (config-change).
	base, mid, head, next string
	cfgMain, cfgNext      string
}

func (sc *scenario) String() string {
	cfg := fmt.Sprintf("config %q", sc.cfgMain)
	if sc.cfgNext != "" {
		cfg += fmt.Sprintf(", then %q", sc.cfgNext)
	}
	return fmt.Sprintf("scenario %d (seed %d, sequence %s, %s queue, archive over %d files, %s; %s)", sc.index, sc.seed, sc.seq, sc.queue,
		sc.archiveOver, cfg, strings.Join(sc.features, ", "))
}

// generate makes scenario index of seed: the same seed and index always
// make the same commits (same SHAs: git's dates are fixed).
func generate(t testing.TB, seed uint64, index int) *scenario {
	t.Helper()
	p := loadPool(t)
	rng := rand.New(rand.NewPCG(seed, uint64(index)))
	sc := &scenario{seed: seed, index: index, seq: sequences[index%len(sequences)], queue: queueOf(index), repo: newGitRepo(t)}
	if rng.IntN(2) == 0 {
		sc.archiveOver = 1 // every commit read through its archive
	}
	base := files{"README.md": {data: []byte("# shop\n")}}
	for _, fam := range families {
		if rng.Float64() < 0.7 {
			for k, v := range p.units[fam]["consistent"] {
				base[k] = v
			}
		}
	}
	if rng.Float64() < 0.3 {
		for k, v := range p.demo {
			base[k] = v
		}
		sc.note("demo")
	}
	if rng.Float64() < 0.3 {
		base.set(".github/workflows/ci.yml", workflowYML)
	}
	sc.cfgMain = configs[rng.IntN(len(configs))]
	base.set(configPath, sc.cfgMain)
	mid := base.clone()
	sc.mutate(rng, p, mid, 1+rng.IntN(2))
	if rng.Float64() < 0.3 || sc.seq == "base-edit" && rng.Float64() < 0.8 {
		mid.set(configPath, loosened)
		sc.note("config edit (first commit)")
	}
	head := mid.clone()
	sc.mutate(rng, p, head, 1+rng.IntN(3))
	sc.adversarial(rng, p, head)

	specs := []commitSpec{{files: base, branch: "main"}, {files: mid, parent: 1, branch: "scratch"}, {files: head, parent: 2, branch: "feature"}}
	if sc.seq == "config-change" {
		sc.cfgNext = sc.cfgMain
		for sc.cfgNext == sc.cfgMain {
			sc.cfgNext = configs[rng.IntN(len(configs))]
		}
		next := base.clone()
		next.set(configPath, sc.cfgNext)
		specs = append(specs, commitSpec{files: next, parent: 1, branch: "main"})
	}
	g := sc.repo
	shas := g.commits(specs)
	sc.base, sc.mid, sc.head = shas[0], shas[1], shas[2]
	if len(shas) > 3 {
		sc.next = shas[3]
	}
	g.checkout(sc.head)
	return sc
}

// queueOf is scenario index's queue: by turns, shifted on each round of
// the sequences, so that two rounds play each sequence on both.
func queueOf(index int) string {
	return []string{"memory", "redis"}[(index+index/len(sequences))%2]
}

func (sc *scenario) note(s string) { sc.features = append(sc.features, s) }

// artifactPaths are fs's files of the shipped units and demo (not the
// configuration, the workflows or the README).
func artifactPaths(fs files) []string {
	return fs.paths(func(p string) bool {
		return !strings.HasPrefix(p, ".github/") && p != "README.md" && !strings.Contains(p, "pad/")
	})
}

// mutate applies n random edits to fs: a family's unit made
// inconsistent, a file broken, deleted or renamed, a unit added.
func (sc *scenario) mutate(rng *rand.Rand, p pool, fs files, n int) {
	for range n {
		arts := artifactPaths(fs)
		switch k := rng.IntN(5); {
		case k == 0 || len(arts) == 0:
			fam := families[rng.IntN(len(families))]
			for k := range p.units[fam]["consistent"] {
				delete(fs, k)
			}
			for k, v := range p.units[fam]["inconsistent"] {
				fs[k] = v
			}
			sc.note(fam + " inconsistent")
		case k == 1:
			a := arts[rng.IntN(len(arts))]
			fs[a] = entry{data: append(slices.Clone(fs[a].data), "\nbroken: [\n"...)}
			sc.note("broken " + a)
		case k == 2:
			a := arts[rng.IntN(len(arts))]
			delete(fs, a)
			sc.note("deleted " + a)
		case k == 3:
			a := arts[rng.IntN(len(arts))]
			to := path.Join(path.Dir(a), "old-"+path.Base(a))
			fs[to] = fs[a]
			delete(fs, a)
			sc.note("renamed " + a)
		default:
			fam := families[rng.IntN(len(families))]
			for k, v := range p.units[fam]["consistent"] {
				fs[k] = v
			}
			sc.note(fam + " added")
		}
	}
}

// adversarial adds at least one of the things a checkout and an API read
// may disagree on.
func (sc *scenario) adversarial(rng *rand.Rand, p pool, fs files) {
	var attrs []string
	// A change over 3,000 files costs the most (the fake builds each page
	// of 100 from all the files): every pull request scenario of the
	// first sequence, and one in twenty of the others.
	if sc.seq == sequences[0] || rng.Float64() < 0.05 {
		pad(sc, rng, fs)
	}
	for added := 0; added == 0; {
		for _, add := range adversaries {
			if rng.Float64() < 0.3 {
				added++
				if line := add.apply(sc, rng, p, fs); line != "" {
					attrs = append(attrs, line)
				}
				sc.note(add.name)
			}
		}
	}
	if len(attrs) > 0 {
		fs.set(".gitattributes", strings.Join(attrs, "\n")+"\n")
	}
}

// adversary adds one feature to a commit's files and returns the root
// .gitattributes line it needs ("" for none).
type adversary struct {
	name  string
	apply func(sc *scenario, rng *rand.Rand, p pool, fs files) string
}

var adversaries = []adversary{
	{"export-ignore of a broken artifact", func(sc *scenario, rng *rand.Rand, p pool, fs files) string {
		a := ".pace/day-11/gate-report.yaml"
		if arts := artifactPaths(fs); len(arts) > 0 {
			a = arts[rng.IntN(len(arts))]
		}
		fs[a] = entry{data: append(slices.Clone(fs[a].data), "\nbroken: [\n"...)}
		sc.note("export-ignored: " + a)
		if rng.IntN(2) == 0 { // in the file's own directory
			fs.set(path.Join(path.Dir(a), ".gitattributes"), path.Base(a)+" export-ignore\n")
			return ""
		}
		return a + " export-ignore"
	}},
	{"export-subst of an artifact", func(sc *scenario, rng *rand.Rand, p pool, fs files) string {
		// The checkout holds `$Format:…$` (not YAML a PACE gate report
		// accepts); git archive writes the valid report it expands to.
		report := string(p.units["pace"]["consistent"][".pace/day-1/gate-report.yaml"].data)
		enc := strings.NewReplacer("%", "%%", "\n", "%n").Replace(report)
		fs.set(".pace/day-5/gate-report.yaml", "$Format:"+enc+"$\n")
		return ".pace/day-5/gate-report.yaml export-subst"
	}},
	{"LFS pointer with filter=lfs", func(sc *scenario, rng *rand.Rand, p pool, fs files) string {
		fs.set(".pace/day-6/story-card.yaml", "version https://git-lfs.github.com/spec/v1\noid sha256:4d7a214614ab2935c943f9e0ff69d22eadbb8f32b1258daaa5e2ca24d17e2393\nsize 12345\n")
		return ".pace/day-6/story-card.yaml filter=lfs diff=lfs merge=lfs -text"
	}},
	{"symlink inside the tree", func(sc *scenario, rng *rand.Rand, p pool, fs files) string {
		fs[".pace/day-2/gate-report.yaml"] = entry{link: true, data: []byte("../day-1/gate-report.yaml")}
		return ""
	}},
	{"symlinks out of the tree", func(sc *scenario, rng *rand.Rand, p pool, fs files) string {
		fs[".pace/day-3/handoff.yaml"] = entry{link: true, data: []byte("../../../../../../etc/hostname")}
		fs["outcomes/feature-050-requirements.outcome.yaml"] = entry{link: true, data: []byte("/etc/passwd")}
		return ""
	}},
	{"submodule", func(sc *scenario, rng *rand.Rand, p pool, fs files) string {
		fs[".pace/day-4"] = entry{gitlink: strings.Repeat("5e", 20)}
		return ""
	}},
	{"case-colliding paths", func(sc *scenario, rng *rand.Rand, p pool, fs files) string {
		fs["outcomes/Feature-042-requirements.yaml"] = p.units["outcome"]["inconsistent"]["outcomes/feature-042-requirements.yaml"]
		fs["outcomes/feature-042-requirements.yaml"] = p.units["outcome"]["consistent"]["outcomes/feature-042-requirements.yaml"]
		return ""
	}},
	{"a file over 1 MiB", func(sc *scenario, rng *rand.Rand, p pool, fs files) string {
		line := "# padding padding padding padding padding padding padding\n"
		fs.set(".pace/day-8/gate-report.yaml", strings.Repeat(line, (1<<20)/len(line)+20)+"day: 8\n")
		return ""
	}},
	{"workflow edit", func(sc *scenario, rng *rand.Rand, p pool, fs files) string {
		if _, ok := fs[".github/workflows/ci.yml"]; ok {
			delete(fs, ".github/workflows/ci.yml")
		} else {
			fs.set(".github/workflows/ci.yml", workflowYML)
		}
		return ""
	}},
}

// pad adds over 3,000 files to fs, where they sort before .github/, between
// or after, and mostly the configuration edit they would hide from a
// listing cut at 3,000.
func pad(sc *scenario, rng *rand.Rand, fs files) {
	prefix := []string{".0pad", "pad", "zz-pad"}[rng.IntN(3)]
	n := 3001 + rng.IntN(40)
	for i := range n {
		fs.set(fmt.Sprintf("%s/f%04d.txt", prefix, i), fmt.Sprintf("%d\n", i))
	}
	if rng.Float64() < 0.7 {
		fs.set(configPath, loosened)
		sc.note("config edit")
	}
	sc.note(fmt.Sprintf("%d files under %s/", n, prefix))
}
