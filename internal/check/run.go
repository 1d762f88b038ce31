package check

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path"
	"runtime"
	"slices"
	"strings"
	"sync"

	"github.com/phasegate/phasegate/internal/artifact"
	"github.com/phasegate/phasegate/internal/config"
)

// Options of a run.
type Options struct {
	// Config is the repository configuration (globs, ignores, limits).
	Config config.Config
	// Prefix is prepended to every finding's file (used when several roots
	// are checked at once, so that paths stay unambiguous).
	Prefix string
	// KeepOutcomes keeps the decoded Phase Outcomes that Changed has as
	// added or modified in Result.Outcomes (the jobs post them); off,
	// nothing but findings and statuses outlives the unit being checked.
	KeepOutcomes bool
	// Workers is the number of units checked in parallel; 0 means GOMAXPROCS.
	Workers int
	// Changed maps the files (relative to the root, '/') changed since the
	// base revision to how they changed; nil when there is no base, and the
	// commit-aware rules are then skipped.
	Changed map[string]Change
	// Kind, when set, is the kind of a root that is a single file, whatever
	// its path or content say (--kind).
	Kind *artifact.Kind
	// RootName names the root in the nothing-found warning and in errors;
	// the root as given (Run) or Dir (RunFS) when empty.
	RootName string
	// Dir is, for RunFS, the path inside the FS to check: a directory, or a
	// single file checked as named (--kind applies, a file of no kind is a
	// finding); "" means the whole FS. Paths in findings stay relative to
	// the FS, not to Dir, so a Dir inside a marker directory (.pace, …)
	// keeps its place in the conventions. Run sets it.
	Dir string
	// Cache, when set and the FS knows its object ids (IDFS), keeps each
	// unit's result keyed by its inputs: a unit whose files, and the
	// other paths and questions about the change its rules read, are the
	// same as in an earlier run is not read nor checked again.
	// CacheScope must then name everything else the result depends on
	// that Options does not hold: the repository and phasegate's version.
	Cache      Cache
	CacheScope string
	// Known holds, for Run with Cache, the git blob ids of files whose
	// content git already knows (history.KnownIDs: the index's entries
	// whose stat data the file still matches), by path relative to the
	// run's root; they are not read to be hashed. Every other file is.
	Known map[string]string
}

// Change is how a file changed since the base revision.
type Change string

const (
	Added    Change = "added"
	Modified Change = "modified"
	Deleted  Change = "deleted"
)

// Result of a run.
type Result struct {
	Artifacts int
	// Reused counts the units whose results came from Options.Cache.
	Reused int
	// Findings, sorted.
	Findings []Finding
	Statuses []Status
	// Outcomes are the decoded Phase Outcome documents the change adds or
	// modifies (Options.KeepOutcomes: to post them on their issues),
	// sorted by path.
	Outcomes []*artifact.Document
}

// Run is RunFS on the OS, for root a directory or one file. A directory is
// checked as RunFS checks os.DirFS of it, or, for a root inside a marker
// directory (.pace, .pipeline, …), of the directory holding the marker
// (artifact.ContextRoot), with Dir the rest: the root keeps its place in the
// conventions. Discovery resolves symlinks inside that FS (see
// artifact.WalkFS); the rules read it through an os.Root of the same
// directory, which the paths agents write in artifacts cannot leave, even
// while the tree changes. Discovery and the artifact reads go through
// os.DirFS, not the os.Root: it opens each path one directory at a time,
// which made a run over 10,000 files markedly slower. A single file is
// checked as named (its findings carry the path as given; --kind applies),
// through the FS of the directory holding it, with no tree for the rules to
// read.
func (v *Validator) Run(ctx context.Context, root string, opts Options) (Result, error) {
	info, err := os.Stat(root)
	if err != nil {
		return Result{}, fmt.Errorf("reading %s: %w", root, err)
	}
	opts.RootName = cmp.Or(opts.RootName, root)
	if !info.IsDir() {
		dir, name, prefix := artifact.FileRoot(root)
		opts.Dir = name
		return v.runFS(ctx, os.DirFS(dir), opts, runPlace{namePrefix: prefix})
	}
	base, prefix := artifact.ContextRoot(root)
	tree, err := os.OpenRoot(base)
	if err != nil {
		return Result{}, fmt.Errorf("opening %s: %w", base, err)
	}
	defer tree.Close()
	opts.Dir = strings.TrimSuffix(prefix, "/")
	fsys := os.DirFS(base)
	if opts.Cache != nil {
		fsys = HashIDs(fsys, opts.Known)
	}
	return v.runFS(ctx, fsys, opts, runPlace{root: tree})
}

