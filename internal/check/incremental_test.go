package check

import (
	"context"
	"crypto/sha1"
	"fmt"
	"io/fs"
	"maps"
	"math/rand/v2"
	"os"
	"path"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"testing/fstest"

	"github.com/phasegate/phasegate/internal/artifact"
	"github.com/phasegate/phasegate/internal/config"
	"github.com/phasegate/phasegate/internal/testutil"
)

// idFS is a MapFS with git-like object ids: a file's is the hash of its
// content, a directory's the hash of every path and content below it.
type idFS struct{ fstest.MapFS }

func (m idFS) ObjectID(name string, _ bool) (string, error) {
	if f, ok := m.MapFS[name]; ok {
		return fmt.Sprintf("blob %x", sha1.Sum(f.Data)), nil
	}
	h := sha1.New()
	prefix := name + "/"
	if name == "." {
		prefix = ""
	}
	found := false
	for _, p := range slices.Sorted(maps.Keys(m.MapFS)) {
		if strings.HasPrefix(p, prefix) {
			found = true
			fmt.Fprintf(h, "%q %x\n", p, sha1.Sum(m.MapFS[p].Data))
		}
	}
	if !found {
		return "", &fs.PathError{Op: "objectid", Path: name, Err: fs.ErrNotExist}
	}
	return fmt.Sprintf("tree %x", h.Sum(nil)), nil
}

