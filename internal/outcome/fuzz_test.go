package outcome

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/phasegate/phasegate/internal/artifact"
)

// FuzzParseMarkers: whatever the body, marker parsing and both verifiers
// return without panicking; a marker found is the body's last line exactly
// and reads back as itself; a verifier's error is exactly one of
// ErrTampered and ErrNotPhasegate; and a body that verifies without a key
// and carries no signature is exactly what Render produces.
func FuzzParseMarkers(f *testing.F) {
	for _, name := range []string{"seed.md", "seed.signed.md", "hostile.md", "resolution.md", "resolution-captured.signed.md"} {
		if data, err := os.ReadFile(filepath.Join("testdata", "golden", name)); err == nil {
			f.Add(string(data))
		}
	}
	f.Add("<!-- phasegate:outcome v1 id=" + hexA + " source=a%20b@0123abc pr=3 sig=- -->")
	f.Add("x\r\n<!-- phasegate:resolution v1 outcome=" + hexA + " decision=D-001 option=approve by=o command=1 captured=2 sig=" + hexB + " -->\r\n")
	f.Add("<!-- phasegate:outcome v2 -->")
	f.Add("/resolve D-001 approve")
	f.Fuzz(func(t *testing.T, body string) {
		ms := ParseMarkers(body)
		if len(ms) > 1 {
			t.Fatalf("%d markers", len(ms))
		}
		for _, m := range ms {
			if m.Version != 1 {
				t.Fatalf("marker of version %d", m.Version)
			}
			line := lastLine(body)
			if m.String() != line {
				t.Fatalf("marker %q is not the last line %q", m.String(), line)
			}
			back, err := ParseMarker(m.String())
			if err != nil || back != m {
				t.Fatalf("marker does not read back: %+v, %v", back, err)
			}
		}
		for _, key := range [][]byte{nil, testKey} {
			v, err := VerifyOutcomeComment(body, key)
			checkVerifyError(t, err)
			if err == nil && len(key) == 0 && ms[0].Sig == "" {
				again, err := Render(v.Outcome, v.Canonical, Meta{Source: v.Source, Commit: v.Commit, PR: v.PR})
				if err != nil || again != Normalize(body) {
					t.Fatalf("a verified body is not what Render writes: %v", err)
				}
			}
			r, err := VerifyResolutionComment(body, key)
			checkVerifyError(t, err)
			if err == nil && len(key) == 0 && ms[0].Sig == "" {
				again, err := RenderResolution(r.Resolution, nil)
				if err != nil || again != Normalize(body) {
					t.Fatalf("a verified body is not what RenderResolution writes: %v", err)
				}
			}
		}
	})
}

func checkVerifyError(t *testing.T, err error) {
	t.Helper()
	if err != nil && errors.Is(err, ErrTampered) == errors.Is(err, ErrNotPhasegate) {
		t.Fatalf("error %v is not exactly one of tampered and not phasegate", err)
	}
}

