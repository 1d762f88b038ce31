package outcome

import (
	"errors"
	"strings"
	"testing"
)

var (
	hexA = strings.Repeat("a", 64)
	hexB = strings.Repeat("b", 64)
)

func TestParseMarker(t *testing.T) {
	tests := []struct {
		name    string
		line    string
		want    Marker
		wantErr string
	}{
		{
			name: "outcome",
			line: "<!-- phasegate:outcome v1 id=" + hexA + " source=.devwork/feature-042/outcome.yaml@0123abc pr=12 sig=" + hexB + " -->",
			want: Marker{Kind: KindOutcome, Version: 1, ID: hexA, Source: ".devwork/feature-042/outcome.yaml", Commit: "0123abc", PR: 12, Sig: hexB},
		},
		{
			name: "outcome without pr and sig",
			line: "<!-- phasegate:outcome v1 id=" + hexA + " source=a%20b%40c.yaml@" + testCommit + " pr=- sig=- -->",
			want: Marker{Kind: KindOutcome, Version: 1, ID: hexA, Source: "a b@c.yaml", Commit: testCommit},
		},
		{
			name: "resolution",
			line: "<!-- phasegate:resolution v1 outcome=" + hexA + " decision=D-001 option=approve by=octocat command=99 sig=- -->",
			want: Marker{Kind: KindResolution, Version: 1, Resolution: Resolution{Outcome: hexA, Decision: "D-001", Option: "approve", By: "octocat", Command: 99}},
		},
		{
			name: "resolution with capture",
			line: "<!-- phasegate:resolution v1 outcome=" + hexA + " decision=D-002 option=capture by=mona_lisa-acme command=9223372036854775807 captured=57 sig=" + hexB + " -->",
			want: Marker{Kind: KindResolution, Version: 1, Resolution: Resolution{Outcome: hexA, Decision: "D-002", Option: "capture", By: "mona_lisa-acme", Command: 9223372036854775807, Captured: 57}, Sig: hexB},
		},
		{name: "not a marker", line: "<!-- hello -->", wantErr: "not a phasegate marker"},
		{name: "no close", line: "<!-- phasegate:outcome v1 id=" + hexA, wantErr: "not a phasegate marker"},
		{name: "too short", line: "<!-- phasegate: -->", wantErr: "marker has no version"},
		{name: "unknown kind", line: "<!-- phasegate:verdict v1 -->", wantErr: "unknown marker kind"},
		{name: "bad version", line: "<!-- phasegate:outcome one -->", wantErr: "marker version is not v<number>"},
		{name: "other version", line: "<!-- phasegate:outcome v2 anything=goes -->", wantErr: "unknown marker version v2"},
		{name: "version with leading zero", line: "<!-- phasegate:outcome v01 -->", wantErr: "unknown marker version v01"},
		{name: "unknown key", line: "<!-- phasegate:outcome v1 id=" + hexA + " source=a@0123abc pr=- extra=1 sig=- -->", wantErr: `unexpected marker key "extra"`},
		{name: "duplicate key", line: "<!-- phasegate:outcome v1 id=" + hexA + " id=" + hexA + " source=a@0123abc pr=- sig=- -->", wantErr: `unexpected marker key "id"`},
		{name: "other order", line: "<!-- phasegate:outcome v1 source=a@0123abc id=" + hexA + " pr=- sig=- -->", wantErr: `unexpected marker key "source"`},
		{name: "missing key", line: "<!-- phasegate:outcome v1 id=" + hexA + " source=a@0123abc pr=- -->", wantErr: "marker has no sig"},
		{name: "double space", line: "<!-- phasegate:outcome v1  id=" + hexA + " source=a@0123abc pr=- sig=- -->", wantErr: "marker field is not key=value"},
		{name: "upper-case id", line: "<!-- phasegate:outcome v1 id=" + strings.ToUpper(hexA) + " source=a@0123abc pr=- sig=- -->", wantErr: "marker id: not 64 lower-case hex digits"},
		{name: "short id", line: "<!-- phasegate:outcome v1 id=abc source=a@0123abc pr=- sig=- -->", wantErr: "marker id: not 64 lower-case hex digits"},
		{name: "source without commit", line: "<!-- phasegate:outcome v1 id=" + hexA + " source=a pr=- sig=- -->", wantErr: "marker source: not path@commit"},
		{name: "short commit", line: "<!-- phasegate:outcome v1 id=" + hexA + " source=a@0123ab pr=- sig=- -->", wantErr: "marker source: commit is not 7 to 64 lower-case hex digits"},
		{name: "raw > in path", line: "<!-- phasegate:outcome v1 id=" + hexA + " source=a>b@0123abc pr=- sig=- -->", wantErr: "marker source: path is not percent-encoded"},
		{name: "needless escape", line: "<!-- phasegate:outcome v1 id=" + hexA + " source=%61@0123abc pr=- sig=- -->", wantErr: "marker source: path has a needless escape"},
		{name: "lower-case escape", line: "<!-- phasegate:outcome v1 id=" + hexA + " source=a%2fb@0123abc pr=- sig=- -->", wantErr: "marker source: path is not percent-encoded"},
		{name: "control in path", line: "<!-- phasegate:outcome v1 id=" + hexA + " source=a%0A@0123abc pr=- sig=- -->", wantErr: "marker source: source path has a control character"},
		{name: "empty path", line: "<!-- phasegate:outcome v1 id=" + hexA + " source=@0123abc pr=- sig=- -->", wantErr: "marker source: path is empty"},
		{name: "pr zero", line: "<!-- phasegate:outcome v1 id=" + hexA + " source=a@0123abc pr=0 sig=- -->", wantErr: "marker pr: not a positive number"},
		{name: "pr too big", line: "<!-- phasegate:outcome v1 id=" + hexA + " source=a@0123abc pr=99999999999 sig=- -->", wantErr: "marker pr: not a positive number"},
		{name: "empty sig", line: "<!-- phasegate:outcome v1 id=" + hexA + " source=a@0123abc pr=- sig= -->", wantErr: "marker sig: not 64 lower-case hex digits"},
		{name: "decision with space escape", line: "<!-- phasegate:resolution v1 outcome=" + hexA + " decision=D%20001 option=approve by=o command=1 sig=- -->", wantErr: "marker decision: not a token"},
		{name: "bot login", line: "<!-- phasegate:resolution v1 outcome=" + hexA + " decision=D-001 option=approve by=ci[bot] command=1 sig=- -->", wantErr: "marker by: not a GitHub login"},
		{name: "command leading zero", line: "<!-- phasegate:resolution v1 outcome=" + hexA + " decision=D-001 option=approve by=o command=01 sig=- -->", wantErr: "marker command: not a comment id"},
		{name: "command overflow", line: "<!-- phasegate:resolution v1 outcome=" + hexA + " decision=D-001 option=approve by=o command=9223372036854775808 sig=- -->", wantErr: "marker command: not a comment id"},
		{name: "captured after sig", line: "<!-- phasegate:resolution v1 outcome=" + hexA + " decision=D-001 option=approve by=o command=1 sig=- captured=2 -->", wantErr: `unexpected marker key "captured"`},
		{name: "outcome key in resolution", line: "<!-- phasegate:resolution v1 id=" + hexA + " -->", wantErr: `unexpected marker key "id"`},
		{name: "too long", line: "<!-- phasegate:outcome v1 " + strings.Repeat("x", 3000) + " -->", wantErr: "marker is longer than 2048 bytes"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseMarker(tc.line)
			if tc.wantErr != "" {
				if err == nil || err.Error() != tc.wantErr {
					t.Fatalf("ParseMarker error = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("ParseMarker: %v", err)
			}
			if got != tc.want {
				t.Errorf("ParseMarker =\n%+v\nwant\n%+v", got, tc.want)
			}
			if s := got.String(); s != tc.line {
				t.Errorf("String() = %q, want the parsed line %q", s, tc.line)
			}
		})
	}
	if _, err := ParseMarker("<!-- phasegate:outcome v7 -->"); !errors.Is(err, ErrUnknownVersion) {
		t.Errorf("a v7 marker: %v, want ErrUnknownVersion", err)
	}
}

func TestParseMarkers(t *testing.T) {
	outcome := "<!-- phasegate:outcome v1 id=" + hexA + " source=a@0123abc pr=- sig=- -->"
	resolution := "<!-- phasegate:resolution v1 outcome=" + hexA + " decision=D-001 option=approve by=o command=1 sig=- -->"
	tests := []struct {
		name string
		body string
		want Kind // "" for none
	}{
		{name: "last line", body: "text\n\n" + outcome, want: KindOutcome},
		{name: "trailing blank lines and CRLF", body: "text\r\n" + resolution + " \r\n\r\n  \n", want: KindResolution},
		{name: "marker alone", body: outcome, want: KindOutcome},
		{name: "text after the marker", body: outcome + "\nP.S.", want: ""},
		{name: "marker quoted earlier", body: outcome + "\n\n/resolve D-001 approve", want: ""},
		{name: "indented", body: "x\n " + outcome, want: ""},
		{name: "unknown version", body: "x\n<!-- phasegate:outcome v2 id=1 -->", want: ""},
		{name: "empty", body: "", want: ""},
		{name: "blank", body: " \n\n", want: ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := ParseMarkers(tc.body)
			switch {
			case tc.want == "" && len(got) != 0:
				t.Errorf("ParseMarkers = %+v, want none", got)
			case tc.want != "" && (len(got) != 1 || got[0].Kind != tc.want):
				t.Errorf("ParseMarkers = %+v, want one %s marker", got, tc.want)
			}
		})
	}
}

func TestEscapePath(t *testing.T) {
	for _, p := range []string{"a.yaml", ".devwork/feature-042/x_y~z.outcome.yaml", "a b/c@d%e+f#g?h", "größe/日本.yaml", "-"} {
		enc := escapePath(p)
		for i := 0; i < len(enc); i++ {
			if !pathSafe(enc[i]) && enc[i] != '%' {
				t.Errorf("escapePath(%q) = %q has byte %q", p, enc, enc[i])
			}
		}
		back, err := unescapePath(enc)
		if err != nil || back != p {
			t.Errorf("unescapePath(escapePath(%q)) = %q, %v", p, back, err)
		}
	}
}

func TestLogin(t *testing.T) {
	tests := []struct {
		in   string
		want bool
	}{
		{"octocat", true}, {"mona-lisa", true}, {"mona_acme", true}, {"a", true}, {"0x", true},
		{"", false}, {"-a", false}, {"_a", false}, {"a b", false}, {"a[bot]", false}, {"é", false}, {strings.Repeat("a", 101), false},
	}
	for _, tc := range tests {
		if got := Login(tc.in); got != tc.want {
			t.Errorf("Login(%q) = %v, want %v", tc.in, got, tc.want)
		}
	}
}