// unitFiles are the files of testdata/units, by path under it.
func unitFiles(t testing.TB) map[string][]byte {
	out := map[string][]byte{}
	root := filepath.Join("testdata", "units")
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || strings.HasSuffix(p, ".golden") {
			return err
		}
		data, err := os.ReadFile(p)
		rel, _ := filepath.Rel(root, p)
		out[filepath.ToSlash(rel)] = data
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// incrementalSequences is how many change sequences
// TestIncrementalEqualsFull generates (issue 32: at least 1,000); fewer
// under the race detector, where .ci/run also runs the test without it.
var incrementalSequences = 1000

// TestIncrementalEqualsFull is the differential test of the unit cache:
// over generated sequences of changes to repositories made of the unit
// trees of testdata/units — files edited, added, deleted, renamed, moved
// between units; the configuration and phasegate's version changed — a
// run that reuses the results of every earlier run (one cache for all
// sequences) gives exactly what a run without a cache gives.
func TestIncrementalEqualsFull(t *testing.T) {
	files := unitFiles(t)
	paths := slices.Sorted(maps.Keys(files))
	cache := NewLRU(1 << 16)
	n := incrementalSequences
	if testutil.Race {
		n = 60
	}
	var hits, misses int64
	for seq := range n {
		rng := rand.New(rand.NewPCG(uint64(seq), 32))
		tree := fstest.MapFS{}
		// Two to four projects, each one family's unit tree.
		for i := range 2 + rng.IntN(3) {
			from := paths[rng.IntN(len(paths))]
			unit := strings.Join(strings.SplitN(from, "/", 3)[:2], "/") + "/"
			for _, p := range paths {
				if rest, ok := strings.CutPrefix(p, unit); ok {
					tree[fmt.Sprintf("p%d/%s", i, rest)] = &fstest.MapFile{Data: files[p], Mode: 0o644}
				}
			}
		}
		base := maps.Clone(tree)
		cfg, scope := config.Default(), "v1"
		for step := range 6 {
			if step > 0 {
				scope, cfg = mutate(rng, tree, files, paths, scope, cfg)
			}
			opts := Options{Config: cfg, Changed: changeOf(base, tree), KeepOutcomes: rng.IntN(2) == 0, Workers: 2}
			if rng.IntN(4) == 0 {
				opts.Changed = nil
			}
			full, err := sharedValidator.RunFS(context.Background(), tree, opts)
			if err != nil {
				t.Fatal(err)
			}
			opts.Cache, opts.CacheScope = cache, scope
			counter := &countingCache{Cache: cache}
			opts.Cache = counter
			var ids IDFS = idFS{tree}
			if seq%2 == 1 {
				ids = HashIDs(tree, nil) // as a checkout on disk is read
			}
			inc, err := sharedValidator.RunFS(context.Background(), ids, opts)
			if err != nil {
				t.Fatal(err)
			}
			hits, misses = hits+counter.hits.Load(), misses+counter.misses.Load()
			if step == 5 {
				// Nothing changed since: every unit comes from the cache.
				again := &countingCache{Cache: cache}
				opts.Cache = again
				if _, err := sharedValidator.RunFS(context.Background(), ids, opts); err != nil {
					t.Fatal(err)
				}
				if n := again.misses.Load(); n != 0 {
					t.Fatalf("sequence %d: a run repeated unchanged checked %d units again", seq, n)
				}
			}
			if !reflect.DeepEqual(comparable(full), comparable(inc)) {
				t.Fatalf("sequence %d step %d: incremental differs from full\nfull: %+v\nincremental: %+v\ntree: %v",
					seq, step, comparable(full), comparable(inc), slices.Sorted(maps.Keys(tree)))
			}
		}
	}
	t.Logf("%d sequences of 6 runs: %d units from the cache, %d checked", n, hits, misses)
	if hits == 0 || misses == 0 {
		t.Fatalf("the cache served %d units and missed %d: the test does not exercise it", hits, misses)
	}
}

// comparable is what a run must give alike: the outcomes are compared by
// path, and how many units came from the cache is not compared.
func comparable(r Result) Result {
	var paths []string
	for _, d := range r.Outcomes {
		paths = append(paths, d.Path)
	}
	r.Outcomes, r.Reused = nil, 0
	r.Findings = append([]Finding{{Message: strings.Join(paths, ",")}}, r.Findings...)
	return r
}

type countingCache struct {
	Cache
	hits, misses atomic.Int64
}

func (c *countingCache) Get(key [32]byte) (*Unit, bool) {
	u, ok := c.Cache.Get(key)
	if ok {
		c.hits.Add(1)
	} else {
		c.misses.Add(1)
	}
	return u, ok
}

// changeOf is the change from base to tree.
func changeOf(base, tree fstest.MapFS) map[string]Change {
	out := map[string]Change{}
	for p, f := range tree {
		switch b, ok := base[p]; {
		case !ok:
			out[p] = Added
		case string(b.Data) != string(f.Data):
			out[p] = Modified
		}
	}
	for p := range base {
		if _, ok := tree[p]; !ok {
			out[p] = Deleted
		}
	}
	return out
}

// mutate makes one random change to the tree, the configuration or the
// version.
func mutate(rng *rand.Rand, tree fstest.MapFS, files map[string][]byte, paths []string, scope string, cfg config.Config) (string, config.Config) {
	names := slices.Sorted(maps.Keys(tree))
	pick := func() string { return names[rng.IntN(len(names))] }
	switch op := rng.IntN(10); {
	case op == 7: // a file that is no artifact, beside one or in the code
		dir := path.Dir(pick())
		if rng.IntN(2) == 0 {
			dir = strings.SplitN(dir, "/", 2)[0] + "/src"
		}
		tree[fmt.Sprintf("%s/notes-%d.txt", dir, rng.IntN(3))] = &fstest.MapFile{Data: []byte("notes\n"), Mode: 0o644}
	case op == 0 && len(names) > 1: // delete
		delete(tree, pick())
	case op == 1: // rename within its directory
		p := pick()
		f := tree[p]
		delete(tree, p)
		tree[path.Join(path.Dir(p), "renamed-"+path.Base(p))] = f
	case op == 2: // move to another project's same place
		p := pick()
		f := tree[p]
		delete(tree, p)
		_, rest, _ := strings.Cut(p, "/")
		tree[fmt.Sprintf("p%d/%s", rng.IntN(4), rest)] = f
	case op == 3: // add a file of the fixtures, at its place in some project
		from := paths[rng.IntN(len(paths))]
		rest := strings.SplitN(from, "/", 3)[2]
		tree[fmt.Sprintf("p%d/%s", rng.IntN(4), rest)] = &fstest.MapFile{Data: files[from], Mode: 0o644}
	case op == 4: // configuration: a rule's severity
		cfg = cloneConfig(cfg)
		ids := slices.Sorted(maps.Keys(ruleIndex))
		cfg.Rules[ids[rng.IntN(len(ids))]] = []string{"off", "warning", "error"}[rng.IntN(3)]
	case op == 5: // configuration: an ignore glob
		cfg = cloneConfig(cfg)
		cfg.Ignore = append(cfg.Ignore, fmt.Sprintf("p%d/**", rng.IntN(4)))
	case op == 6: // phasegate's version
		scope = fmt.Sprintf("v%d", rng.IntN(3))
	default: // edit a file: a value, a line, or the end
		p := pick()
		data := slices.Clone(tree[p].Data)
		switch rng.IntN(4) {
		case 0:
			data = append(data, "\n# edited\n"...)
		case 1:
			data = data[:rng.IntN(len(data)+1)]
		case 2:
			for _, w := range [][2]string{{"SHIP", "HOLD"}, {"PASS", "FAIL"}, {"true", "false"}, {"completed", "in_progress"}, {"approve", "reject"}} {
				if strings.Contains(string(data), w[0]) {
					data = []byte(strings.Replace(string(data), w[0], w[1], 1))
					break
				}
			}
		default:
			lines := strings.Split(string(data), "\n")
			i := rng.IntN(len(lines))
			lines = slices.Delete(lines, i, i+1)
			data = []byte(strings.Join(lines, "\n"))
		}
		tree[p] = &fstest.MapFile{Data: data, Mode: 0o644}
	}
	return scope, cfg
}

func cloneConfig(c config.Config) config.Config {
	c.Rules = maps.Clone(c.Rules)
	if c.Rules == nil {
		c.Rules = map[string]string{}
	}
	c.Ignore = slices.Clone(c.Ignore)
	return c
}

// flakyFS fails the first read of one file (a transient API error).
type flakyFS struct {
	idFS
	name   string
	failed *atomic.Bool
}

func (f flakyFS) Open(name string) (fs.File, error) {
	if name == f.name && f.failed.CompareAndSwap(false, true) {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrPermission}
	}
	return f.idFS.Open(name)
}

