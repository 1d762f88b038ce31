package config

import (
	"bytes"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/bmatcuk/doublestar/v4"
	"go.yaml.in/yaml/v3"

	"github.com/phasegate/phasegate/internal/artifact"
)

const fullConfig = `# phasegate configuration
artifacts:
  pace.gate-report:
    - "docs/gates/*.yaml"
    - "**/gate-*.yml"
  scc.submit: ["out/**/submit.json"]
ignore:
  - "examples/**"
  - legacy/
limits:
  max_file_size: 2097152
  max_depth: 32
  max_alias_nodes: 500
rules:
  pace.sentinel.ship-without-advisories: off
  pace.gate.hold-iff-fail: warning
pace:
  tdd_enforcement: true
  max_iterations: 12
scc:
  require_uuid_task_id: true
  executors: [codex, opencodecli]
  roles: [planner]
autopilot:
  defer_rate: 0.05
  pass_score: 9
outcome:
  approval_phases: [requirements, develop]
`

func ptr[T any](v T) *T { return &v }

func TestParseValid(t *testing.T) {
	tests := []struct {
		name       string
		data       string
		want       Config
		wantLimits artifact.Limits
	}{
		{
			name: "full",
			data: fullConfig,
			want: Config{
				Artifacts: map[string][]string{
					"pace.gate-report": {"docs/gates/*.yaml", "**/gate-*.yml"},
					"scc.submit":       {"out/**/submit.json"},
				},
				Ignore: []string{"examples/**", "legacy/"},
				Limits: Limits{MaxFileSize: 2097152, MaxDepth: 32, MaxAliasNodes: 500},
				Rules: map[string]string{
					"pace.sentinel.ship-without-advisories": "off",
					"pace.gate.hold-iff-fail":               "warning",
				},
				Pace:      Pace{TDDEnforcement: ptr(true), MaxIterations: 12},
				SCC:       SCC{RequireUUIDTaskID: true, Executors: []string{"codex", "opencodecli"}, Roles: []string{"planner"}},
				Autopilot: Autopilot{DeferRate: ptr(0.05), PassScore: ptr(9.0)},
				Outcome:   Outcome{ApprovalPhases: []string{"requirements", "develop"}},
			},
			wantLimits: artifact.Limits{MaxFileSize: 2097152, MaxDepth: 32, MaxAliasNodes: 500, MaxNodes: artifact.DefaultLimits.MaxNodes},
		},
		{
			name:       "empty file",
			data:       "",
			want:       Default(),
			wantLimits: artifact.DefaultLimits,
		},
		{
			name:       "whitespace only",
			data:       "\n  \n\t\n",
			want:       Default(),
			wantLimits: artifact.DefaultLimits,
		},
		{
			name:       "comments only",
			data:       "# nothing configured yet\n# see the README\n",
			want:       Default(),
			wantLimits: artifact.DefaultLimits,
		},
		{
			name:       "explicit null document",
			data:       "~\n",
			want:       Default(),
			wantLimits: artifact.DefaultLimits,
		},
		{
			name:       "zero limits mean the defaults",
			data:       "limits:\n  max_file_size: 0\n  max_depth: 0\n",
			want:       Default(),
			wantLimits: artifact.DefaultLimits,
		},
		{
			name: "one limit set",
			data: "limits:\n  max_depth: 10\n",
			want: Config{Limits: Limits{MaxDepth: 10}},
			wantLimits: artifact.Limits{MaxFileSize: artifact.DefaultLimits.MaxFileSize, MaxDepth: 10,
				MaxAliasNodes: artifact.DefaultLimits.MaxAliasNodes, MaxNodes: artifact.DefaultLimits.MaxNodes},
		},
		{
			name:       "max_depth at the ceiling",
			data:       "limits: {max_depth: 10000}\n",
			want:       Config{Limits: Limits{MaxDepth: artifact.MaxDepthCeiling}},
			wantLimits: artifact.Limits{MaxFileSize: 1 << 20, MaxDepth: artifact.MaxDepthCeiling, MaxAliasNodes: 10_000, MaxNodes: 1_000_000},
		},
		{
			name:       "anchors and aliases",
			data:       "ignore: &common [\"tmp/**\"]\nartifacts:\n  pace.plan: *common\n",
			want:       Config{Ignore: []string{"tmp/**"}, Artifacts: map[string][]string{"pace.plan": {"tmp/**"}}},
			wantLimits: artifact.DefaultLimits,
		},
		{
			name:       "deployments",
			data:       "deployments: {production: {require: [uat, Closeout]}, staging: {}, preview: ~}\n",
			want:       Config{Deployments: map[string]Deployment{"production": {Require: []string{"uat", "Closeout"}}, "staging": {}, "preview": {}}},
			wantLimits: artifact.DefaultLimits,
		},
		{
			name:       "deployments require a phase of the configured sequence",
			data:       "phases: {sequence: [build, ship]}\ndeployments:\n  prod:\n    require: [ship]\n",
			want:       Config{Phases: Phases{Sequence: []string{"build", "ship"}}, Deployments: map[string]Deployment{"prod": {Require: []string{"ship"}}}},
			wantLimits: artifact.DefaultLimits,
		},
		{
			name:       "BOM",
			data:       "\ufeffignore: [a]\n",
			want:       Config{Ignore: []string{"a"}},
			wantLimits: artifact.DefaultLimits,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, probs := Parse([]byte(tc.data))
			if len(probs) != 0 {
				t.Fatalf("problems: %+v", probs)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("config = %+v, want %+v", got, tc.want)
			}
			if l := got.Limits.ArtifactLimits(); l != tc.wantLimits {
				t.Errorf("ArtifactLimits() = %+v, want %+v", l, tc.wantLimits)
			}
		})
	}
}

