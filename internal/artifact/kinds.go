package artifact

import (
	"bytes"
	"cmp"
	"encoding/json"
	"path"
	"regexp"
	"slices"
	"strings"
)

// Kind is an artifact kind: one schema, one set of path conventions.
type Kind struct {
	// ID is "<family>.<name>", e.g. "pace.gate-report". Stable: it appears in
	// findings, config keys and the schema file name.
	ID string
	// Family is "pace", "jg", "scc", "autopilot" or "outcome".
	Family string
	// Name is the kind within its family.
	Name string
	// Title is a human name for reports.
	Title string
	// Paths documents where the kind is found (for `phasegate schema` and docs).
	Paths string
	// PerItem kinds are JSONL: the schema describes one line.
	PerItem bool
	// Claim, when set, is the content a file must show for phasegate to
	// claim it as this kind by its path: the kind's conventional path is one
	// other tools write too (.autopilot/state.json, artifacts/<id>/submit.json,
	// …), so the path alone does not make the file the family's. It is
	// matched against the head of the file.
	Claim *regexp.Regexp
	// ClaimKey, when set, is the key the parsed JSON document must have at
	// its top level for the claim (Claim only spares the parse).
	ClaimKey string
}

// Claims reports whether a file that the path conventions classified as k is
// the family's by its content (head is the beginning of the file): always,
// unless the kind's path is shared with other tools (Kind.Claim), and then
// never for a JSON Schema (isJSONSchema).
func Claims(k *Kind, head []byte) bool {
	if k == nil || k.Claim == nil {
		return true
	}
	head = bytes.TrimPrefix(head, []byte("\xef\xbb\xbf"))
	if !k.Claim.Match(head) {
		return false
	}
	if k.ClaimKey == "" && !has(head, `"$schema"`) {
		return true // nothing left that a parse could say
	}
	m := topLevel(head)
	return (k.ClaimKey == "" || m[k.ClaimKey] != nil) && !isJSONSchema(m)
}

// topLevel reads the members of the JSON object head begins with, as far as
// head goes (a head cut short, or a syntax error, ends the scan): each
// top-level key with its raw value. Not an object: nil.
func topLevel(head []byte) map[string]json.RawMessage {
	dec := json.NewDecoder(bytes.NewReader(head))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil
	}
	m := map[string]json.RawMessage{}
	for dec.More() {
		t, err := dec.Token()
		key, ok := t.(string)
		var raw json.RawMessage
		if err != nil || !ok || dec.Decode(&raw) != nil {
			break
		}
		m[key] = raw
	}
	return m
}

// jsonString is raw's value when raw is a JSON string, else "".
func jsonString(raw json.RawMessage) string {
	var s string
	_ = json.Unmarshal(raw, &s) // not a string: ""
	return s
}

// isJSONSchema reports whether a document's top-level members make it a JSON
// Schema: a "$schema" naming a dialect of json-schema.org (any draft). It is
// then a schema, never an artifact, whatever keys it describes; an artifact
// whose "$schema" points at its own contract (another URL, a path) is not.
func isJSONSchema(m map[string]json.RawMessage) bool {
	s := jsonString(m["$schema"])
	return strings.HasPrefix(s, "https://json-schema.org/") || strings.HasPrefix(s, "http://json-schema.org/")
}

// underSchemas reports whether rel lies under a directory named schemas, at
// any depth: schemas and their fixtures live there, never a pipeline's
// artifacts, so neither its path nor its content makes such a file one (a
// config glob still can).
func underSchemas(rel string) bool {
	return strings.HasPrefix(rel, "schemas/") || strings.Contains(rel, "/schemas/")
}

// SchemaPath is the kind's schema file, relative to the schemas directory.
func (k *Kind) SchemaPath() string { return k.Family + "/" + k.Name + ".schema.json" }

