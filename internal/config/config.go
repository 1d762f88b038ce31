// Package config decodes .github/phasegate.yml. It is pure: the caller reads
// the file (from the default branch, in the action and the App) and passes the
// bytes. Decoding is strict: an unknown key, a wrong type or an unknown kind
// is a problem with its line, and the whole file then falls back to the
// defaults — never to "allow everything".
package config

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/bmatcuk/doublestar/v4"
	"go.yaml.in/yaml/v3"

	"github.com/phasegate/phasegate/internal/artifact"
)

// DefaultPath is where the config lives in a repository.
const DefaultPath = ".github/phasegate.yml"

// Config is the repository configuration.
type Config struct {
	// Artifacts maps a kind ID to extra globs of files of that kind.
	Artifacts map[string][]string `yaml:"artifacts,omitempty"`
	// Ignore lists globs of files and directories never read.
	Ignore []string `yaml:"ignore,omitempty"`
	// Limits bound the work per file.
	Limits Limits `yaml:"limits,omitempty"`
	// Rules sets rule severities by rule ID: error, warning or off.
	Rules     map[string]string `yaml:"rules,omitempty"`
	Pace      Pace              `yaml:"pace,omitempty"`
	SCC       SCC               `yaml:"scc,omitempty"`
	Autopilot Autopilot         `yaml:"autopilot,omitempty"`
	Outcome   Outcome           `yaml:"outcome,omitempty"`
	// Identity is the login phasegate posts as: only its comments count as
	// outcomes and resolutions (default github-actions[bot], the identity
	// of a workflow's GITHUB_TOKEN; the App's is <app-slug>[bot]).
	Identity  string    `yaml:"identity,omitempty"`
	Decisions Decisions `yaml:"decisions,omitempty"`
	Resolvers Resolvers `yaml:"resolvers,omitempty"`
	// Phases is the pipeline's phase sequence, for the phase:<name> labels.
	Phases Phases `yaml:"phases,omitempty"`
	// Deployments maps a GitHub environment's name to what a deployment
	// to it requires (phasegate as a custom deployment protection rule).
	Deployments map[string]Deployment `yaml:"deployments,omitempty"`
}

// Deployment is what a deployment to an environment requires, besides a
// contracts verdict that is not HOLD for the commit.
type Deployment struct {
	// Require lists phases (of the sequence, or aliases) whose blocking
	// decisions must be resolved positively; empty: every blocking
	// decision of the commit's outcomes.
	Require []string `yaml:"require,omitempty"`
}

// DeploymentRequires is the phases a deployment to environment requires
// (deployments.<environment>.require, the name matched ignoring case as
// GitHub does); nil means every blocking decision of the commit: the rule
// of an environment the config does not name, or names without require.
func (c Config) DeploymentRequires(environment string) []string {
	for name, d := range c.Deployments {
		if strings.EqualFold(name, environment) {
			return d.Require
		}
	}
	return nil
}

// Resolvers: who may resolve a decision (docs/security.md). A commenter qualifies
// by repository permission at least Permission, or by being listed in Users
// or in one of Teams; accounts in Exclude (agent machine users) never do,
// and neither do bots.
type Resolvers struct {
	// Permission is the least repository permission: admin, maintain,
	// write (default), triage or read.
	Permission string `yaml:"permission,omitempty"`
	// Users may resolve whatever their permission.
	Users []string `yaml:"users,omitempty"`
	// Teams ("org/team-slug") whose members may resolve.
	Teams []string `yaml:"teams,omitempty"`
	// Exclude never resolve, whatever their permission.
	Exclude []string `yaml:"exclude,omitempty"`
	// ViaApps says whether a command posted through a GitHub App (a
	// comment GitHub shows performed_via_github_app: a person's comment
	// made with an App's user token, such as from phasegate's decision
	// page) counts (default true). False: only commands typed on GitHub
	// itself resolve; others get the normal refusal reply.
	ViaApps *bool `yaml:"via_apps,omitempty"`
}

// ViaAppsOrDefault is resolvers.via_apps, true unless set to false.
func (r Resolvers) ViaAppsOrDefault() bool { return r.ViaApps == nil || *r.ViaApps }