func TestParseProblems(t *testing.T) {
	tests := []struct {
		name string
		data string
		// want is one "line:column: message fragment" per problem, in order.
		want []string
	}{
		{
			name: "unknown top-level key",
			data: "ignore: []\nartefacts:\n  pace.plan: [x]\n",
			want: []string{`2:1: unknown key "artefacts"`},
		},
		{
			name: "unknown limits key",
			data: "limits:\n  max_size: 10\n",
			want: []string{`2:3: unknown key "max_size"`},
		},
		{
			name: "several errors at once",
			data: "foo: 1\nignore: x\nlimits:\n  max_depth: deep\n",
			want: []string{
				`1:1: unknown key "foo"`,
				"2:1: wrong type: got a string `x`, want a list of strings",
				"4:3: wrong type: got a string `deep`, want an integer",
			},
		},
		{
			name: "deployments: a phase not in the default sequence",
			data: "deployments:\n  production:\n    require: [uat, uatt]\n",
			want: []string{`3:20: deployments: "production" requires "uatt", which is not a phase of the sequence (requirements, planning, developing, qa, integrating, uat, deployed) (did you mean "uat"?)`},
		},
		{
			name: "deployments: a default phase once the sequence is configured",
			data: "phases: {sequence: [build, ship]}\ndeployments:\n  production: {require: [uat]}\n",
			want: []string{`3:26: deployments: "production" requires "uat", which is not a phase of the sequence (build, ship)`},
		},
		{
			name: "deployments: an unknown key of an environment",
			data: "deployments:\n  production:\n    requires: [uat]\n",
			want: []string{`3:5: deployments.production: unknown key "requires" (did you mean "require"?)`},
		},
		{
			name: "deployments: one environment twice in different case",
			data: "deployments:\n  Production: {}\n  production: {require: [uat]}\n",
			want: []string{`3:3: deployments: "Production" and "production" name the same environment`},
		},
		{
			name: "deployments: require is a list",
			data: "deployments:\n  production: {require: uat}\n",
			want: []string{"2:16: deployments.production.require: wrong type: got a string `uat`, want a list of strings"},
		},
		{
			name: "deployments: an empty environment name",
			data: "deployments:\n  \"\": {}\n",
			want: []string{`2:3: deployments: an environment name is empty`},
		},
		{
			name: "decisions.invalidate_on_push outside unit, all, none",
			data: "decisions:\n  invalidate_on_push: sometimes\n",
			want: []string{`2:3: decisions.invalidate_on_push: "sometimes" must be unit, all or none`},
		},
		{
			name: "wrong type for artifacts",
			data: "artifacts: [pace.plan]\n",
			want: []string{"1:1: artifacts: wrong type: got a list, want a mapping"},
		},
		{
			name: "globs given as a string",
			data: "artifacts:\n  pace.plan: plans/*.yaml\n",
			// The YAML decoder shortens the value it quotes.
			want: []string{"2:3: wrong type: got a string `plans/*"},
		},
		{
			name: "not a mapping",
			data: "- ignore\n- limits\n",
			want: []string{"1:1: wrong type: got a list, want a mapping"},
		},
		{
			name: "unknown kind",
			data: "artifacts:\n  pace.gate-report: [a.yaml]\n  pace.gate: [b.yaml]\n",
			want: []string{`3:3: artifacts: unknown kind "pace.gate"`},
		},
		{
			name: "bad glob in artifacts points at the item",
			data: "artifacts:\n  pace.plan:\n    - ok/*.yaml\n    - \"bad/[.yaml\"\n",
			want: []string{`4:7: artifacts.pace.plan: invalid glob "bad/[.yaml"`},
		},
		{
			name: "bad glob in ignore",
			data: "ignore: [fine, \"{unclosed\"]\n",
			want: []string{`1:16: ignore: invalid glob "{unclosed"`},
		},
		{
			name: "negative limit",
			data: "limits:\n  max_file_size: 1024\n  max_depth: -1\n",
			want: []string{"3:3: limits.max_depth: -1 is negative"},
		},
		{
			name: "every negative limit",
			data: "limits: {max_file_size: -1, max_depth: -2, max_alias_nodes: -3}\n",
			want: []string{
				"1:10: limits.max_file_size: -1 is negative",
				"1:29: limits.max_depth: -2 is negative",
				"1:44: limits.max_alias_nodes: -3 is negative",
			},
		},
		{
			name: "bad severity",
			data: "rules:\n  pace.gate.hold-iff-fail: fatal\n",
			want: []string{`2:3: rules.pace.gate.hold-iff-fail: "fatal" must be error, warning or off`},
		},
		{
			name: "out-of-range settings",
			data: "autopilot:\n  defer_rate: 5\n  pass_score: 0\npace:\n  max_iterations: -1\n",
			want: []string{
				"2:3: autopilot.defer_rate: 5 is out of range: it must be between 0 and 1",
				"3:3: autopilot.pass_score: 0 is out of range: it must be between 1 and 10",
				"5:3: pace.max_iterations: -1 is negative",
			},
		},
		{
			name: "wrong type for a boolean",
			data: "scc:\n  require_uuid_task_id: maybe\n",
			want: []string{"2:3: wrong type: got a string `maybe`, want true or false"},
		},
		{
			name: "unknown key names the known ones",
			data: "autopilot:\n  threshold: 9\n",
			want: []string{`2:3: autopilot: unknown key "threshold" (known keys here: defer_rate, pass_score)`},
		},
		{
			name: "max_depth over the ceiling",
			data: "limits:\n  max_depth: 1000000\n",
			want: []string{"2:3: limits.max_depth: 1000000 is out of range: it must be between 0 and 10000"},
		},
		{
			name: "number too big",
			data: "limits:\n  max_depth: 99999999999999999999\n",
			want: []string{"2:3: limits.max_depth: 99999999999999999999 is out of range"},
		},
		{
			name: "tab indentation",
			data: "limits:\n\tmax_depth: 3\n",
			want: []string{"2:1: found character that cannot start any token"},
		},
		{
			name: "duplicate key",
			data: "ignore: [a]\nignore: [b]\n",
			want: []string{`2:1: duplicate key "ignore" (first at line 1)`},
		},
		{
			name: "two documents",
			data: "ignore: [a]\n---\nignore: [b]\n",
			want: []string{"2:1: more than one YAML document"},
		},
		{
			name: "alias inside its own anchor",
			data: "ignore: &a [*a]\n",
			want: []string{"1:13: YAML alias *a is inside its own anchor"},
		},
		{
			name: "error at the end of a file without a final newline",
			data: "ignore: [a",
			want: []string{"1:1: did not find expected ',' or ']'"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, probs := Parse([]byte(tc.data))
			if !reflect.DeepEqual(got, Default()) {
				t.Errorf("config with problems = %+v, want Default()", got)
			}
			checkProblems(t, probs, tc.want)
			for _, p := range probs {
				if strings.Contains(p.Message, "config.") || strings.Contains(p.Message, "[]string") || strings.HasPrefix(p.Message, "yaml:") {
					t.Errorf("message speaks Go, not YAML: %q", p.Message)
				}
			}
		})
	}
}