// RunFS discovers the artifacts under opts.Dir of fsys (the whole FS when
// empty; a directory, or one file checked as named), decodes them, checks
// each against its schema, and applies the rule layer to each unit of
// related artifacts (see artifact.GroupKey). Every read goes through fsys —
// os.DirFS (or an os.Root's FS) for the CLI and the action, a tree fetched
// lazily for the App — so no rule knows where its files came from. Files
// are read only as far as the size limit (an oversized file only for its
// head), and only those discovery hands out (artifacts and candidates to
// sniff) and those a rule asks for: the rules read other files of the tree
// through fsys too (Group.ReadFile, confined to it, its symlinks resolved
// inside it). Paths in findings are relative to fsys.
//
// Units are checked in parallel and dropped once checked, so memory stays
// flat in the number of files. The error is for a Dir that cannot be read
// at all or a cancelled context; everything wrong with a file is a finding.
func (v *Validator) RunFS(ctx context.Context, fsys fs.FS, opts Options) (Result, error) {
	return v.runFS(ctx, fsys, opts, runPlace{})
}

// runPlace is what Run knows of the FS it hands to runFS.
type runPlace struct {
	// namePrefix is put in front of a single file's path: the directory
	// Run opened it in (see artifact.FileRoot).
	namePrefix string
	// root, when set, is an os.Root of the same directory, for the rules to
	// read (Group.ReadFile): it confines symlinks itself.
	root *os.Root
}

// runFS is RunFS, placed by Run.
func (v *Validator) runFS(ctx context.Context, fsys fs.FS, opts Options, place runPlace) (Result, error) {
	dir := cmp.Or(opts.Dir, ".")
	name := cmp.Or(opts.RootName, dir)
	info, err := fs.Stat(fsys, dir)
	if err != nil {
		return Result{}, fmt.Errorf("reading %s: %w", name, err)
	}
	isDir := info.IsDir()
	r := &runner{v: v, fsys: fsys, opts: &opts, cache: newUnitCache(fsys, &opts)}
	switch {
	case !isDir: // a single file has no tree for the rules to read
	case place.root != nil:
		r.tree, r.root = place.root.FS(), place.root
	default:
		r.tree = fsys
	}
	disc := artifact.DiscoverOptions{Globs: opts.Config.Artifacts, Ignore: opts.Config.Ignore, Kind: opts.Kind, Prefix: place.namePrefix, Dir: dir}
	res, err := r.run(ctx, disc, name)
	if err != nil {
		return Result{}, err
	}
	if err := v.Err(); err != nil {
		return Result{}, err
	}
	res.Findings = append(res.Findings, outcomeRemoved(&opts)...)
	if res.Artifacts == 0 && isDir {
		res.Findings = append(res.Findings, Finding{Rule: RuleNothingFound, Severity: SeverityWarning,
			Message: fmt.Sprintf("no artifact found under %s: no file there is at a kind's path (.pace/day-N/, .pipeline/<issue>/, artifacts/<task_id>/, .autopilot/, .planning/phases/<id>/, *.outcome.yaml; at a path other tools share, with the kind's content) or has a kind's content, so nothing was checked — point phasegate at the repository or project root, add an `artifacts:` glob in .github/phasegate.yml, or name a file with --kind KIND", name)})
	}
	Sort(res.Findings)
	SortStatuses(res.Statuses)
	slices.SortFunc(res.Outcomes, func(a, b *artifact.Document) int { return strings.Compare(a.Path, b.Path) })
	return res, nil
}