// families is the one table of the pipeline families and their kinds: the
// order families are listed in (reports, the pipeline table, docs/rules.md),
// their names for people, the hidden directories their path conventions
// start at, and every kind with its paths. A new kind or family is added
// here (plus its schema under schemas/, its path convention in ClassifyPath
// and, for a family, its rules in internal/check).
var families = []*Family{
	{ID: "pace", Title: "PACE", Markers: []string{".pace"}, Kinds: []*Kind{
		{Name: "story-card", Title: "PACE story card", Paths: ".pace/day-N/story-card.yaml, .pace/day-N/story.md"},
		{Name: "handoff", Title: "PACE handoff", Paths: ".pace/day-N/handoff.yaml, .pace/day-N/handoff.md"},
		{Name: "gate-report", Title: "PACE gate report", Paths: ".pace/day-N/gate-report.yaml, .pace/day-N/gate.md"},
		{Name: "sentinel-report", Title: "PACE sentinel report", Paths: ".pace/day-N/sentinel-report.yaml, .pace/day-N/sentinel.md"},
		{Name: "conduit-report", Title: "PACE conduit report", Paths: ".pace/day-N/conduit-report.yaml, .pace/day-N/conduit.md"},
		{Name: "cycle", Title: "PACE cycle record", Paths: ".pace/day-N/cycle.md"},
		{Name: "attempts", Title: "PACE run attempts", Paths: ".pace/day-N/attempts.yaml"},
		{Name: "plan", Title: "PACE plan", Paths: ".pace/plan.yaml, pace/plan.yaml"},
		{Name: "advisory-backlog", Title: "PACE advisory backlog", Paths: ".pace/advisory_backlog.yaml"},
		{Name: "deferred-scope", Title: "PACE deferred scope", Paths: ".pace/day-N/deferred_scope.yaml"},
	}},
	{ID: "jg", Title: "JG pipeline", Markers: []string{".pipeline"}, Kinds: []*Kind{
		{Name: "plan", Title: "JG plan", Paths: ".pipeline/<issue>/plan.json"},
		{Name: "worker-result", Title: "JG worker result", Paths: ".pipeline/<issue>/worker-result[-fast|-high].json"},
		{Name: "test-result", Title: "JG test result", Paths: ".pipeline/<issue>/test-result[-pass|-fail|-fast].json"},
		{Name: "review-result", Title: "JG review result", Paths: ".pipeline/<issue>/review-result[-fast|-high].json"},
		{Name: "debug-diagnosis", Title: "JG debug diagnosis", Paths: ".pipeline/<issue>/debug-diagnosis[-high].json"},
		{Name: "git-result", Title: "JG git result", Paths: ".pipeline/<issue>/git-result.json"},
		{Name: "state", Title: "JG planner state", Paths: ".pipeline/<issue>/state.yaml"},
		{Name: "lessons", Title: "JG lessons", Paths: ".pipeline/lessons.yaml"},
		{Name: "pipeline-trace", Title: "JG pipeline trace", Paths: ".pipeline/<issue>/pipeline-trace.json"},
	}},
	{ID: "scc", Title: "SCC", Markers: nil, Kinds: []*Kind{
		// artifacts/ is a common directory name: a file there is SCC's only when
		// its content has the kind's tell-tale key.
		{Name: "task", Title: "SCC task input", Paths: "artifacts/<task_id>/task.json (with pins or allowedTests), *.task.json",
			Claim: regexp.MustCompile(`"(pins|allowedTests)"\s*:`)},
		{Name: "submit", Title: "SCC submit", Paths: "artifacts/<task_id>/submit.json (with schema_version scc.submit.v1, or task_id and changed_files), or any file with schema_version scc.submit.v1",
			Claim: regexp.MustCompile(`scc\.submit\.v1|"task_id"\s*:[\s\S]*"changed_files"\s*:|"changed_files"\s*:[\s\S]*"task_id"\s*:`)},
		{Name: "verdict", Title: "SCC verdict", Paths: "artifacts/<task_id>/verdict.json (with schema_version scc.verdict.v1, or a verdict key), or any file with schema_version scc.verdict.v1",
			Claim: regexp.MustCompile(`scc\.verdict\.v1|"verdict"\s*:`)},
	}},
	{ID: "autopilot", Title: "Autopilot", Markers: []string{".autopilot", ".planning"}, Kinds: []*Kind{
		// Other tools write .autopilot/state.json and .autopilot/config.json
		// too: the file is Autopilot's only when its content says so.
		{Name: "state", Title: "Autopilot run state", Paths: ".autopilot/state.json (with _meta), .autopilot/archive/run-*.json",
			Claim: regexp.MustCompile(`"_meta"\s*:`), ClaimKey: "_meta"},
		{Name: "circuit-breaker-config", Title: "Autopilot circuit-breaker config", Paths: ".autopilot/config.json (with circuit_breaker_config), or any JSON file with a top-level circuit_breaker_config",
			Claim: regexp.MustCompile(`"circuit_breaker_config"\s*:`), ClaimKey: "circuit_breaker_config"},
		{Name: "trace", Title: "Autopilot trace", Paths: ".planning/phases/<id>/TRACE.jsonl, .planning/phases/<id>/<step>-trace.jsonl", PerItem: true},
		{Name: "postmortem", Title: "Autopilot post-mortem", Paths: ".autopilot/diagnostics/phase-N-postmortem.json"},
		{Name: "learnings", Title: "Autopilot learnings", Paths: ".autopilot/learnings.md"},
		{Name: "triage", Title: "Autopilot triage", Paths: ".planning/phases/<id>/TRIAGE.json"},
	}},
	{ID: "outcome", Title: "Phase Outcomes", Markers: nil, Kinds: []*Kind{
		{Name: "phase-outcome", Title: "Phase Outcome", Paths: "**/*.outcome.yaml, or any YAML file with top-level phase and pending_decisions (e.g. under .devwork/ or outcomes/)"},
	}},
}

