package outcome

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"iter"
	"strings"
	"testing"
)

// edits yields bodies that differ from body by one byte: at every
// position the byte with its lowest bit flipped, and at every step-th
// position also another letter, the byte deleted, and a letter or a line
// break inserted. They are made one at a time, as the caller asks for
// them, so that only one is alive at once (all of them at once are tens
// of megabytes of a long comment, which -race pays for in shadow memory).
func edits(body string, step int) iter.Seq[string] {
	return func(yield func(string) bool) {
		for i := 0; i < len(body); i++ {
			if !yield(body[:i] + string([]byte{body[i] ^ 0x01}) + body[i+1:]) {
				return
			}
			if i%step != 0 {
				continue
			}
			c := byte('x')
			if body[i] == c {
				c = 'y'
			}
			for _, e := range [...]string{body[:i] + string([]byte{c}) + body[i+1:], body[:i] + body[i+1:], body[:i] + "z" + body[i:], body[:i] + "\n" + body[i:]} {
				if !yield(e) {
					return
				}
			}
		}
	}
}

// TestOutcomeEditsAreTampering: any single-byte edit of an outcome comment,
// anywhere in it — summary, YAML, fence, marker — is reported as tampering,
// never accepted and never mistaken for someone else's comment.
func TestOutcomeEditsAreTampering(t *testing.T) {
	for _, tc := range []struct {
		name, input string
		key         []byte
	}{
		{name: "seed", input: "seed.yaml"},
		{name: "seed signed", input: "seed.yaml", key: testKey},
		{name: "hostile signed", input: "hostile.yaml", key: testKey},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			body, _, _ := renderCase(t, tc.input, tc.key, 7)
			step := 3
			if testing.Short() || len(body) > 4000 {
				step = 17
			}
			for edited := range edits(body, step) {
				_, err := VerifyOutcomeComment(edited, tc.key)
				if !errors.Is(err, ErrTampered) {
					t.Fatalf("an edited comment verified with %v, want ErrTampered; diff at %d:\n%q", err, firstDiff(body, edited), around(edited, firstDiff(body, edited)))
				}
				var te *TamperError
				if !errors.As(err, &te) || te.Kind != KindOutcome {
					t.Fatalf("error %v is not a *TamperError of an outcome", err)
				}
			}
		})
	}
}

func TestResolutionEditsAreTampering(t *testing.T) {
	for _, tc := range resolutionCases {
		t.Run(tc.name, func(t *testing.T) {
			body, err := RenderResolution(tc.res, tc.key)
			if err != nil {
				t.Fatal(err)
			}
			for edited := range edits(body, 1) {
				_, err := VerifyResolutionComment(edited, tc.key)
				if !errors.Is(err, ErrTampered) {
					t.Fatalf("an edited comment verified with %v, want ErrTampered; diff at %d:\n%q", err, firstDiff(body, edited), around(edited, firstDiff(body, edited)))
				}
			}
		})
	}
}