// PermissionOrDefault is the configured permission, or write.
func (r Resolvers) PermissionOrDefault() string {
	return cmp.Or(r.Permission, "write")
}

// Phases configures the phase:<name> labels.
type Phases struct {
	// Sequence of phases; an approval moves the issue to the next one.
	Sequence []string `yaml:"sequence,omitempty"`
	// Aliases map outcome phase names (skill names) to sequence entries.
	Aliases map[string]string `yaml:"aliases,omitempty"`
}

// DefaultPhases is the source pipeline's sequence and its skills' names.
var DefaultPhases = Phases{
	Sequence: []string{"requirements", "planning", "developing", "qa", "integrating", "uat", "deployed"},
	Aliases: map[string]string{
		"technical-plan": "planning", "plan": "planning", "develop": "developing",
		"simplify": "developing", "code-validate": "qa", "qa-fix": "qa", "integrate": "integrating", "closeout": "deployed",
	},
}

// Index is the position in the sequence of an outcome's phase name (a
// leading "/" and case are ignored, aliases applied); -1 when it is not a
// phase of the sequence.
func (p Phases) Index(phase string) int {
	name := strings.ToLower(strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(phase), "/")))
	if alias, ok := p.Aliases[name]; ok {
		name = strings.ToLower(alias)
	}
	return slices.IndexFunc(p.Sequence, func(s string) bool { return strings.EqualFold(s, name) })
}

// Label is the phase:<name> label of an outcome's phase, "" when it is not
// a phase of the sequence.
func (p Phases) Label(phase string) string {
	if i := p.Index(phase); i >= 0 {
		return "phase:" + strings.ToLower(p.Sequence[i])
	}
	return ""
}

// PhasesOrDefault is the configured phases, or DefaultPhases. Aliases given
// without a sequence add to the default sequence's aliases.
func (c Config) PhasesOrDefault() Phases {
	if len(c.Phases.Sequence) > 0 {
		return c.Phases
	}
	if len(c.Phases.Aliases) == 0 {
		return DefaultPhases
	}
	p := Phases{Sequence: DefaultPhases.Sequence, Aliases: maps.Clone(DefaultPhases.Aliases)}
	maps.Copy(p.Aliases, c.Phases.Aliases)
	return p
}

// DefaultIdentity is the login of a workflow's GITHUB_TOKEN.
const DefaultIdentity = "github-actions[bot]"

// IdentityOrDefault is the configured identity, or DefaultIdentity.
func (c Config) IdentityOrDefault() string {
	return cmp.Or(c.Identity, DefaultIdentity)
}

// Decisions settings.
type Decisions struct {
	// NegativeOptions resolve a blocking decision negatively: the decision
	// status fails (default: reject, request-changes).
	NegativeOptions []string `yaml:"negative_options,omitempty"`
	// Dispatch sends a repository_dispatch (phasegate.resolved,
	// phasegate.phase-advanced) on every resolution, so that the pipeline
	// waiting for it goes on (default true).
	Dispatch *bool `yaml:"dispatch,omitempty"`
	// InvalidateOnPush says which pushes after a resolution make it stale,
	// so that the decision is pending again on the new head until a person
	// re-confirms it (GitHub's "dismiss stale approvals"): "unit" (default)
	// when the push changes the outcome's unit — the files of its directory
	// (other Phase Outcome files aside) and the paths its produced entries
	// name; "all" on any change; "none" never. A negative resolution is
	// final whatever this says.
	InvalidateOnPush string `yaml:"invalidate_on_push,omitempty"`
}

// DispatchOrDefault is decisions.dispatch, true unless set to false.
func (d Decisions) DispatchOrDefault() bool { return d.Dispatch == nil || *d.Dispatch }

// The values of decisions.invalidate_on_push.
const (
	InvalidateUnit = "unit"
	InvalidateAll  = "all"
	InvalidateNone = "none"
)

// InvalidateOnPushOrDefault is decisions.invalidate_on_push, or "unit".
func (d Decisions) InvalidateOnPushOrDefault() string {
	return cmp.Or(d.InvalidateOnPush, InvalidateUnit)
}

