package check

import (
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"slices"
	"strings"
	"sync"

	lru "github.com/hashicorp/golang-lru/v2"

	"github.com/phasegate/phasegate/internal/artifact"
)

// IDFS is an FS that knows the git object id of each of its entries
// without reading them (ghclient.CommitFS: the ids are in the tree
// listings). A run over an IDFS with Options.Cache set checks only the
// units whose inputs changed.
type IDFS interface {
	fs.FS
	// ObjectID is the id of the entry at name — with follow, of what a
	// final symlink leads to — as "blob <id>", "tree <id>" or
	// "link <id>". An absent entry is an error wrapping fs.ErrNotExist.
	ObjectID(name string, follow bool) (string, error)
}

// Cache keeps the result of each unit checked, keyed by the unit's inputs
// (Unit, Key). It may be shared by runs and goroutines; what it returns
// is never modified.
type Cache interface {
	Get(key [32]byte) (*Unit, bool)
	Add(key [32]byte, u *Unit)
}

// Unit is a unit's result as a Cache keeps it: valid for a later run
// whose unit has the same key (its files and their ids, the
// configuration, the scope) and in which every Dep reads the same.
type Unit struct {
	Deps      []Dep     `json:"deps,omitempty"`
	Artifacts int       `json:"artifacts"`
	Findings  []Finding `json:"findings,omitempty"`
	Statuses  []Status  `json:"statuses,omitempty"`
}

// Dep is one more input the unit's rules read: a path of the tree as one
// of the FS's operations saw it (Path starting with depOpen, depStat or
// depLstat) and what it saw ("-": absent), or a question about the
// change (Path starting with depChange) and its answer.
type Dep struct {
	Path string `json:"path"`
	ID   string `json:"id"`
}

// What an operation of the FS sees of a path, as Dep paths: Open and
// ReadDir see the content (the object id, following a final symlink);
// Stat sees a file's content (its size) but of a directory only that it
// is one; Lstat and ReadLink see the same without following a final
// symlink. A directory's listing is known by its tree id, which also
// changes with anything below it: a conservative answer.
const (
	depOpen  = "o:"
	depStat  = "s:"
	depLstat = "l:"
)

// Questions about the change, as Dep paths: how one file changed, whether
// any file under a prefix changed, the whole change.
const (
	depChange   = "\x00"
	depChangeOf = depChange + "of:"
	depTouches  = depChange + "under:"
	depChanges  = depChange + "all"
)

// LRU is a Cache in memory holding the n units used last.
type LRU struct{ c *lru.Cache[[32]byte, *Unit] }

// NewLRU makes an LRU of n units (n > 0).
func NewLRU(n int) *LRU {
	c, _ := lru.New[[32]byte, *Unit](max(n, 1)) // errs only on n <= 0
	return &LRU{c}
}

func (c *LRU) Get(key [32]byte) (*Unit, bool) { return c.c.Get(key) }
func (c *LRU) Add(key [32]byte, u *Unit)      { c.c.Add(key, u) }

// unitCache is a run's use of Options.Cache: nil when the run cannot use
// one (no cache, or an FS without object ids).
type unitCache struct {
	cache Cache
	ids   IDFS
	salt  [32]byte
}

func newUnitCache(fsys fs.FS, opts *Options) *unitCache {
	ids, ok := fsys.(IDFS)
	if opts.Cache == nil || !ok {
		return nil
	}
	cfg, err := json.Marshal(opts.Config)
	if err != nil {
		return nil
	}
	h := sha256.New()
	fmt.Fprintf(h, "phasegate unit v1\x00%s\x00%s\x00%t\x00%d\x00", opts.CacheScope, opts.Prefix, opts.Changed != nil, len(cfg))
	h.Write(cfg)
	uc := &unitCache{cache: opts.Cache, ids: ids}
	h.Sum(uc.salt[:0])
	return uc
}

// key is the unit's key: the salt, and each file as discovered with its
// object id and how it changed. ok is false when the unit must be checked
// afresh: an id could not be read, or (KeepOutcomes) it holds a Phase
// Outcome — or a file whose content may make it one — that the change adds
// or modifies, which the run must hand out.
func (uc *unitCache) key(fg fileGroup, opts *Options) (key [32]byte, ok bool) {
	h := sha256.New()
	h.Write(uc.salt[:])
	fmt.Fprintf(h, "%d\x00%s\x00", len(fg.key), fg.key)
	for _, f := range fg.files {
		id, err := uc.ids.ObjectID(f.Path, true)
		if err != nil {
			return key, false
		}
		ch := opts.Changed[f.Rel]
		maybeOutcome := f.Kind == nil || f.Kind.ID == "outcome.phase-outcome"
		if opts.KeepOutcomes && maybeOutcome && (ch == Added || ch == Modified) {
			return key, false
		}
		kind, problem := "", ""
		if f.Kind != nil {
			kind = f.Kind.ID
		}
		if f.Problem != nil {
			problem = fmt.Sprint(*f.Problem)
		}
		fmt.Fprintf(h, "%q %q %q %q %t %t %t %t %q %q\n", f.Rel, f.Path, id, kind, f.Sniff, f.ByPath, f.Named, f.Dir, problem, ch)
	}
	h.Sum(key[:0])
	return key, true
}