// kinds is every kind, in the table's order, and byID the same by ID.
var kinds, byID = func() ([]*Kind, map[string]*Kind) {
	var out []*Kind
	m := map[string]*Kind{}
	for _, f := range families {
		for _, k := range f.Kinds {
			k.Family, k.ID = f.ID, f.ID+"."+k.Name
			out = append(out, k)
			m[k.ID] = k
		}
	}
	return out, m
}()

// Family is one pipeline family of the table.
type Family struct {
	// ID is "pace", "jg", "scc", "autopilot" or "outcome": the prefix of its
	// kinds' and rules' IDs.
	ID string
	// Title names the family for people ("JG pipeline").
	Title string
	// Markers are the hidden directories the family's path conventions start
	// at (.pace, .pipeline, …); a root inside one is checked in its place
	// (see ContextRoot).
	Markers []string
	Kinds   []*Kind
}

// Families returns the families in the order they are listed.
func Families() []*Family { return append([]*Family(nil), families...) }

// Kinds returns every known kind, sorted by ID.
func Kinds() []*Kind {
	return slices.SortedFunc(slices.Values(kinds), func(a, b *Kind) int { return strings.Compare(a.ID, b.ID) })
}

// KindByID returns the kind with that ID, or nil.
func KindByID(id string) *Kind { return byID[id] }

// FormatOf is how a file of that kind at that path is parsed: by extension,
// except that learnings.md is Markdown headings and PACE .md files are YAML.
func FormatOf(k *Kind, p string) Format {
	if k != nil && k.ID == "autopilot.learnings" {
		return FormatLearnings
	}
	switch strings.ToLower(path.Ext(p)) {
	case ".json":
		return FormatJSON
	case ".jsonl":
		return FormatJSONL
	}
	return FormatYAML
}

var (
	dayDir        = regexp.MustCompile(`^day-[0-9]+$`)
	jgFile        = regexp.MustCompile(`^(plan|worker-result|test-result|review-result|debug-diagnosis|git-result)(-(fast|standard|high|pass|fail))?\.json$`)
	postmortem    = regexp.MustCompile(`^phase-[^/]+-postmortem\.json$`)
	archivedRun   = regexp.MustCompile(`^run-.+\.json$`)
	stepTrace     = regexp.MustCompile(`^(TRACE|[a-z_]+-trace)\.jsonl$`)
	outcomeSuffix = regexp.MustCompile(`\.outcome\.ya?ml$`)
)