// SCC settings. Upstream's enums drift (executors were renamed, the role
// registry has 27 roles where the seed lists 7), so they are configurable.
type SCC struct {
	// RequireUUIDTaskID enforces the L8 doc's "task_id MUST be a UUID"
	// (upstream's own examples use "example-task-id", so it is off by default).
	RequireUUIDTaskID bool `yaml:"require_uuid_task_id,omitempty"`
	// Executors allowed in a task's allowedExecutors (default: codex, opencodecli).
	Executors []string `yaml:"executors,omitempty"`
	// Roles allowed in a task's role (default: any).
	Roles []string `yaml:"roles,omitempty"`
}

// Autopilot settings: upstream changed its thresholds between versions.
type Autopilot struct {
	// DeferRate is the human-deferral rate above which the run must log a
	// high_defer_rate_warning (default 0.50, the seed's; HEAD uses 0.05).
	DeferRate *float64 `yaml:"defer_rate,omitempty"`
	// PassScore is the judge alignment a completed phase needs (default 7,
	// the seed's; HEAD uses 9).
	PassScore *float64 `yaml:"pass_score,omitempty"`
}

// Outcome settings.
type Outcome struct {
	// ApprovalPhases must carry an approval decision (default:
	// requirements, technical-plan, develop — the three approval gates).
	ApprovalPhases []string `yaml:"approval_phases,omitempty"`
	// MaxPerPush is the most Phase Outcomes one push or pull request run
	// posts (default 10); more are an error finding, not API calls.
	MaxPerPush int `yaml:"max_per_push,omitempty"`
}

// DefaultMaxOutcomesPerPush is outcome.max_per_push's default.
const DefaultMaxOutcomesPerPush = 10

// MaxPerPushOrDefault is outcome.max_per_push, or its default.
func (o Outcome) MaxPerPushOrDefault() int {
	return cmp.Or(max(o.MaxPerPush, 0), DefaultMaxOutcomesPerPush)
}

// Pace settings mirror the PACE repository's own configuration.
type Pace struct {
	// TDDEnforcement is forge.tdd_enforcement: when set, handoffs must
	// (true) or must not (false) confirm a TDD red phase.
	TDDEnforcement *bool `yaml:"tdd_enforcement,omitempty"`
	// MaxIterations is forge.max_iterations: the most LLM calls FORGE may use.
	MaxIterations int `yaml:"max_iterations,omitempty"`
}

// Limits is the limits section; zero means the default. max_depth is at
// most artifact.MaxDepthCeiling.
type Limits struct {
	MaxFileSize   int64 `yaml:"max_file_size,omitempty"`
	MaxDepth      int   `yaml:"max_depth,omitempty"`
	MaxAliasNodes int   `yaml:"max_alias_nodes,omitempty"`
}

// ArtifactLimits converts the section to decoder limits, defaults filled in.
func (l Limits) ArtifactLimits() artifact.Limits {
	d := artifact.DefaultLimits
	return artifact.Limits{MaxFileSize: cmp.Or(max(l.MaxFileSize, 0), d.MaxFileSize), MaxDepth: cmp.Or(max(l.MaxDepth, 0), d.MaxDepth),
		MaxAliasNodes: cmp.Or(max(l.MaxAliasNodes, 0), d.MaxAliasNodes), MaxNodes: d.MaxNodes}
}

// Problem is something wrong in the config file.
type Problem struct {
	Line, Column int
	Message      string
}

// Default is the configuration used without a file or with an invalid one.
func Default() Config { return Config{} }

var lineRE = regexp.MustCompile(`line (\d+)`)

// maxSize is the largest config file read, and maxKeys the most entries one
// mapping may have: the YAML decoder compares every key of a mapping with
// every other, so an unbounded mapping would cost quadratic time.
const (
	maxSize     = 1 << 20
	maxKeys     = 10_000
	maxProblems = 100
)