// runner is one run: the FS files are discovered and read in, the tree the
// rules read (the same FS, or an os.Root's of it; nil for a single file) and
// the options.
type runner struct {
	v     *Validator
	fsys  fs.FS
	tree  fs.FS
	root  *os.Root // when set, tree is its FS (Group.root)
	opts  *Options
	cache *unitCache // nil: every unit is checked
}

// run streams the units of the walk to workers that check them, and
// gathers their results (unsorted). name names the root in errors.
func (r *runner) run(ctx context.Context, disc artifact.DiscoverOptions, name string) (Result, error) {
	workers := cmp.Or(max(r.opts.Workers, 0), runtime.GOMAXPROCS(0))
	jobs := make(chan *fileGroup, workers)
	var (
		mu  sync.Mutex
		res Result
		wg  sync.WaitGroup
	)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for g := range jobs {
				if ctx.Err() != nil {
					continue // drain
				}
				gr := r.checkGroup(*g)
				mu.Lock()
				res.Artifacts += gr.artifacts
				if gr.reused {
					res.Reused++
				}
				res.Findings = append(res.Findings, gr.findings...)
				res.Statuses = append(res.Statuses, gr.statuses...)
				res.Outcomes = append(res.Outcomes, gr.outcomes...)
				mu.Unlock()
			}
		}()
	}
	walkErr := streamGroups(r.fsys, disc, name, func(g *fileGroup) error {
		select {
		case jobs <- g:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	})
	close(jobs)
	wg.Wait()
	if walkErr != nil {
		return Result{}, walkErr
	}
	if err := ctx.Err(); err != nil {
		return Result{}, fmt.Errorf("checking %s: %w", name, err)
	}
	return res, nil
}

// FamilyOrder is the order in which families are listed: the order of the
// family table (artifact.Families).
var FamilyOrder = func() []string {
	var out []string
	for _, f := range artifact.Families() {
		out = append(out, f.ID)
	}
	return out
}()

// SortStatuses orders statuses by family (FamilyOrder), then unit.
func SortStatuses(sts []Status) {
	rank := func(f string) int { return cmp.Or(slices.Index(FamilyOrder, f)+1, len(FamilyOrder)+1) }
	// Two groups can name one unit (an SCC task's files in two folders):
	// the order must not depend on which worker finished first.
	slices.SortStableFunc(sts, func(a, b Status) int {
		return cmp.Or(cmp.Compare(rank(a.Family), rank(b.Family)), strings.Compare(a.Unit, b.Unit),
			strings.Compare(a.State, b.State), strings.Compare(firstFile(a), firstFile(b)))
	})
}

// firstFile is the file of a status's first decision, "" when none.
func firstFile(s Status) string {
	if len(s.Decisions) == 0 {
		return ""
	}
	return s.Decisions[0].File
}

// fileGroup is the discovered files of one unit.
type fileGroup struct {
	key   string
	scope string
	files []artifact.File
}

// streamGroups walks fsys (artifact.WalkFS) and hands each unit to emit as
// soon as the walk has left the unit's scope (artifact.GroupScope): the walk
// is depth-first in lexical order, so no later file can belong to it. Only
// the units under the directories being walked are held at any time, so
// memory does not grow with the number of files. Files classified by content
// are not known yet: each is its own unit (content-classified kinds are
// single-file kinds). An error of emit is returned as is; the walk's own
// errors name the root (name).
func streamGroups(fsys fs.FS, disc artifact.DiscoverOptions, name string, emit func(*fileGroup) error) error {
	open := map[string]*fileGroup{}
	var order []string // open keys, oldest first
	var emitErr error  // emit's error, returned as is
	flush := func(next string, all bool) error {
		kept := order[:0]
		for _, k := range order {
			g := open[k]
			if all || !strings.HasPrefix(next, g.scope) {
				delete(open, k)
				if err := emit(g); err != nil {
					emitErr = err
					return err
				}
				continue
			}
			kept = append(kept, k)
		}
		order = kept
		return nil
	}
	err := artifact.WalkFS(fsys, disc, func(f artifact.File) error {
		if err := flush(f.Rel, false); err != nil {
			return err
		}
		key, scope := f.Rel, f.Rel
		if f.Kind != nil {
			key = artifact.GroupKey(f.Rel, f.Kind)
			scope = artifact.GroupScope(key, f.Kind)
		}
		g := open[key]
		if g == nil {
			g = &fileGroup{key: key, scope: scope}
			open[key] = g
			order = append(order, key)
		}
		g.files = append(g.files, f)
		return nil
	})
	if err != nil && err != emitErr {
		return fmt.Errorf("checking %s: %w", name, err)
	}
	if err != nil {
		return err
	}
	return flush("", true)
}

