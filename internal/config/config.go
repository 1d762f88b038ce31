// Package config decodes .github/phasegate.yml. It is pure: the caller reads
// the file (from the default branch, in the action and the App) and passes the
// bytes. Decoding is strict: an unknown key, a wrong type or an unknown kind
// is a problem with its line, and the whole file then falls back to the
// defaults — never to "allow everything".
package config

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"regexp"
	"sort"
	"strconv"

	"github.com/bmatcuk/doublestar/v4"
	"go.yaml.in/yaml/v3"

	"github.com/phasegate/phasegate/internal/artifact"
)

// DefaultPath is where the config lives in a repository.
const DefaultPath = ".github/phasegate.yml"

// Config is the repository configuration.
type Config struct {
	// Artifacts maps a kind ID to extra globs of files of that kind.
	Artifacts map[string][]string `yaml:"artifacts"`
	// Ignore lists globs of files and directories never read.
	Ignore []string `yaml:"ignore"`
	// Limits bound the work per file.
	Limits Limits `yaml:"limits"`
	// Rules sets rule severities by rule ID: error, warning or off.
	Rules map[string]string `yaml:"rules"`
	// Pace holds the settings of PACE rules.
	Pace Pace `yaml:"pace"`
	// SCC holds the settings of SCC rules.
	SCC SCC `yaml:"scc"`
	// Autopilot holds the settings of Autopilot rules.
	Autopilot Autopilot `yaml:"autopilot"`
	// Outcome holds the settings of Phase Outcome rules.
	Outcome Outcome `yaml:"outcome"`
}

// SCC settings. Upstream's enums drift (executors were renamed, the role
// registry has 27 roles where the seed lists 7), so they are configurable.
type SCC struct {
	// RequireUUIDTaskID enforces the L8 doc's "task_id MUST be a UUID"
	// (upstream's own examples use "example-task-id", so it is off by default).
	RequireUUIDTaskID bool `yaml:"require_uuid_task_id"`
	// Executors allowed in a task's allowedExecutors (default: codex, opencodecli).
	Executors []string `yaml:"executors"`
	// Roles allowed in a task's role (default: any).
	Roles []string `yaml:"roles"`
}

// Autopilot settings: upstream changed its thresholds between versions.
type Autopilot struct {
	// DeferRate is the human-deferral rate above which the run must log a
	// high_defer_rate_warning (default 0.50, the seed's; HEAD uses 0.05).
	DeferRate *float64 `yaml:"defer_rate"`
	// PassScore is the judge alignment a completed phase needs (default 7,
	// the seed's; HEAD uses 9).
	PassScore *float64 `yaml:"pass_score"`
}

// Outcome settings.
type Outcome struct {
	// ApprovalPhases must carry an approval decision (default:
	// requirements, technical-plan, develop — the three approval gates).
	ApprovalPhases []string `yaml:"approval_phases"`
}

// Pace settings mirror the PACE repository's own configuration.
type Pace struct {
	// TDDEnforcement is forge.tdd_enforcement: when set, handoffs must
	// (true) or must not (false) confirm a TDD red phase.
	TDDEnforcement *bool `yaml:"tdd_enforcement"`
	// MaxIterations is forge.max_iterations: the most LLM calls FORGE may use.
	MaxIterations int `yaml:"max_iterations"`
}

// Limits is the limits section; zero means the default.
type Limits struct {
	MaxFileSize   int64 `yaml:"max_file_size"`
	MaxDepth      int   `yaml:"max_depth"`
	MaxAliasNodes int   `yaml:"max_alias_nodes"`
}

// ArtifactLimits converts the section to decoder limits, defaults filled in.
func (l Limits) ArtifactLimits() artifact.Limits {
	out := artifact.DefaultLimits
	if l.MaxFileSize > 0 {
		out.MaxFileSize = l.MaxFileSize
	}
	if l.MaxDepth > 0 {
		out.MaxDepth = l.MaxDepth
	}
	if l.MaxAliasNodes > 0 {
		out.MaxAliasNodes = l.MaxAliasNodes
	}
	return out
}

// Problem is something wrong in the config file.
type Problem struct {
	Line, Column int
	Message      string
}

// KnownRule, when set, reports whether a rule ID exists; the config refuses
// unknown IDs so a misspelt rule is not silently ignored. The check package
// sets it (config cannot import check: check imports config).
var KnownRule func(id string) bool

// Default is the configuration used without a file or with an invalid one.
func Default() Config { return Config{} }

var lineRE = regexp.MustCompile(`line (\d+)`)