// Parse decodes the config. With problems, the returned Config is Default().
// It never panics: whatever is wrong with the bytes is a problem. The file
// is validated against the config's JSON Schema (schemas/config, the one
// description of what is accepted), then the few things a schema cannot say
// are checked (glob syntax, phase aliases' targets); every problem is
// reported in one pass, each at its line.
func Parse(data []byte) (cfg Config, probs []Problem) {
	defer func() {
		if r := recover(); r != nil {
			cfg, probs = Default(), []Problem{{Line: 1, Column: 1, Message: fmt.Sprintf("the config could not be read: %v", r)}}
		}
		probs = clamp(probs, data)
	}()
	if len(data) > maxSize {
		return Default(), []Problem{{Line: 1, Column: 1, Message: fmt.Sprintf("the config is %d bytes, over the %d-byte limit", len(data), maxSize)}}
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return Default(), nil
	}
	var root yaml.Node
	dec := yaml.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&root); err != nil {
		if errors.Is(err, io.EOF) {
			return Default(), nil // comments only
		}
		return Default(), []Problem{fromMessage(err.Error())}
	}
	var extra yaml.Node
	switch err := dec.Decode(&extra); {
	case err == nil:
		return Default(), []Problem{{Line: max(extra.Line, 1), Column: 1, Message: "the config holds more than one YAML document ('---'); write it as one"}}
	case !errors.Is(err, io.EOF):
		return Default(), []Problem{fromMessage(err.Error())}
	}
	if probs := checkKeys(&root); len(probs) > 0 {
		return Default(), probs
	}
	doc := artifact.Decode(DefaultPath, nil, data, artifact.Limits{MaxFileSize: maxSize})
	if !doc.Decoded {
		for _, p := range doc.Problems {
			probs = append(probs, Problem{p.Pos.Line, p.Pos.Column, p.Message})
		}
		return Default(), capProblems(probs)
	}
	probs = schemaProblems(doc)
	if err := root.Decode(&cfg); err != nil && len(probs) == 0 {
		// The schema accepted what the decoder cannot hold (2.0 for an
		// integer, a number over int64): still a problem, never a default.
		probs = append(probs, fromMessage(err.Error()))
	}
	probs = append(probs, validate(cfg, doc)...)
	if len(probs) > 0 {
		slices.SortStableFunc(probs, func(a, b Problem) int { // by position, repeats dropped
			return cmp.Or(cmp.Compare(a.Line, b.Line), cmp.Compare(a.Column, b.Column))
		})
		return Default(), capProblems(slices.Compact(probs))
	}
	return cfg, nil
}

// checkKeys reports duplicate keys (once each, in linear time) and
// mappings over maxKeys, before the YAML decoder sees them.
func checkKeys(root *yaml.Node) []Problem {
	var probs []Problem
	var walk func(n *yaml.Node)
	walk = func(n *yaml.Node) {
		if len(probs) > maxProblems {
			return
		}
		if n.Kind == yaml.MappingNode {
			if len(n.Content)/2 > maxKeys {
				probs = append(probs, Problem{n.Line, n.Column, fmt.Sprintf("mapping has %d keys, more than the %d a config may have", len(n.Content)/2, maxKeys)})
				return
			}
			seen := make(map[string]*yaml.Node, len(n.Content)/2)
			for i := 0; i+1 < len(n.Content); i += 2 {
				k := n.Content[i]
				if k.Kind != yaml.ScalarNode {
					continue // the decoder reports it
				}
				if first, dup := seen[k.Value]; dup {
					probs = append(probs, Problem{k.Line, k.Column, fmt.Sprintf("duplicate key %q (first at line %d)", k.Value, first.Line)})
					continue
				}
				seen[k.Value] = k
			}
		}
		for _, c := range n.Content {
			walk(c)
		}
	}
	walk(root)
	return capProblems(probs)
}

// capProblems keeps the first maxProblems problems and says how many more
// there are.
func capProblems(probs []Problem) []Problem {
	if len(probs) <= maxProblems {
		return probs
	}
	more := len(probs) - maxProblems
	probs = probs[:maxProblems:maxProblems]
	last := probs[maxProblems-1]
	return append(probs, Problem{last.Line, last.Column, fmt.Sprintf("and %d more problems", more)})
}