type groupResult struct {
	artifacts int
	reused    bool // from Options.Cache
	findings  []Finding
	statuses  []Status
	outcomes  []*artifact.Document
}

// checkGroup decodes and schema-checks every file of a unit, then applies
// the family's rules to the decoded artifacts. A PACE project is checked one
// day at a time (checkPACEUnit).
func (r *runner) checkGroup(fg fileGroup) groupResult {
	var key [32]byte
	ok := false
	if r.cache != nil {
		key, ok = r.cache.key(fg, r.opts)
	}
	if !ok {
		return r.checkUnit(fg, r.tree, nil) // nothing to keep: nothing recorded
	}
	if res, hit := r.cache.lookup(key, r.opts); hit {
		return res
	}
	var rec *depFS
	tree := r.tree
	if tree != nil {
		rec = &depFS{FS: tree, seen: map[string]bool{}}
		tree = rec
	}
	deps := map[string]string{}
	res := r.checkUnit(fg, tree, deps)
	r.cache.store(key, res, rec, deps, r.opts)
	return res
}

// checkUnit is checkGroup without the cache: tree is what the rules read,
// and deps (nil: none) gets the questions about the change they asked,
// with the answers.
func (r *runner) checkUnit(fg fileGroup, tree fs.FS, deps map[string]string) groupResult {
	opts := r.opts
	limits := opts.Config.Limits.ArtifactLimits()
	var res groupResult
	g := &Group{Key: opts.Prefix + fg.key, files: tree, root: r.root, limit: limits.MaxFileSize}
	c := &ruleCtx{opts: opts, deps: deps}
	if k := fg.files[0].Kind; k != nil && k.Family == "pace" {
		r.checkPACEUnit(c, fg, g, limits, &res)
	} else {
		for _, f := range fg.files {
			if doc := r.checkOne(f, limits, &res); doc != nil {
				g.Docs = append(g.Docs, doc)
			}
		}
		if len(g.Docs) > 0 && families[g.Docs[0].Kind.Family] != nil {
			families[g.Docs[0].Kind.Family].check(c, g)
		}
	}
	res.findings = append(res.findings, c.findings...)
	res.statuses = append(res.statuses, c.statuses...)
	return res
}

// checkOne reads, decodes and schema-checks one file of a unit into res, and
// returns its document when it decoded (nil otherwise).
func (r *runner) checkOne(f artifact.File, limits artifact.Limits, res *groupResult) *artifact.Document {
	opts := r.opts
	doc, fs := r.v.checkFile(r.fsys, f, limits, opts)
	if doc == nil && fs == nil {
		return nil // not an artifact
	}
	if len(fs) == 1 && (fs[0].Rule == RuleUnknownKind || f.Dir || f.Kind == nil && fs[0].Rule == artifact.RuleRead) {
		res.findings = append(res.findings, fs...)
		return nil // not (known to be) an artifact: named, or unreadable
	}
	res.artifacts++
	res.findings = append(res.findings, fs...)
	if doc == nil || !doc.Decoded {
		return nil
	}
	if checkedHook != nil {
		checkedHook(doc)
	}
	if ch := opts.Changed[f.Rel]; opts.KeepOutcomes && doc.Kind.ID == "outcome.phase-outcome" && (ch == Added || ch == Modified) {
		res.outcomes = append(res.outcomes, doc.WithoutPositions())
	}
	return doc
}

// checkedHook, when set (by tests), sees every decoded document as it is
// checked.
var checkedHook func(*artifact.Document)