// Parse decodes the config. With problems, the returned Config is Default().
func Parse(data []byte) (Config, []Problem) {
	var cfg Config
	if len(bytes.TrimSpace(data)) == 0 {
		return Default(), nil
	}
	var root yaml.Node
	if err := yaml.Unmarshal(data, &root); err != nil {
		return Default(), []Problem{fromYAMLError(err)}
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&cfg); err != nil && !errors.Is(err, io.EOF) {
		var te *yaml.TypeError
		if errors.As(err, &te) {
			var probs []Problem
			for _, e := range te.Errors {
				probs = append(probs, fromMessage(e))
			}
			return Default(), probs
		}
		return Default(), []Problem{fromYAMLError(err)}
	}
	if probs := validate(cfg, &root); len(probs) > 0 {
		return Default(), probs
	}
	return cfg, nil
}

func fromYAMLError(err error) Problem { return fromMessage(err.Error()) }

func fromMessage(msg string) Problem {
	p := Problem{Line: 1, Column: 1, Message: msg}
	if m := lineRE.FindStringSubmatch(msg); m != nil {
		p.Line, _ = strconv.Atoi(m[1])
	}
	return p
}

func validate(cfg Config, root *yaml.Node) []Problem {
	var probs []Problem
	at := func(path ...string) (int, int) {
		n := find(root, path...)
		if n == nil {
			return 1, 1
		}
		return n.Line, n.Column
	}
	ids := make([]string, 0, len(cfg.Artifacts))
	for id := range cfg.Artifacts {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		if artifact.KindByID(id) == nil {
			l, c := at("artifacts", id)
			probs = append(probs, Problem{l, c, fmt.Sprintf("artifacts: unknown kind %q (run `phasegate schema` to list the kinds)", id)})
			continue
		}
		for _, g := range cfg.Artifacts[id] {
			if !doublestar.ValidatePattern(g) {
				l, c := at("artifacts", id)
				probs = append(probs, Problem{l, c, fmt.Sprintf("artifacts.%s: invalid glob %q", id, g)})
			}
		}
	}
	for _, g := range cfg.Ignore {
		if !doublestar.ValidatePattern(g) {
			l, c := at("ignore")
			probs = append(probs, Problem{l, c, fmt.Sprintf("ignore: invalid glob %q", g)})
		}
	}
	rules := make([]string, 0, len(cfg.Rules))
	for id := range cfg.Rules {
		rules = append(rules, id)
	}
	sort.Strings(rules)
	for _, id := range rules {
		switch cfg.Rules[id] {
		case "error", "warning", "off":
		default:
			l, c := at("rules", id)
			probs = append(probs, Problem{l, c, fmt.Sprintf("rules.%s: severity %q must be error, warning or off", id, cfg.Rules[id])})
		}
		if KnownRule != nil && !KnownRule(id) {
			l, c := at("rules", id)
			probs = append(probs, Problem{l, c, fmt.Sprintf("rules: unknown rule %q (docs/rules.md lists them)", id)})
		}
	}
	if r := cfg.Autopilot.DeferRate; r != nil && (*r < 0 || *r > 1) {
		l, c := at("autopilot", "defer_rate")
		probs = append(probs, Problem{l, c, "autopilot.defer_rate must be between 0 and 1"})
	}
	if p := cfg.Autopilot.PassScore; p != nil && (*p < 1 || *p > 10) {
		l, c := at("autopilot", "pass_score")
		probs = append(probs, Problem{l, c, "autopilot.pass_score must be between 1 and 10"})
	}
	if cfg.Pace.MaxIterations < 0 {
		l, c := at("pace", "max_iterations")
		probs = append(probs, Problem{l, c, "pace.max_iterations must be positive"})
	}
	if cfg.Limits.MaxFileSize < 0 || cfg.Limits.MaxDepth < 0 || cfg.Limits.MaxAliasNodes < 0 {
		l, c := at("limits")
		probs = append(probs, Problem{l, c, "limits: values must be positive (0 or absent means the default)"})
	}
	return probs
}

// find returns the key node at a path of mapping keys.
func find(n *yaml.Node, path ...string) *yaml.Node {
	if n.Kind == yaml.DocumentNode && len(n.Content) > 0 {
		n = n.Content[0]
	}
	var key *yaml.Node
	for _, p := range path {
		if n == nil || n.Kind != yaml.MappingNode {
			return key
		}
		var next *yaml.Node
		for i := 0; i+1 < len(n.Content); i += 2 {
			if n.Content[i].Value == p {
				key, next = n.Content[i], n.Content[i+1]
				break
			}
		}
		if next == nil {
			return key
		}
		n = next
	}
	return key
}