// clamp keeps problem positions inside the file: the YAML parser reports
// errors at the end of a file on the line after the last one.
func clamp(probs []Problem, data []byte) []Problem {
	lines := bytes.Count(data, []byte("\n")) + 1
	for i := range probs {
		if probs[i].Line > lines {
			probs[i].Line, probs[i].Column = lines, 1
		}
		probs[i].Line = max(probs[i].Line, 1)
		probs[i].Column = max(probs[i].Column, 1)
	}
	return probs
}

// fromMessage turns a YAML error message into a problem at its line.
func fromMessage(msg string) Problem {
	p := Problem{Line: 1, Column: 1, Message: strings.TrimPrefix(msg, "yaml: ")}
	if m := lineRE.FindStringSubmatch(msg); m != nil {
		if l, err := strconv.Atoi(m[1]); err == nil && l > 0 {
			p.Line = l
		}
	}
	p.Message = strings.TrimPrefix(p.Message, fmt.Sprintf("line %d: ", p.Line))
	p.Message = strings.TrimPrefix(p.Message, "unmarshal errors:\n  ")
	return p
}

// validate checks what the schema cannot say: glob syntax, and that each
// phase alias maps to a phase of the sequence in effect. Each problem is
// placed at its key or entry in doc.
func validate(cfg Config, doc *artifact.Document) []Problem {
	var probs []Problem
	add := func(msg string, tokens ...string) {
		pos := doc.Locate(tokens)
		probs = append(probs, Problem{pos.Line, pos.Column, msg})
	}
	for _, id := range slices.Sorted(maps.Keys(cfg.Artifacts)) {
		for i, g := range cfg.Artifacts[id] {
			if !doublestar.ValidatePattern(g) {
				add(fmt.Sprintf("artifacts.%s: invalid glob %q", id, g), "artifacts", id, strconv.Itoa(i))
			}
		}
	}
	for i, g := range cfg.Ignore {
		if !doublestar.ValidatePattern(g) {
			add(fmt.Sprintf("ignore: invalid glob %q", g), "ignore", strconv.Itoa(i))
		}
	}
	// Each phase alias maps to a phase of the sequence in effect:
	// phases.sequence, or the default sequence when it is not set.
	seq := cfg.PhasesOrDefault().Sequence
	for _, alias := range slices.Sorted(maps.Keys(cfg.Phases.Aliases)) {
		target := cfg.Phases.Aliases[alias]
		if !slices.ContainsFunc(seq, func(s string) bool { return strings.EqualFold(s, target) }) {
			which := "phases.sequence"
			if len(cfg.Phases.Sequence) == 0 {
				which = "the default sequence (" + strings.Join(seq, ", ") + "; set phases.sequence for another)"
			}
			add(fmt.Sprintf("phases.aliases: %q maps to %q, which is not in %s", alias, target, which), "phases", "aliases", alias)
		}
	}
	validateDeployments(cfg, add)
	return probs
}

// validateDeployments: every environment has a name, no two differ only
// in case (GitHub's environment names do not), and every phase one
// requires is a phase of the sequence in effect.
func validateDeployments(cfg Config, add func(msg string, tokens ...string)) {
	phases := cfg.PhasesOrDefault()
	seen := map[string]string{}
	for _, env := range slices.Sorted(maps.Keys(cfg.Deployments)) {
		if strings.TrimSpace(env) == "" {
			add("deployments: an environment name is empty", "deployments", env)
		}
		if first, dup := seen[strings.ToLower(env)]; dup {
			add(fmt.Sprintf("deployments: %q and %q name the same environment (GitHub ignores case)", first, env), "deployments", env)
		}
		seen[strings.ToLower(env)] = env
		for i, phase := range cfg.Deployments[env].Require {
			if phases.Index(phase) < 0 {
				add(fmt.Sprintf("deployments: %q requires %q, which is not a phase of the sequence (%s)%s", env, phase,
					strings.Join(phases.Sequence, ", "), didYouMean(strings.ToLower(phase), phases.Sequence)), "deployments", env, "require", strconv.Itoa(i))
			}
		}
	}
}