// checkPACEUnit is checkGroup for the PACE family (a .pace directory and its
// plan, or a file a glob makes PACE's), in flat memory however
// many days it holds: it decodes the files outside the day directories (the
// plan, the advisory backlog) first, then each day's files in day order,
// applies the day's rules and drops them; only the plan and the latest day
// (for the unit's status) are held across days.
func (r *runner) checkPACEUnit(c *ruleCtx, fg fileGroup, g *Group, limits artifact.Limits, res *groupResult) {
	opts := r.opts
	days := map[int][]artifact.File{}
	var plan, backlog *artifact.Document
	for _, f := range fg.files {
		if n, ok := paceDayOf(opts.Prefix + f.Rel); ok {
			days[n] = append(days[n], f)
			continue
		}
		doc := r.checkOne(f, limits, res)
		if doc == nil || doc.Kind.Family != "pace" {
			continue
		}
		switch doc.Kind.ID {
		case "pace.plan":
			plan = doc
		case "pace.advisory-backlog":
			backlog = doc
		}
	}
	u := newPaceUnit(c, plan)
	for _, n := range slices.Sorted(maps.Keys(days)) {
		var day *paceDay
		for _, f := range days[n] {
			doc := r.checkOne(f, limits, res)
			if doc == nil {
				continue
			}
			if day == nil {
				day = &paceDay{n: n, dir: path.Dir(doc.Path)}
			}
			day.add(c, doc)
		}
		delete(days, n)
		if day != nil {
			u.checkDay(day)
		}
	}
	u.finish(g, backlog)
}

// sniffSize is how much of an unclassified file is read to classify it.
const sniffSize = 64 << 10

// checkFile reads (from fsys), classifies (if needed), decodes and validates
// one file.
// It returns the decoded document (nil when the file could not be decoded or
// is not an artifact) and the file's findings; both nil means the file is not
// an artifact.
func (v *Validator) checkFile(fsys fs.FS, f artifact.File, limits artifact.Limits, opts *Options) (*artifact.Document, []Finding) {
	rel := opts.Prefix + f.Rel
	problem := func(k *artifact.Kind, p artifact.Problem) []Finding {
		id := ""
		if k != nil {
			id = k.ID
		}
		return []Finding{{File: rel, Line: p.Pos.Line, Column: p.Pos.Column, Kind: id, Rule: p.Rule, Severity: SeverityError, Message: p.Message}}
	}
	if f.Problem != nil {
		return nil, problem(f.Kind, *f.Problem)
	}
	data, size, err := readLimited(fsys, f.Path, limits.MaxFileSize)
	if err != nil {
		// Never skipped silently, not even a candidate that might not be
		// an artifact: its content could have made it one (an outcome).
		what := "the file"
		if f.Kind == nil {
			what = "the file to tell whether it is an artifact"
		}
		return nil, problem(f.Kind, artifact.Problem{Pos: artifact.Pos{Line: 1, Column: 1}, Rule: artifact.RuleRead, Message: fmt.Sprintf("could not read %s: %v", what, errors.Unwrap(err))})
	}
	k := f.Kind
	var unclaimed *artifact.Kind
	if k != nil && f.ByPath && !artifact.Claims(k, data[:min(len(data), sniffSize)]) {
		// Another tool's file at a path this kind shares: not ours, unless
		// its content is another kind's.
		unclaimed, k = k, nil
	}
	if k == nil {
		k = artifact.Sniff(f.Rel, data[:min(len(data), sniffSize)])
		if k == nil {
			if f.Named {
				fd := v.unknownKind(rel, data, limits)
				if unclaimed != nil {
					fd.Message += fmt.Sprintf(" (its path is where %s lives, but other tools write files there too, and its content lacks what marks the kind: %s)", unclaimed.ID, unclaimed.Paths)
				}
				return nil, []Finding{fd}
			}
			return nil, nil
		}
	}
	if size > limits.MaxFileSize {
		return nil, problem(k, artifact.SizeProblem(size, limits.MaxFileSize))
	}
	doc := artifact.Decode(rel, k, data, limits)
	var out []Finding
	for _, p := range doc.Problems {
		out = append(out, problem(k, p)...)
	}
	out = append(out, conventionSeverity(v.Validate(doc), opts.Config.Rules)...)
	if out == nil {
		out = []Finding{}
	}
	return doc, out
}