// lookup is the cached result of the unit, when every input it read reads
// the same in this run.
func (uc *unitCache) lookup(key [32]byte, opts *Options) (groupResult, bool) {
	u, ok := uc.cache.Get(key)
	if !ok {
		return groupResult{}, false
	}
	for _, d := range u.Deps {
		if uc.read(d.Path, opts) != d.ID {
			return groupResult{}, false
		}
	}
	return groupResult{artifacts: u.Artifacts, reused: true, findings: slices.Clone(u.Findings), statuses: slices.Clone(u.Statuses)}, true
}

// read answers a Dep's question in this run; "" when it cannot.
func (uc *unitCache) read(p string, opts *Options) string {
	if answer, ok := changeAnswer(p, opts.Changed); ok {
		return answer
	}
	if len(p) < 2 {
		return ""
	}
	op, name := p[:2], p[2:]
	id, err := uc.ids.ObjectID(name, op != depLstat)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "-"
	case err != nil:
		return ""
	case op != depOpen && strings.HasPrefix(id, "tree "):
		return "tree"
	}
	return id
}

// store keeps a unit's result with the inputs its rules read (rec), unless
// a read failed for a reason other than absence — a lookup of its rules,
// or one of its own files (a RuleRead finding): the result may not say
// what the files say — or the unit kept Phase Outcomes.
func (uc *unitCache) store(key [32]byte, res groupResult, rec *depFS, deps map[string]string, opts *Options) {
	// The unit's rules ran in this goroutine: rec is read without its lock.
	unread := func(f Finding) bool { return f.Rule == artifact.RuleRead } // may read next time
	if len(res.outcomes) > 0 || rec != nil && rec.bad || slices.ContainsFunc(res.findings, unread) {
		return
	}
	u := &Unit{Artifacts: res.artifacts, Findings: slices.Clone(res.findings), Statuses: slices.Clone(res.statuses)}
	if rec != nil {
		for p := range rec.seen {
			deps[p] = uc.read(p, opts)
		}
	}
	for _, p := range slices.Sorted(maps.Keys(deps)) {
		if deps[p] == "" {
			return // an input that cannot be told again
		}
		u.Deps = append(u.Deps, Dep{Path: p, ID: deps[p]})
	}
	uc.cache.Add(key, u)
}

// changeAnswer answers a question about the change (a Dep path starting
// with depChange), as the rules' recording and a later run's check of it
// both do; ok is false for any other path.
func changeAnswer(q string, changed map[string]Change) (answer string, ok bool) {
	if q == depChanges {
		return changeHash(changed), true
	}
	if prefix, ok := strings.CutPrefix(q, depTouches); ok {
		return fmt.Sprint(touches(changed, prefix)), true
	}
	if rel, ok := strings.CutPrefix(q, depChangeOf); ok {
		return "=" + string(changed[rel]), true // "" is no answer
	}
	return "", false
}

// changeHash sums the whole change.
func changeHash(changed map[string]Change) string {
	h := sha256.New()
	for _, p := range slices.Sorted(maps.Keys(changed)) {
		fmt.Fprintf(h, "%q %q\n", p, changed[p])
	}
	return fmt.Sprintf("%x", h.Sum(nil))
}

// touches says whether any file under prefix changed.
func touches(changed map[string]Change, prefix string) bool {
	for p := range changed {
		if len(p) > len(prefix) && p[:len(prefix)] == prefix {
			return true
		}
	}
	return false
}

// depFS records the names the rules look up in the tree, and whether a
// lookup failed for a reason other than absence.
type depFS struct {
	fs.FS
	mu   sync.Mutex
	seen map[string]bool
	bad  bool
}

// note records a lookup and returns its error.
func (d *depFS) note(op, name string, err error) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.seen[op+name] = true
	d.bad = d.bad || err != nil && !errors.Is(err, fs.ErrNotExist)
	return err
}

func (d *depFS) Open(name string) (fs.File, error) {
	f, err := d.FS.Open(name)
	return f, d.note(depOpen, name, err)
}

func (d *depFS) Stat(name string) (fs.FileInfo, error) {
	fi, err := fs.Stat(d.FS, name)
	return fi, d.note(depStat, name, err)
}

func (d *depFS) ReadDir(name string) ([]fs.DirEntry, error) {
	es, err := fs.ReadDir(d.FS, name)
	return es, d.note(depOpen, name, err)
}

func (d *depFS) ReadLink(name string) (string, error) {
	t, err := fs.ReadLink(d.FS, name)
	return t, d.note(depLstat, name, err)
}

func (d *depFS) Lstat(name string) (fs.FileInfo, error) {
	fi, err := fs.Lstat(d.FS, name)
	return fi, d.note(depLstat, name, err)
}