var paceDayFiles = map[string]string{
	"story-card.yaml": "pace.story-card", "story.md": "pace.story-card",
	"handoff.yaml": "pace.handoff", "handoff.md": "pace.handoff",
	"gate-report.yaml": "pace.gate-report", "gate.md": "pace.gate-report",
	"sentinel-report.yaml": "pace.sentinel-report", "sentinel.md": "pace.sentinel-report",
	"conduit-report.yaml": "pace.conduit-report", "conduit.md": "pace.conduit-report",
	"cycle.md": "pace.cycle", "attempts.yaml": "pace.attempts",
	"deferred_scope.yaml": "pace.deferred-scope",
}

// ClassifyPath maps a slash-separated path (relative to the checked root) to a
// kind by the families' path conventions. The conventions match at any depth,
// so a monorepo's sub/project/.pace/day-1/gate.md is found too. It returns nil
// when the path says nothing, and for a path under a schemas/ directory.
func ClassifyPath(rel string) *Kind {
	if underSchemas(rel) {
		return nil
	}
	segs := strings.Split(rel, "/")
	name := segs[len(segs)-1]
	dirs := segs[:len(segs)-1]
	if outcomeSuffix.MatchString(name) {
		return byID["outcome.phase-outcome"]
	}
	return cmp.Or(classifyPACEPath(dirs, name), classifyJGPath(dirs, name), classifySCCPath(dirs, name), classifyAutopilotPath(dirs, name))
}

// underDir returns the directories below the last one named marker in dirs;
// ok is false when no directory is named marker.
func underDir(dirs []string, marker string) (rest []string, ok bool) {
	if i := lastIndex(dirs, marker); i >= 0 {
		return dirs[i+1:], true
	}
	return nil, false
}

func lastIndex(dirs []string, marker string) int {
	for i := len(dirs) - 1; i >= 0; i-- {
		if dirs[i] == marker {
			return i
		}
	}
	return -1
}

// classifyPACEPath classifies .pace/plan.yaml, .pace/advisory_backlog.yaml,
// the files of .pace/day-N/ and pace/plan.yaml.
func classifyPACEPath(dirs []string, name string) *Kind {
	if rest, ok := underDir(dirs, ".pace"); ok {
		switch {
		case len(rest) == 0 && name == "plan.yaml":
			return byID["pace.plan"]
		case len(rest) == 0 && name == "advisory_backlog.yaml":
			return byID["pace.advisory-backlog"]
		case len(rest) == 1 && dayDir.MatchString(rest[0]):
			if id, ok := paceDayFiles[name]; ok {
				return byID[id]
			}
		}
	}
	if len(dirs) > 0 && dirs[len(dirs)-1] == "pace" && name == "plan.yaml" {
		return byID["pace.plan"]
	}
	return nil
}

// classifyJGPath classifies .pipeline/lessons.yaml and the files of an issue
// folder, .pipeline/<issue>/ or .pipeline/completed/<issue>/.
func classifyJGPath(dirs []string, name string) *Kind {
	rest, ok := underDir(dirs, ".pipeline")
	if !ok {
		return nil
	}
	switch {
	case len(rest) == 0 && name == "lessons.yaml":
		return byID["jg.lessons"]
	case len(rest) == 1 || (len(rest) == 2 && rest[0] == "completed"):
		if m := jgFile.FindStringSubmatch(name); m != nil {
			return byID["jg."+m[1]]
		}
		if name == "state.yaml" {
			return byID["jg.state"]
		}
		if name == "pipeline-trace.json" {
			return byID["jg.pipeline-trace"]
		}
	}
	return nil
}

// classifySCCPath classifies the files of a task folder artifacts/<task_id>/
// and a task input *.task.json anywhere.
func classifySCCPath(dirs []string, name string) *Kind {
	if rest, ok := underDir(dirs, "artifacts"); ok && len(rest) == 1 {
		switch name {
		case "submit.json":
			return byID["scc.submit"]
		case "verdict.json":
			return byID["scc.verdict"]
		case "task.json":
			return byID["scc.task"]
		}
	}
	if strings.HasSuffix(name, ".task.json") {
		return byID["scc.task"]
	}
	return nil
}