func firstDiff(a, b string) int {
	for i := 0; i < len(a) && i < len(b); i++ {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

func around(s string, i int) string {
	return s[max(0, i-40):min(len(s), i+40)]
}

func TestVerifyOutcomeComment(t *testing.T) {
	seed, _, _ := renderCase(t, "seed.yaml", nil, 7)
	signed, _, _ := renderCase(t, "seed.yaml", testKey, 7)
	resolution, err := RenderResolution(resolutionCases[0].res, nil)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		body   string
		key    []byte
		want   error // nil, ErrTampered or ErrNotPhasegate
		reason string
	}{
		{name: "unsigned without key", body: seed},
		{name: "signed with key", body: signed, key: testKey},
		{name: "signed without key: sig not checked", body: signed},
		{name: "CRLF and trailing white space, as GitHub's editor saves", body: strings.ReplaceAll(signed, "\n", " \r\n") + "\r\n\r\n", key: testKey},
		{name: "unsigned with key", body: seed, key: testKey, want: ErrTampered, reason: "the comment is not signed, but a signing key is configured"},
		{name: "other key", body: signed, key: []byte("another key"), want: ErrTampered, reason: "the signature does not verify"},
		{name: "summary edited", body: strings.Replace(seed, "User avatar upload sizing |", "User avatar upload |", 1), want: ErrTampered, reason: "the comment is not what phasegate rendered from its YAML"},
		{name: "YAML edited", body: strings.Replace(seed, "blocking: true", "blocking: false", 1), want: ErrTampered, reason: "the YAML does not hash to the marker's id"},
		{name: "fence removed", body: strings.Replace(seed, "```yaml", "yaml", 1), want: ErrTampered, reason: "the YAML block is missing or broken"},
		{name: "text after the marker", body: seed + "\n\nP.S. approved", want: ErrTampered, reason: "the marker line is missing or malformed"},
		{name: "marker removed", body: seed[:strings.LastIndex(seed, "\n")], want: ErrTampered, reason: "the marker line is missing or malformed"},
		{name: "marker version changed", body: strings.Replace(seed, "outcome v1", "outcome v2", 1), want: ErrTampered, reason: "the marker line is missing or malformed"},
		{name: "someone else's comment", body: "LGTM\n\n/resolve D-001 approve", want: ErrNotPhasegate},
		{name: "empty", body: "", want: ErrNotPhasegate},
		{name: "a resolution comment", body: resolution, want: ErrNotPhasegate},
		{name: "a newer version", body: "Phase Outcome v2\n\n<!-- phasegate:outcome v2 id=x -->", want: ErrNotPhasegate},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			v, err := VerifyOutcomeComment(tc.body, tc.key)
			if tc.want == nil {
				if err != nil {
					t.Fatalf("VerifyOutcomeComment: %v", err)
				}
				if v.Outcome.Phase != "requirements" || v.Signed != (len(tc.key) > 0) {
					t.Errorf("Verified = %+v", v)
				}
				return
			}
			if !errors.Is(err, tc.want) {
				t.Fatalf("error = %v, want %v", err, tc.want)
			}
			if errors.Is(err, ErrTampered) == errors.Is(err, ErrNotPhasegate) {
				t.Fatalf("error %v must be exactly one of tampered and not phasegate", err)
			}
			var te *TamperError
			if tc.reason != "" && (!errors.As(err, &te) || te.Reason != tc.reason) {
				t.Errorf("error = %v, want reason %q", err, tc.reason)
			}
			if unsigned := tc.reason == errNoSig.Error(); errors.Is(err, ErrUnsigned) != unsigned {
				t.Errorf("errors.Is(%v, ErrUnsigned) = %v, want %v", err, !unsigned, unsigned)
			}
		})
	}
}

// TestConsistentForgery: someone able to edit phasegate's comment (a
// repository admin) who rewrites the YAML, the summary and the id together
// is caught by the signature only. Without a key the comment verifies: the
// ledger's other checks (author, edit history) are all that is left.
func TestConsistentForgery(t *testing.T) {
	value, _, _ := loadOutcome(t, "seed.yaml")
	forged := value.(map[string]any)
	d := forged["pending_decisions"].([]any)[0].(map[string]any)
	d["blocking"] = false
	o, err := Parse(forged)
	if err != nil {
		t.Fatal(err)
	}
	canonical, err := Canonical(forged)
	if err != nil {
		t.Fatal(err)
	}
	body, err := Render(o, canonical, Meta{Source: "outcomes/seed.yaml", Commit: testCommit, PR: 7})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := VerifyOutcomeComment(body, nil); err != nil {
		t.Errorf("without a key a consistent forgery cannot be told: %v", err)
	}
	if _, err := VerifyOutcomeComment(body, testKey); !errors.Is(err, ErrTampered) {
		t.Errorf("with a key a forgery must fail: %v", err)
	}
	// Copying the signature of the real comment does not help.
	real, _, _ := renderCase(t, "seed.yaml", testKey, 7)
	realSig := real[strings.LastIndex(real, "sig=")+4 : strings.LastIndex(real, " -->")]
	copied := strings.Replace(body, "sig=-", "sig="+realSig, 1)
	if _, err := VerifyOutcomeComment(copied, testKey); !errors.Is(err, ErrTampered) {
		t.Errorf("a copied signature must fail: %v", err)
	}
}