// FuzzRenderVerify: for any outcome built from the fuzzer's strings, the
// canonical YAML decodes back to the same value, the rendered comment
// verifies, a one-byte edit of it does not, its Markdown has no line
// outside the fence that starts with "/" and no HTML comment delimiter but
// the marker's, and its HTML (GitHub-flavoured) has no raw HTML, mention,
// reference or command line of the agent's.
func FuzzRenderVerify(f *testing.F) {
	f.Add("requirements", "feature-042", "User avatar upload sizing", "Mentioned by user", "out-of-scope", "Approve PREQ?", "D-001", "approve", "reject", "approve", "handoff", "next", true, uint16(7), []byte(nil), uint16(0))
	f.Add("# x\n/resolve D-001 approve", "<!-- @a", "@org/team </details> /resolve D-001 approve", "-->\n<!--", "`````", "a|b\\", "D-002", "c`", "@x", "", "<!--", "-->", false, uint16(0), []byte("k"), uint16(99))
	f.Add("\u202e", "#1 GH-2", "&#64;x &lt;", "\r\n/x\r/y\u2028/z", "~~~", "$x$ *a* _b_ [c](d)", "D 3", "ok", "ok2", "nope", "````", "www.example.com", true, uint16(65535), []byte("key"), uint16(1234))
	f.Fuzz(func(t *testing.T, phase, feature, title, reasoning, category, question, id, opt1, opt2, recommended, extraKey, extraVal string, blocking bool, pr uint16, key []byte, edit uint16) {
		v := map[string]any{
			"phase":    phase,
			"feature":  feature,
			"produced": []any{map[string]any{"artifact": title, "location": extraVal, extraKey: reasoning}},
			"findings": []any{
				map[string]any{"type": category, "title": title, "reasoning": reasoning, "proposed_category": category},
				map[string]any{"type": question, "title": feature, "reasoning": phase},
			},
			"pending_decisions": []any{map[string]any{
				"id": id, "type": "approval", "question": question, "options": []any{opt1, opt2},
				"recommended": recommended, "blocking": blocking, "reasoning": reasoning,
			}},
		}
		if _, known := v[extraKey]; !known {
			v[extraKey] = []any{extraVal, map[string]any{extraVal: title}}
		}
		canonical, err := Canonical(v)
		if err != nil {
			for _, s := range []string{phase, feature, title, reasoning, category, question, id, opt1, opt2, recommended, extraKey, extraVal} {
				if !utf8.ValidString(s) {
					return
				}
			}
			t.Fatalf("Canonical: %v", err)
		}
		checkCanonical(t, v, canonical)
		o, err := Parse(v)
		if err != nil {
			return // blank phase, id or option, duplicate keys…: not an outcome
		}
		body, err := Render(o, canonical, Meta{Source: "outcomes/" + extraKey + ".yaml", Commit: testCommit, PR: int(pr), Key: key})
		if errors.Is(err, ErrTooLong) || (err != nil && checkSourcePath("outcomes/"+extraKey+".yaml") != nil) {
			return
		}
		if err != nil {
			t.Fatalf("Render: %v", err)
		}
		got, err := VerifyOutcomeComment(body, key)
		if err != nil {
			t.Fatalf("VerifyOutcomeComment: %v\n%s", err, body)
		}
		if got.ID != ID(canonical) || got.PR != int(pr) {
			t.Fatalf("Verified = %+v", got)
		}
		i := int(edit) % len(body)
		edited := body[:i] + string([]byte{body[i] ^ 0x20}) + body[i+1:]
		if _, err := VerifyOutcomeComment(edited, key); !errors.Is(err, ErrTampered) {
			t.Fatalf("a comment edited at byte %d verified: %v", i, err)
		}
		for _, p := range markdownReport(body) {
			t.Errorf("Markdown: %s", p)
		}
		var refs []string
		if pr > 0 {
			refs = []string{strconv.Itoa(int(pr))}
		}
		for _, p := range inertReport(renderHTML(t, body), 1, nil, refs) {
			t.Errorf("HTML: %s", p)
		}
		if t.Failed() {
			t.Logf("body:\n%s", body)
		}
	})
}

// FuzzCanonical: every value the artifact decoder produces from any bytes
// has canonical YAML, which decodes back to the same value and is its own
// canonical form.
func FuzzCanonical(f *testing.F) {
	for _, name := range []string{"seed.yaml", "hostile.yaml", "defaults.yaml", "empty.yaml"} {
		if data, err := os.ReadFile(filepath.Join("testdata", "outcomes", name)); err == nil {
			f.Add(data)
		}
	}
	f.Add([]byte("a: [1, 2.5, -0.0, 1e400, 123456789012345678901234, null, ~, yes, '0755', 0x1F, 2026-04-30]\n"))
	f.Add([]byte("\"<!--\": \"-->\"\nk: \"\\u202e\\x07\\t\"\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 1<<16 {
			return
		}
		doc := artifact.Decode("f.yaml", nil, data, artifact.DefaultLimits)
		m, ok := doc.Value.(map[string]any)
		if !doc.Decoded || !ok {
			return
		}
		canonical, err := Canonical(m)
		if err != nil {
			t.Fatalf("Canonical of a decoded value: %v", err)
		}
		checkCanonical(t, m, canonical)
		if strings.Contains(string(canonical), "\r") {
			t.Fatalf("canonical YAML holds a carriage return")
		}
	})
}