// classifyAutopilotPath classifies the files of .autopilot/ (state,
// learnings, circuit-breaker config, archived runs, post-mortems) and the
// traces and triage of .planning/phases/<id>/.
func classifyAutopilotPath(dirs []string, name string) *Kind {
	if rest, ok := underDir(dirs, ".autopilot"); ok {
		switch {
		case len(rest) == 0 && name == "state.json":
			return byID["autopilot.state"]
		case len(rest) == 0 && name == "learnings.md":
			return byID["autopilot.learnings"]
		case len(rest) == 0 && (name == "config.json" || name == "circuit-breaker.json"):
			return byID["autopilot.circuit-breaker-config"]
		case len(rest) == 1 && rest[0] == "archive" && archivedRun.MatchString(name):
			return byID["autopilot.state"]
		case len(rest) == 1 && rest[0] == "diagnostics" && postmortem.MatchString(name):
			return byID["autopilot.postmortem"]
		}
	}
	if rest, ok := underDir(dirs, ".planning"); ok && len(rest) == 2 && rest[0] == "phases" {
		switch {
		case stepTrace.MatchString(name):
			return byID["autopilot.trace"]
		case name == "TRIAGE.json":
			return byID["autopilot.triage"]
		}
	}
	return nil
}

// Sniffable reports whether a file that its path did not classify may still be
// an artifact by content, so discovery reads its head: never one under a
// schemas/ directory.
func Sniffable(rel string) bool {
	if underSchemas(rel) {
		return false
	}
	switch strings.ToLower(path.Ext(rel)) {
	case ".json", ".yaml", ".yml":
		return true
	}
	return false
}

var (
	// A key at the start of a line, or first in a minified object (YAML).
	sccSubmitMark = regexp.MustCompile(`(?m)^\{?\s*"?schema_version"?\s*:\s*["']?scc\.submit\.v1\b`)
	sccVerdictMrk = regexp.MustCompile(`(?m)^\{?\s*"?schema_version"?\s*:\s*["']?scc\.verdict\.v1\b`)
	phaseKey      = regexp.MustCompile(`(?m)^phase:`)
	pendingKey    = regexp.MustCompile(`(?m)^pending_decisions:`)
)

// Sniff classifies a file by content when its path says nothing. head is the
// beginning of the file (discovery passes at most 64 KiB). A file under a
// schemas/ directory is never an artifact. JSON is sniffJSON's. In YAML the
// markers are textual, so that sniffing costs no parse: `schema_version:
// scc.submit.v1` (or verdict), or top-level `phase:` and
// `pending_decisions:` keys (a Phase Outcome).
func Sniff(rel string, head []byte) *Kind {
	if underSchemas(rel) {
		return nil
	}
	head = bytes.TrimPrefix(head, []byte("\xef\xbb\xbf"))
	if strings.ToLower(path.Ext(rel)) == ".json" {
		return sniffJSON(head)
	}
	// Each marker holds a literal the file must contain: looking for it
	// first spares the expressions most files.
	switch {
	case has(head, "scc.submit.v1") && sccSubmitMark.Match(head):
		return byID["scc.submit"]
	case has(head, "scc.verdict.v1") && sccVerdictMrk.Match(head):
		return byID["scc.verdict"]
	case has(head, "phase:") && has(head, "pending_decisions:") && phaseKey.Match(head) && pendingKey.Match(head):
		return byID["outcome.phase-outcome"]
	}
	return nil
}

// sniffJSON classifies a JSON file by its parsed top-level members: a
// "schema_version" of scc.submit.v1 or scc.verdict.v1, or a
// "circuit_breaker_config" key; never a JSON Schema (isJSONSchema), whatever
// it describes. Only a file holding one of the literals is parsed, so most
// files (companion JSON, say) cost none.
func sniffJSON(head []byte) *Kind {
	if !has(head, "scc.submit.v1") && !has(head, "scc.verdict.v1") && !has(head, `"circuit_breaker_config"`) {
		return nil
	}
	m := topLevel(head)
	switch version := jsonString(m["schema_version"]); {
	case isJSONSchema(m):
		return nil
	case version == "scc.submit.v1":
		return byID["scc.submit"]
	case version == "scc.verdict.v1":
		return byID["scc.verdict"]
	case m["circuit_breaker_config"] != nil:
		return byID["autopilot.circuit-breaker-config"]
	}
	return nil
}

func has(b []byte, lit string) bool { return bytes.Contains(b, []byte(lit)) }