// readLimited reads at most max bytes of the file p of fsys and returns its
// real size (as Stat says). A file over the limit is not read past its head.
func readLimited(fsys fs.FS, p string, limit int64) ([]byte, int64, error) {
	f, err := fsys.Open(p)
	if err != nil {
		return nil, 0, fmt.Errorf("opening %s: %w", p, err)
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return nil, 0, fmt.Errorf("reading %s: %w", p, err)
	}
	if info.Size() > limit {
		// Read only the head, enough to classify an unclassified file.
		head := make([]byte, min(limit, sniffSize))
		n, err := io.ReadFull(f, head)
		if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) {
			return nil, 0, fmt.Errorf("reading %s: %w", p, err)
		}
		return head[:n], info.Size(), nil
	}
	data, err := readSized(f, info.Size(), limit+1)
	if err != nil {
		return nil, 0, fmt.Errorf("reading %s: %w", p, err)
	}
	return data, int64(len(data)), nil
}

// readSized reads at most most bytes of r, whose size Stat said: one read of
// that size (and one that sees its end), not io.ReadAll's doubling from 512
// bytes, an allocation and a system call per doubling.
func readSized(r io.Reader, size, most int64) ([]byte, error) {
	buf := make([]byte, min(max(size, 0)+1, most))
	n, err := io.ReadFull(r, buf)
	switch {
	case errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF):
		return buf[:n], nil
	case err != nil:
		return nil, err
	}
	// The file grew since Stat (or said no size): read on, up to most.
	rest, err := io.ReadAll(io.LimitReader(r, most-int64(n)))
	if err != nil {
		return nil, err
	}
	return append(buf, rest...), nil
}

// conventionSeverity applies the configured severity of RuleConvention
// (rules: {schema.convention: error|warning|off}) to the schema findings.
func conventionSeverity(fs []Finding, rules map[string]string) []Finding {
	sev, ok := rules[RuleConvention]
	if !ok {
		return fs
	}
	out := fs[:0]
	for _, f := range fs {
		if f.Rule == RuleConvention {
			if Severity(sev) == SeverityOff {
				continue
			}
			f.Severity = Severity(sev)
		}
		out = append(out, f)
	}
	return out
}

// unknownKind is the finding for a file the user named that matches no kind:
// it says so, and which kind it is closest to (the kind under which its
// content has the fewest schema findings).
func (v *Validator) unknownKind(rel string, data []byte, limits artifact.Limits) Finding {
	best, bestN, bestNamed := (*artifact.Kind)(nil), 0, false
	base := path.Base(rel)
	ext := strings.ToLower(path.Ext(rel))
	for _, k := range artifact.Kinds() {
		if k.PerItem != (ext == ".jsonl") || (k.ID == "autopilot.learnings") != (ext == ".md" && base == "learnings.md") {
			continue // a kind that is never written in this format
		}
		doc := artifact.Decode(rel, k, data, limits)
		if !doc.Decoded {
			continue
		}
		n := len(v.Validate(doc))
		// A kind that lives under this file name is closest; then the kind
		// under which the content has the fewest schema findings.
		named := strings.Contains(k.Paths, "/"+base)
		if best == nil || named && !bestNamed || named == bestNamed && n < bestN {
			best, bestN, bestNamed = k, n, named
		}
	}
	msg := fmt.Sprintf("%s matches no artifact kind by its path or content, so nothing in it was checked", rel)
	if best != nil {
		msg += fmt.Sprintf("; the closest kind is %s (%s, found at %s), with %s as that kind — move the file to where that kind lives, or check it as that kind with --kind %s", best.ID, best.Title, best.Paths, countWord(bestN, "schema finding", "schema findings"), best.ID)
	} else {
		msg += " (it does not decode as any kind's format) — check it as a kind with --kind KIND (phasegate schema lists them)"
	}
	return Finding{File: rel, Line: 1, Column: 1, Rule: RuleUnknownKind, Severity: SeverityError, Message: msg}
}