// TestSignedMessage pins the signing scheme: the HMAC-SHA256 of the kind and
// version line, every marker field but sig in marker order, and the
// SHA-256 of the body above the marker.
func TestSignedMessage(t *testing.T) {
	body, _, canonical := renderCase(t, "seed.yaml", testKey, 7)
	i := strings.LastIndex(body, "\n")
	above := body[:i+1]
	sum := sha256.Sum256([]byte(above))
	msg := "phasegate:outcome v1\n" +
		"id=" + ID(canonical) + "\n" +
		"source=outcomes/seed.yaml@" + testCommit + "\n" +
		"pr=7\n" +
		"body=" + hex.EncodeToString(sum[:]) + "\n"
	mac := hmac.New(sha256.New, testKey)
	mac.Write([]byte(msg))
	want := "sig=" + hex.EncodeToString(mac.Sum(nil)) + " -->"
	if !strings.HasSuffix(body, want) {
		t.Errorf("marker %q does not end with %q", body[i+1:], want)
	}

	res := resolutionCases[1].res
	rbody, err := RenderResolution(res, testKey)
	if err != nil {
		t.Fatal(err)
	}
	i = strings.LastIndex(rbody, "\n")
	sum = sha256.Sum256([]byte(rbody[:i+1]))
	msg = "phasegate:resolution v1\n" +
		"outcome=" + res.Outcome + "\n" +
		"decision=D-002\noption=capture\nby=mona_lisa-acme\ncommand=42\ncaptured=57\n" +
		"body=" + hex.EncodeToString(sum[:]) + "\n"
	mac = hmac.New(sha256.New, testKey)
	mac.Write([]byte(msg))
	if want := "sig=" + hex.EncodeToString(mac.Sum(nil)) + " -->"; !strings.HasSuffix(rbody, want) {
		t.Errorf("marker %q does not end with %q", rbody[i+1:], want)
	}
}

func TestVerifyResolutionComment(t *testing.T) {
	res := resolutionCases[0].res
	plain, err := RenderResolution(res, nil)
	if err != nil {
		t.Fatal(err)
	}
	signed, err := RenderResolution(res, testKey)
	if err != nil {
		t.Fatal(err)
	}
	outcome, _, _ := renderCase(t, "seed.yaml", nil, 7)
	tests := []struct {
		name string
		body string
		key  []byte
		want error
	}{
		{name: "plain", body: plain},
		{name: "signed", body: signed, key: testKey},
		{name: "signed, no key", body: signed},
		{name: "unsigned, key", body: plain, key: testKey, want: ErrUnsigned},
		{name: "other option in the text", body: strings.Replace(plain, "→ approve", "→ reject", 1), want: ErrTampered},
		{name: "other option in the marker", body: strings.Replace(plain, "option=approve", "option=reject", 1), want: ErrTampered},
		{name: "other option everywhere, signed", body: strings.ReplaceAll(signed, "approve", "reject"), key: testKey, want: ErrTampered},
		{name: "an outcome comment", body: outcome, want: ErrNotPhasegate},
		{name: "a user's comment", body: "thanks", want: ErrNotPhasegate},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			v, err := VerifyResolutionComment(tc.body, tc.key)
			if tc.want == nil {
				if err != nil || v.Resolution != res {
					t.Fatalf("VerifyResolutionComment = %+v, %v", v, err)
				}
				return
			}
			if !errors.Is(err, tc.want) {
				t.Fatalf("error = %v, want %v", err, tc.want)
			}
		})
	}
}