// TestCacheKeepsNoUnreadableFile: a unit one of whose files could not be
// read is not kept, so the next run reads it and gives what a full run
// gives, not the read failure again.
func TestCacheKeepsNoUnreadableFile(t *testing.T) {
	tree := fstest.MapFS{}
	for p, data := range unitFiles(t) {
		if rest, ok := strings.CutPrefix(p, "jg/consistent/"); ok {
			tree[rest] = &fstest.MapFile{Data: data, Mode: 0o644}
		}
	}
	var victim string
	for _, p := range slices.Sorted(maps.Keys(tree)) {
		if strings.HasSuffix(p, ".yaml") || strings.HasSuffix(p, ".json") {
			victim = p
			break
		}
	}
	cache := NewLRU(100)
	var failed atomic.Bool
	opts := Options{Config: config.Default(), Cache: cache, CacheScope: "v1"}
	first, err := sharedValidator.RunFS(context.Background(), flakyFS{idFS{tree}, victim, &failed}, opts)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(first.Findings, func(f Finding) bool { return f.Rule == artifact.RuleRead }) {
		t.Fatalf("the flaky read of %s gave no finding: %+v", victim, first.Findings)
	}
	again, err := sharedValidator.RunFS(context.Background(), idFS{tree}, opts)
	if err != nil {
		t.Fatal(err)
	}
	full, err := sharedValidator.RunFS(context.Background(), tree, Options{Config: config.Default()})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(comparable(again), comparable(full)) {
		t.Fatalf("after a failed read, the cached run gives %+v, a full run %+v", again.Findings, full.Findings)
	}
}
