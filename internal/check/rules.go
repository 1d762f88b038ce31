package check

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"slices"
	"strings"

	"github.com/phasegate/phasegate/internal/artifact"
)

// Rule is one invariant of the rule layer: what a schema cannot say, across
// fields of one artifact or across the artifacts of one unit (a PACE day, a
// JG issue folder, an SCC task, an Autopilot run).
type Rule struct {
	// ID is stable: users configure rules by it and findings carry it.
	ID string
	// Severity is the default; .github/phasegate.yml can override it
	// (rules: {ID: error|warning|off}).
	Severity Severity
	// Summary says in one line what the rule requires.
	Summary string
	// Basis is where the invariant comes from, in docs/contracts/README.md's legend:
	// "S" stated in the source document, "R" confirmed in upstream code or
	// schemas, "I" inferred (a judgement call: a warning or off by default).
	Basis string
}

// SeverityOff switches a rule off in the config.
const SeverityOff Severity = "off"

// Rules returns the catalogue of every rule, sorted by ID.
func Rules() []Rule {
	var out []Rule
	for _, fam := range families {
		out = append(out, fam.rules...)
	}
	slices.SortFunc(out, func(a, b Rule) int { return strings.Compare(a.ID, b.ID) })
	return out
}

// family is one pipeline family's rules and the function that applies them
// to a group of its artifacts (none for PACE: runner.checkPACEUnit).
type family struct {
	name  string
	rules []Rule
	check func(c *ruleCtx, g *Group)
}

// families, by name, is filled by the family files (pace.go, jg.go, …)
// through registerFamily, called from package-level var initialisers.
var families = map[string]*family{}

var ruleIndex = map[string]*Rule{}

func registerFamily(f *family) *family {
	if !slices.ContainsFunc(artifact.Families(), func(af *artifact.Family) bool { return af.ID == f.name }) {
		panic("check: rules for family " + f.name + ", which is not in artifact's family table")
	}
	for i := range f.rules {
		r := &f.rules[i]
		if _, dup := ruleIndex[r.ID]; dup {
			panic("check: duplicate rule " + r.ID)
		}
		if !strings.HasPrefix(r.ID, f.name+".") {
			panic("check: rule " + r.ID + " outside family " + f.name)
		}
		ruleIndex[r.ID] = r
	}
	families[f.name] = f
	return f
}

// Group is a unit of artifacts checked together.
type Group struct {
	// Key identifies the unit (see artifact.GroupKey), with the run's prefix.
	Key string
	// Docs are the group's artifacts that decoded, sorted by path.
	Docs []*artifact.Document

	files fs.FS // the checked tree; nil when a single file is checked
	// root, when set, is the os.Root whose FS files is: it confines
	// symlinks itself, so treePath need not resolve them.
	root  *os.Root
	limit int64
}

// ReadFile reads a file of the checked tree that is not an artifact (a
// selftest.log, a patch.diff) by its root-relative path, through the run's
// FS. Paths come from agent-written artifacts, so the read is confined to
// the tree (no "..", no absolute paths, no symlink out: see treePath) and to
// the file-size limit.
func (g *Group) ReadFile(rel string) ([]byte, error) {
	p, err := g.treePath(rel)
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", rel, err)
	}
	f, err := g.files.Open(p)
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", rel, err)
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", rel, err)
	}
	if !info.Mode().IsRegular() {
		return nil, fmt.Errorf("reading %s: not a regular file", rel)
	}
	if info.Size() > g.limit {
		return nil, fmt.Errorf("reading %s: %d bytes, over the %d-byte limit", rel, info.Size(), g.limit)
	}
	data, err := readSized(f, info.Size(), g.limit)
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", rel, err)
	}
	return data, nil
}

// Exists reports whether a root-relative path names a file or directory
// inside the checked tree (confined like ReadFile).
func (g *Group) Exists(rel string) bool {
	p, err := g.treePath(strings.TrimSuffix(rel, "/"))
	if err != nil {
		return false
	}
	_, err = fs.Stat(g.files, p)
	return err == nil
}

