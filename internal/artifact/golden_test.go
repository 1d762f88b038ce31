package artifact

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/phasegate/phasegate/internal/testutil"
)

// TestDecodeGolden decodes every file under testdata/decode/ and compares
// what came out — decoded or not, the problems, the value and the position
// of every value — with the file's .golden twin. Files named *.md are
// decoded as Autopilot learnings, the others by extension. Run with -update
// to rewrite the golden files after reviewing a change.
func TestDecodeGolden(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "decode", "*"))
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, file := range files {
		if strings.HasSuffix(file, ".golden") {
			continue
		}
		n++
		t.Run(filepath.Base(file), func(t *testing.T) {
			data, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			var kind *Kind
			if strings.HasSuffix(file, ".md") {
				kind = KindByID("autopilot.learnings")
			}
			got := renderDoc(Decode(filepath.Base(file), kind, data, DefaultLimits))
			testutil.Golden(t, file+".golden", []byte(got))
		})
	}
	if n < 5 {
		t.Errorf("only %d golden inputs", n)
	}
}

// renderDoc prints a document for a golden file: deterministic, one fact a
// line, values with their Go types.
func renderDoc(d *Document) string {
	var b strings.Builder
	fmt.Fprintf(&b, "decoded: %v\n", d.Decoded)
	b.WriteString("problems:\n")
	for _, p := range d.Problems {
		fmt.Fprintf(&b, "  %d:%d %s: %s\n", p.Pos.Line, p.Pos.Column, p.Rule, p.Message)
	}
	b.WriteString("value:\n")
	v, err := json.MarshalIndent(d.Value, "  ", "  ")
	if err != nil {
		v = []byte(err.Error())
	}
	b.WriteString("  " + string(v) + "\n")
	b.WriteString("positions:\n")
	var lines []string
	budget := 10_000
	walkPointers(d.Value, nil, &budget, func(tokens []string) {
		p := d.Locate(tokens)
		lines = append(lines, fmt.Sprintf("  %q %d:%d %s", JoinPointer(tokens), p.Line, p.Column, typeName(valueAt(d.Value, tokens))))
	})
	sort.Strings(lines)
	b.WriteString(strings.Join(lines, "\n"))
	b.WriteString("\n")
	return b.String()
}

func valueAt(v any, tokens []string) any {
	for _, tok := range tokens {
		switch c := v.(type) {
		case map[string]any:
			v = c[tok]
		case []any:
			i, _ := arrayIndex(tok)
			v = c[i]
		}
	}
	return v
}

func typeName(v any) string {
	switch v.(type) {
	case map[string]any:
		return "object"
	case []any:
		return "array"
	case nil:
		return "null"
	}
	return fmt.Sprintf("%T", v)
}