func formatProblem(p Problem) string { return fmt.Sprintf("%d:%d: %s", p.Line, p.Column, p.Message) }

// checkProblems compares problems with want, one "L:C: fragment" each, in
// order: the position exactly, the message by a fragment of it.
func checkProblems(t *testing.T, probs []Problem, want []string) {
	t.Helper()
	var have []string
	for _, p := range probs {
		have = append(have, formatProblem(p))
	}
	if len(have) != len(want) {
		t.Fatalf("problems:\n  %s\nwant %d:\n  %s", strings.Join(have, "\n  "), len(want), strings.Join(want, "\n  "))
	}
	for i, w := range want {
		pos, frag, _ := strings.Cut(w, ": ")
		if !strings.HasPrefix(have[i], pos+":") || !strings.Contains(have[i], frag) {
			t.Errorf("problem %d = %q, want %q", i, have[i], w)
		}
	}
}

func TestParseUnknownRule(t *testing.T) {
	tests := []struct {
		name     string
		data     string
		wantProb string
	}{
		{name: "known rule", data: "rules: {pace.gate.hold-iff-fail: off}\n"},
		{name: "misspelt rule", data: "rules:\n  pace.gate.hold-if-fail: off\n", wantProb: `2:3: rules: unknown rule "pace.gate.hold-if-fail"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg, probs := Parse([]byte(tc.data))
			if tc.wantProb == "" {
				if len(probs) != 0 || cfg.Rules["pace.gate.hold-iff-fail"] != "off" {
					t.Fatalf("config %+v, problems %+v", cfg, probs)
				}
				return
			}
			if len(probs) != 1 || !strings.HasPrefix(formatProblem(probs[0]), tc.wantProb) {
				t.Fatalf("problems %+v, want %q", probs, tc.wantProb)
			}
		})
	}
}

func TestDefaultPath(t *testing.T) {
	if DefaultPath != ".github/phasegate.yml" {
		t.Errorf("DefaultPath = %q; it is a public convention (docs/architecture.md)", DefaultPath)
	}
	if l := Default().Limits.ArtifactLimits(); l != artifact.DefaultLimits {
		t.Errorf("Default() limits = %+v, want artifact.DefaultLimits %+v", l, artifact.DefaultLimits)
	}
}

// FuzzConfigParse: Parse never panics; with problems it returns Default()
// and every problem is inside the file; without, the config is valid and
// survives a round trip through YAML.
func FuzzConfigParse(f *testing.F) {
	for _, s := range []string{
		fullConfig,
		"",
		"# comment\n",
		"artifacts:\n  pace.gate: [x]\n",
		"ignore: [\"[\"]\n",
		"limits: {max_depth: -1}\n",
		"ignore: &a [*a]\n",
		"a: &a [x,x]\nb: [*a,*a]\n",
		"foo: 1\n",
		"ignore: [a]\n---\n",
		"limits:\n\tmax_depth: 3\n",
		"artifacts: {pace.plan: !!python/object/apply:os.system [ls]}\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		cfg, probs := Parse(data)
		lines := bytes.Count(data, []byte("\n")) + 1
		if len(probs) > 0 {
			if !reflect.DeepEqual(cfg, Default()) {
				t.Fatalf("config with problems is not Default(): %+v", cfg)
			}
			for _, p := range probs {
				if p.Line < 1 || p.Column < 1 || p.Line > lines || p.Message == "" {
					t.Fatalf("problem %+v outside the file of %d lines or without a message", p, lines)
				}
			}
			return
		}
		for id, globs := range cfg.Artifacts {
			if artifact.KindByID(id) == nil {
				t.Fatalf("unknown kind %q accepted", id)
			}
			for _, g := range globs {
				if !doublestar.ValidatePattern(g) {
					t.Fatalf("invalid glob %q accepted", g)
				}
			}
		}
		for _, g := range cfg.Ignore {
			if !doublestar.ValidatePattern(g) {
				t.Fatalf("invalid ignore glob %q accepted", g)
			}
		}
		if l := cfg.Limits; l.MaxFileSize < 0 || l.MaxDepth < 0 || l.MaxAliasNodes < 0 || l.MaxDepth > artifact.MaxDepthCeiling {
			t.Fatalf("out-of-range limits accepted: %+v", l)
		}
		out, err := yaml.Marshal(cfg)
		if err != nil {
			t.Fatalf("marshal: %v", err)
		}
		again, probs := Parse(out)
		if len(probs) > 0 {
			t.Fatalf("round trip of %+v through\n%s gives problems %+v", cfg, out, probs)
		}
		// Compared as YAML, so that nil and empty collections are alike.
		if out2, _ := yaml.Marshal(again); !bytes.Equal(out2, out) {
			t.Fatalf("round trip:\n%s\nbecame\n%s", out, out2)
		}
	})
}

// TestParseAliasBomb: the config decoder never expands a "billion laughs":
// the typed fields hold no nested lists, so each alias is one type error.
func TestParseAliasBomb(t *testing.T) {
	got, probs := Parse([]byte(configBomb))
	if !reflect.DeepEqual(got, Default()) {
		t.Errorf("config = %+v, want Default()", got)
	}
	if len(probs) == 0 || len(probs) > 20 {
		t.Errorf("%d problems, want a few: %+v", len(probs), probs)
	}
}

// configBomb defines 10^7 strings through aliases under an unknown key and
// uses them as the SCC executors.
var configBomb = func() string {
	var b strings.Builder
	b.WriteString("x:\n  a: &a [x,x,x,x,x,x,x,x,x,x]\n")
	prev := "a"
	for _, name := range []string{"b", "c", "d", "e", "f", "g"} {
		b.WriteString("  " + name + ": &" + name + " [" + strings.TrimSuffix(strings.Repeat("*"+prev+",", 10), ",") + "]\n")
		prev = name
	}
	b.WriteString("scc:\n  executors: *g\n")
	return b.String()
}()

func BenchmarkParseAliasBomb(b *testing.B) {
	for i := 0; i < b.N; i++ {
		Parse([]byte(configBomb))
	}
}

// TestParseManyDuplicates: a mapping of thousands of equal keys gives a
// bounded list of problems (the YAML decoder alone would report every pair).
func TestParseManyDuplicates(t *testing.T) {
	data := []byte(strings.Repeat("ignore: []\n", 5000))
	got, probs := Parse(data)
	if !reflect.DeepEqual(got, Default()) {
		t.Errorf("config = %+v, want Default()", got)
	}
	if len(probs) != maxProblems+1 {
		t.Fatalf("%d problems, want %d", len(probs), maxProblems+1)
	}
	if p := probs[0]; p.Line != 2 || p.Column != 1 || !strings.Contains(p.Message, `duplicate key "ignore"`) {
		t.Errorf("first problem = %+v", p)
	}
	if p := probs[maxProblems]; !strings.Contains(p.Message, "and 4899 more problems") {
		t.Errorf("last problem = %+v", p)
	}
}

func TestParseLimitsOnSize(t *testing.T) {
	tests := []struct {
		name string
		data []byte
		want string
	}{
		{name: "over the size limit", data: bytes.Repeat([]byte("#"), maxSize+1), want: "over the 1048576-byte limit"},
		{name: "too many keys", data: []byte("rules:\n" + manyKeys(maxKeys+1)), want: "mapping has 10001 keys"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, probs := Parse(tc.data)
			if !reflect.DeepEqual(got, Default()) {
				t.Errorf("config = %+v, want Default()", got)
			}
			if len(probs) != 1 || !strings.Contains(probs[0].Message, tc.want) {
				t.Errorf("problems = %+v, want one saying %q", probs, tc.want)
			}
		})
	}
}

func manyKeys(n int) string {
	var b strings.Builder
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "  r%d: off\n", i)
	}
	return b.String()
}

func TestInvalidateOnPush(t *testing.T) {
	tests := []struct {
		name, data, want string
	}{
		{name: "default", data: "", want: InvalidateUnit},
		{name: "unit", data: "decisions:\n  invalidate_on_push: unit\n", want: InvalidateUnit},
		{name: "all", data: "decisions:\n  invalidate_on_push: all\n", want: InvalidateAll},
		{name: "none", data: "decisions:\n  invalidate_on_push: none\n", want: InvalidateNone},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg, probs := Parse([]byte(tc.data))
			if len(probs) > 0 {
				t.Fatalf("problems: %v", probs)
			}
			if got := cfg.Decisions.InvalidateOnPushOrDefault(); got != tc.want {
				t.Errorf("invalidate_on_push = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestViaApps(t *testing.T) {
	tests := []struct {
		name, data string
		want       bool
		problem    string
	}{
		{name: "default", data: "", want: true},
		{name: "null", data: "resolvers:\n  via_apps:\n", want: true},
		{name: "true", data: "resolvers:\n  via_apps: true\n", want: true},
		{name: "false", data: "resolvers:\n  via_apps: false\n", want: false},
		{name: "not a boolean", data: "resolvers:\n  via_apps: never\n", want: true, problem: "2:3: resolvers.via_apps: wrong type"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg, probs := Parse([]byte(tc.data))
			switch {
			case tc.problem == "" && len(probs) > 0:
				t.Fatalf("problems: %v", probs)
			case tc.problem != "" && (len(probs) != 1 || !strings.Contains(formatProblem(probs[0]), tc.problem)):
				t.Fatalf("problems = %v, want one with %q", probs, tc.problem)
			}
			if got := cfg.Resolvers.ViaAppsOrDefault(); got != tc.want {
				t.Errorf("via_apps = %v, want %v", got, tc.want)
			}
		})
	}
}

// TestParseOnePass: every problem of a config is reported at once — a type
// error does not hide an unknown key, a misspelt rule or a bad glob — with
// the nearest known name when one is close, and what is accepted today but
// wrong is refused.
func TestParseOnePass(t *testing.T) {
	tests := []struct {
		name string
		data string
		want []string // "line:column: message fragment", in order
	}{
		{
			name: "type error, unknown key, misspelt rule and kind, bad glob together",
			data: "limits:\n  max_depth: deep\nignor: [a]\nrules:\n  pace.gate.hold-if-fail: off\nartifacts:\n  pace.gate-reprot: [\"x/[\"]\n  pace.plan: [\"y/[\"]\n",
			want: []string{
				"2:3: limits.max_depth: wrong type: got a string `deep`, want an integer",
				`3:1: unknown key "ignor" (did you mean "ignore"?)`,
				`5:3: rules: unknown rule "pace.gate.hold-if-fail" (did you mean "pace.gate.hold-iff-fail"?)`,
				`7:3: artifacts: unknown kind "pace.gate-reprot" (did you mean "pace.gate-report"?)`,
				`7:22: artifacts.pace.gate-reprot: invalid glob "x/["`,
				`8:15: artifacts.pace.plan: invalid glob "y/["`,
			},
		},
		{
			name: "a misspelt severity",
			data: "rules:\n  pace.gate.hold-iff-fail: warn\n",
			want: []string{`2:3: rules.pace.gate.hold-iff-fail: "warn" must be error, warning or off (did you mean "warning"?)`},
		},
		{
			name: "a rule that exists but cannot be reconfigured",
			data: "rules:\n  schema: off\n  syntax: warning\n",
			want: []string{
				`2:3: rules: "schema" is a decoding or schema rule: it always applies and cannot be reconfigured`,
				`3:3: rules: "syntax" is a decoding or schema rule`,
			},
		},
		{
			name: "schema.convention can be reconfigured",
			data: "rules:\n  schema.convention: error\n",
		},
		{
			name: "a negative outcome.max_per_push",
			data: "outcome:\n  max_per_push: -1\n",
			want: []string{"2:3: outcome.max_per_push: -1 is negative"},
		},
		{
			name: "a non-string identity",
			data: "identity: 123\n",
			want: []string{"1:1: identity: wrong type: got an integer, want a string"},
		},
		{
			name: "an identity that is no login",
			data: "identity: \"my app\"\n",
			want: []string{`1:1: identity: "my app" must be a GitHub login`},
		},
		{
			name: "an alias without a sequence must name a default phase",
			data: "phases:\n  aliases:\n    build: developping\n",
			want: []string{`3:5: phases.aliases: "build" maps to "developping", which is not in the default sequence`},
		},
		{
			name: "an alias outside the sequence",
			data: "phases:\n  sequence: [a, b]\n  aliases:\n    x: c\n",
			want: []string{`4:5: phases.aliases: "x" maps to "c", which is not in phases.sequence`},
		},
		{
			name: "numbers in a list of strings",
			data: "resolvers:\n  users: [alice, 42]\n  teams: [acme]\n",
			want: []string{
				"2:18: resolvers.users[1]: wrong type: got an integer, want a string",
				`3:11: resolvers.teams[0]: "acme" must be org/team-slug`,
			},
		},
		{
			name: "keys left without a value mean the defaults",
			data: "rules:\nignore:\nlimits:\n  max_depth:\n",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, probs := Parse([]byte(tc.data))
			checkProblems(t, probs, tc.want)
		})
	}
}

// TestAliasesWithoutSequence: aliases given without a sequence add to the
// default sequence's aliases (they were silently ignored before).
func TestDeploymentRequires(t *testing.T) {
	cfg, probs := Parse([]byte("deployments: {Production: {require: [uat]}, staging: {}}\n"))
	if len(probs) > 0 {
		t.Fatal(probs)
	}
	tests := []struct {
		environment string
		want        []string
	}{
		{environment: "Production", want: []string{"uat"}},
		{environment: "production", want: []string{"uat"}}, // GitHub's environment names ignore case
		{environment: "staging", want: nil},                // named without require: every blocking decision
		{environment: "preview", want: nil},                // not named: every blocking decision
		{environment: "", want: nil},
	}
	for _, tc := range tests {
		if got := cfg.DeploymentRequires(tc.environment); !slices.Equal(got, tc.want) {
			t.Errorf("DeploymentRequires(%q) = %q, want %q", tc.environment, got, tc.want)
		}
	}
}

func TestAliasesWithoutSequence(t *testing.T) {
	cfg, probs := Parse([]byte("phases:\n  aliases:\n    build: developing\n"))
	if len(probs) > 0 {
		t.Fatal(probs)
	}
	p := cfg.PhasesOrDefault()
	if got := p.Label("build"); got != "phase:developing" {
		t.Errorf("Label(build) = %q, want phase:developing", got)
	}
	if got := p.Label("technical-plan"); got != "phase:planning" {
		t.Errorf("a default alias was lost: Label(technical-plan) = %q", got)
	}
}

// TestSchemaMatchesConfig: the schema's keys are the Config type's, section
// by section, so the struct the loader fills and the schema it validates
// with say the same thing.
func TestSchemaMatchesConfig(t *testing.T) {
	c, err := loadSchema()
	if err != nil {
		t.Fatal(err)
	}
	var walk func(t reflect.Type, node map[string]any, at string)
	walk = func(typ reflect.Type, node map[string]any, at string) {
		props, _ := node["properties"].(map[string]any)
		var fields []string
		for i := 0; i < typ.NumField(); i++ {
			key, _, _ := strings.Cut(typ.Field(i).Tag.Get("yaml"), ",")
			fields = append(fields, key)
			sub, ok := props[key].(map[string]any)
			if !ok {
				t.Errorf("%s%s: in the Config type, not in the schema", at, key)
				continue
			}
			if ft := typ.Field(i).Type; ft.Kind() == reflect.Struct {
				walk(ft, sub, at+key+".")
			}
		}
		if node["additionalProperties"] != false {
			t.Errorf("%s: the schema allows keys it does not name", at)
		}
		for key := range props {
			if !slices.Contains(fields, key) {
				t.Errorf("%s%s: in the schema, not in the Config type", at, key)
			}
		}
	}
	walk(reflect.TypeOf(Config{}), c.raw.(map[string]any), "")
	limits := c.raw.(map[string]any)["properties"].(map[string]any)["limits"].(map[string]any)["properties"].(map[string]any)
	if got := fmt.Sprint(limits["max_depth"].(map[string]any)["maximum"]); got != fmt.Sprint(artifact.MaxDepthCeiling) {
		t.Errorf("limits.max_depth maximum = %s, want artifact.MaxDepthCeiling %d", got, artifact.MaxDepthCeiling)
	}
}