func TestRenderErrors(t *testing.T) {
	_, o, canonical := loadOutcome(t, "seed.yaml")
	_, other, _ := loadOutcome(t, "defaults.yaml")
	good := Meta{Source: "a.yaml", Commit: testCommit}
	tests := []struct {
		name      string
		o         *Outcome
		canonical []byte
		meta      Meta
		wantErr   string
	}{
		{name: "no outcome", o: nil, canonical: canonical, meta: good, wantErr: "render outcome: no outcome"},
		{name: "other outcome", o: other, canonical: canonical, meta: good, wantErr: "render outcome: the outcome is not the one its canonical YAML holds"},
		{name: "not canonical", o: o, canonical: []byte("feature: feature-042\nphase: requirements\npending_decisions: []\n"), meta: good, wantErr: "render outcome: canonical yaml: the YAML is not in canonical form"},
		{name: "not YAML", o: o, canonical: []byte("a: [\n"), meta: good, wantErr: "render outcome: canonical yaml: invalid YAML: did not find expected node content"},
		{name: "not an outcome", o: o, canonical: []byte("phase: x\n"), meta: good, wantErr: "render outcome: canonical yaml: pending_decisions is missing"},
		{name: "no source", o: o, canonical: canonical, meta: Meta{Commit: testCommit}, wantErr: "render outcome: source path is empty"},
		{name: "bad commit", o: o, canonical: canonical, meta: Meta{Source: "a", Commit: "HEAD"}, wantErr: "render outcome: commit is not 7 to 64 lower-case hex digits"},
		{name: "negative PR", o: o, canonical: canonical, meta: Meta{Source: "a", Commit: testCommit, PR: -1}, wantErr: "render outcome: pull request number is negative"},
		{name: "huge PR", o: o, canonical: canonical, meta: Meta{Source: "a", Commit: testCommit, PR: 1 << 40}, wantErr: "render outcome: marker pr: not a positive number"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Render(tc.o, tc.canonical, tc.meta)
			if err == nil || err.Error() != tc.wantErr {
				t.Fatalf("Render error = %v, want %q", err, tc.wantErr)
			}
		})
	}
}

func TestRenderTooLong(t *testing.T) {
	long := strings.Repeat("<", 40000) // escaped to &lt; in the summary
	v := map[string]any{"phase": "qa", "pending_decisions": []any{}, "produced": []any{map[string]any{"artifact": long, "location": "x"}}}
	o, err := Parse(v)
	if err != nil {
		t.Fatal(err)
	}
	canonical, err := Canonical(v)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Render(o, canonical, Meta{Source: "a", Commit: testCommit}); !errors.Is(err, ErrTooLong) {
		t.Errorf("Render error = %v, want ErrTooLong", err)
	}
}

func TestRenderResolutionErrors(t *testing.T) {
	ok := Resolution{Outcome: hexA, Decision: "D-001", Option: "approve", By: "octocat", Command: 1}
	tests := []struct {
		name    string
		mutate  func(r *Resolution)
		wantErr string
	}{
		{name: "bad outcome id", mutate: func(r *Resolution) { r.Outcome = "x" }, wantErr: "render resolution: marker outcome: not 64 lower-case hex digits"},
		{name: "untypable decision", mutate: func(r *Resolution) { r.Decision = "D 1" }, wantErr: "render resolution: marker field is not key=value"},
		{name: "option with markup", mutate: func(r *Resolution) { r.Option = "**x**" }, wantErr: "render resolution: marker option: not a token"},
		{name: "bot login", mutate: func(r *Resolution) { r.By = "ci[bot]" }, wantErr: "render resolution: marker by: not a GitHub login"},
		{name: "no command", mutate: func(r *Resolution) { r.Command = 0 }, wantErr: "render resolution: marker command: not a comment id"},
		{name: "negative capture", mutate: func(r *Resolution) { r.Captured = -1 }, wantErr: "render resolution: captured issue number is negative"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := ok
			tc.mutate(&r)
			_, err := RenderResolution(r, nil)
			if err == nil || err.Error() != tc.wantErr {
				t.Fatalf("RenderResolution error = %v, want %q", err, tc.wantErr)
			}
		})
	}
}

func TestNormalize(t *testing.T) {
	tests := []struct{ in, want string }{
		{"a\r\nb", "a\nb"},
		{"a \t\nb  ", "a\nb"},
		{"a\n\n\n", "a"},
		{"a\rb", "a\rb"},
		{"  a", "  a"},
	}
	for _, tc := range tests {
		if got := Normalize(tc.in); got != tc.want {
			t.Errorf("Normalize(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
