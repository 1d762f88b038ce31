package artifact

import (
	"strings"
	"testing"
)

// BenchmarkAliasBomb measures the "billion laughs" file: the alias budget
// must stop it after about MaxAliasNodes nodes, so it costs about as much as
// a small ordinary file, not 10^9 nodes. Compare with BenchmarkDecodeYAML.
func BenchmarkAliasBomb(b *testing.B) {
	data := []byte(aliasBomb)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		d := Decode("bomb.yaml", nil, data, DefaultLimits)
		if d.Decoded || len(d.Problems) != 1 || d.Problems[0].Rule != RuleAliasBudget {
			b.Fatalf("decoded %v, problems %v", d.Decoded, d.Problems)
		}
	}
}

// BenchmarkDeepNesting measures a 1 MiB file of '[' in YAML and JSON: both
// stop at the depth limit.
func BenchmarkDeepNesting(b *testing.B) {
	data := []byte(strings.Repeat("[", 1<<20-1))
	for _, path := range []string{"deep.json", "deep.yaml"} {
		b.Run(path, func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			for i := 0; i < b.N; i++ {
				d := Decode(path, nil, data, DefaultLimits)
				if d.Decoded {
					b.Fatal("decoded")
				}
			}
		})
	}
}

var benchYAML = []byte(`day: 1
agent: GATE
criteria_results:
  - criterion: "User.create() stores bcrypt-hashed password"
    result: PASS
    evidence: "tests/test_user_model.py::test_create_hashes_password PASSED"
  - criterion: "Login rejects a wrong password"
    result: PARTIAL
    evidence: "tests/test_login.py::test_wrong_password"
blockers: []
deferred: ["rate limiting"]
gate_decision: SHIP
hold_reason: ""
`)

func BenchmarkDecodeYAML(b *testing.B) {
	b.SetBytes(int64(len(benchYAML)))
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if d := Decode(".pace/day-1/gate-report.yaml", nil, benchYAML, DefaultLimits); !d.Decoded {
			b.Fatal(d.Problems)
		}
	}
}

var benchJSON = []byte(`{
  "issue": 42,
  "title": "Add a cache",
  "steps": [
    {"id": 1, "file": "cache.go", "action": "create", "description": "an LRU cache with a TTL"},
    {"id": 2, "file": "cache_test.go", "action": "create", "description": "table tests"},
    {"id": 3, "file": "server.go", "action": "modify", "description": "use the cache"}
  ],
  "affected_files": ["cache.go", "cache_test.go", "server.go"],
  "tier": "standard"
}`)

func BenchmarkDecodeJSON(b *testing.B) {
	b.SetBytes(int64(len(benchJSON)))
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if d := Decode(".pipeline/42/plan.json", nil, benchJSON, DefaultLimits); !d.Decoded {
			b.Fatal(d.Problems)
		}
	}
}