// treePath is the path inside the tree's FS that rel names: cleaned, a
// valid FS path (nothing absolute, no ".." above the root), and, when the
// FS reads symlinks, with its links resolved inside the FS
// (artifact.ResolveFS), so that no link sends a read out of the tree
// whatever the FS: os.DirFS follows links anywhere; an os.Root's FS
// (confined) does not, and its paths are left to it.
func (g *Group) treePath(rel string) (string, error) {
	if g.files == nil {
		return "", errors.New("no directory is being checked")
	}
	p := path.Clean(rel)
	if !fs.ValidPath(p) {
		return "", fs.ErrInvalid
	}
	if lfs, ok := g.files.(fs.ReadLinkFS); ok && g.root == nil {
		return artifact.ResolveFS(lfs, p)
	}
	return p, nil
}

// Of returns the group's documents of a kind.
func (g *Group) Of(kindID string) []*artifact.Document {
	var out []*artifact.Document // nil, not a copy, when none is of the kind
	for _, d := range g.Docs {
		if d.Kind.ID == kindID {
			out = append(out, d)
		}
	}
	return out
}

// One returns the group's first document of a kind, or nil.
func (g *Group) One(kindID string) *artifact.Document {
	if i := slices.IndexFunc(g.Docs, func(d *artifact.Document) bool { return d.Kind.ID == kindID }); i >= 0 {
		return g.Docs[i]
	}
	return nil
}

// Status is where one pipeline unit stands, for the gate and the pipeline
// table: what its latest artifacts decided.
type Status struct {
	// Family is "pace", "jg", "scc", "autopilot" or "outcome".
	Family string `json:"family"`
	// Unit names the unit for people: "PACE day 3", "JG ISSUE-42", …
	Unit string `json:"unit"`
	// State is a compact description: "GATE SHIP, SENTINEL ADVISORY, CONDUIT SHIP".
	State string `json:"state"`
	// Decisions are the recorded decisions that count for the gate.
	Decisions []Decision `json:"decisions,omitempty"`
}

// Decision is one recorded decision of a pipeline artifact.
type Decision struct {
	// File is the artifact that records it.
	File string `json:"file"`
	// Line of the decision field.
	Line int `json:"line"`
	// Effect is HOLD, ADVISORY or SHIP: what it means for the gate.
	Effect string `json:"effect"`
	// Reason says who decided what, for the gate's reasons.
	Reason string `json:"reason"`
}

// ruleCtx collects findings and statuses while rules run on one group.
type ruleCtx struct {
	opts     *Options
	findings []Finding
	statuses []Status
	// deps gets each question the rules ask about the change, with its
	// answer (see Dep): a cached result holds only while they read the
	// same. Nil when the run keeps no results: nothing is recorded.
	deps map[string]string
}

// ask records a question about the change (kind and its subject) and its
// answer in deps, when the run keeps results.
func (c *ruleCtx) ask(kind, subject string) {
	if c.deps != nil {
		q := kind + subject
		c.deps[q], _ = changeAnswer(q, c.opts.Changed)
	}
}

// touches says whether the change touches a file under prefix (recorded).
func (c *ruleCtx) touches(prefix string) bool {
	c.ask(depTouches, prefix)
	return touches(c.opts.Changed, prefix)
}

// allChanged is the whole change (recorded: a result that read it holds
// only for the same change).
func (c *ruleCtx) allChanged() map[string]Change {
	c.ask(depChanges, "")
	return c.opts.Changed
}

func (c *ruleCtx) severity(id string) Severity {
	if s, ok := c.opts.Config.Rules[id]; ok {
		return Severity(s)
	}
	if id == RuleConvention {
		return SeverityWarning
	}
	if r := ruleIndex[id]; r != nil {
		return r.Severity
	}
	return SeverityError
}

// report records a finding of rule id on doc at the JSON pointer ptr (the
// field the finding is about). It is a no-op when the rule is off. The rule
// layer reports RuleConvention too: a departure from the documented shape
// that upstream's validators accept in this place.
func (c *ruleCtx) report(id string, doc *artifact.Document, ptr []string, format string, args ...any) {
	if _, ok := ruleIndex[id]; !ok && id != RuleConvention {
		panic("check: unregistered rule " + id)
	}
	sev := c.severity(id)
	if sev == SeverityOff {
		return
	}
	pos := doc.Locate(ptr)
	c.findings = append(c.findings, Finding{File: doc.Path, Line: pos.Line, Column: pos.Column, Kind: doc.Kind.ID, Rule: id, Severity: sev, Message: fmt.Sprintf(format, args...)})
}

func (c *ruleCtx) status(s Status) { c.statuses = append(c.statuses, s) }
