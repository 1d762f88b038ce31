package outcome

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

// Marker tests that bench/mutation (issue 18) found missing.

// TestMutationActorsVerified: the accounts a marker records as having
// pushed or authored the change are what verification returns, exactly:
// they are the accounts that may not resolve the outcome (an agent must not
// approve its own work), so losing one on the way would let it decide.
func TestMutationActorsVerified(t *testing.T) {
	_, o, canonical := loadOutcome(t, "seed.yaml")
	tests := []struct {
		name   string
		actors []string
	}{
		{name: "none", actors: nil},
		{name: "one", actors: []string{"agent-bot"}},
		{name: "several, bots too", actors: []string{"agent-bot", "release[bot]", "mona_lisa-acme"}},
	}
	for _, tc := range tests {
		for _, key := range [][]byte{nil, testKey} {
			t.Run(tc.name+map[bool]string{true: "/no key", false: "/key"}[key == nil], func(t *testing.T) {
				body, err := Render(o, canonical, Meta{Source: "outcomes/seed.yaml", Commit: testCommit, PR: 7, Key: key, Actors: tc.actors})
				if err != nil {
					t.Fatal(err)
				}
				v, err := VerifyOutcomeComment(body, key)
				if err != nil {
					t.Fatal(err)
				}
				if !reflect.DeepEqual(v.Actors, tc.actors) {
					t.Errorf("actors = %#v, want %#v", v.Actors, tc.actors)
				}
				mk := ParseMarkers(body)
				if len(mk) != 1 || !reflect.DeepEqual(mk[0].ActorLogins(), tc.actors) {
					t.Errorf("marker actors = %+v, want %#v", mk, tc.actors)
				}
			})
		}
	}
}

// TestMutationMarkerBounds: each marker field is read exactly as the
// grammar bounds it, so that one marker has one spelling (the signature
// covers the fields as spelled) and everything phasegate writes reads back:
// numbers without a sign, issue numbers up to 2³¹−1, commits of 7 to 64
// hex digits (SHA-1 and SHA-256 repositories), logins up to 100 characters,
// marker lines up to 2048 bytes, and a version that is not v<number> is
// malformed (tampering when phasegate's identity posted it), not a newer
// phasegate's marker to ignore.
func TestMutationMarkerBounds(t *testing.T) {
	outcomeLine := func(source, pr string) string {
		return "<!-- phasegate:outcome v1 id=" + hexA + " source=" + source + " pr=" + pr + " sig=- -->"
	}
	resolutionLine := func(by, command string) string {
		return "<!-- phasegate:resolution v1 outcome=" + hexA + " decision=D-001 option=approve by=" + by + " command=" + command + " sig=- -->"
	}
	tests := []struct {
		name    string
		line    string
		wantErr string // "" when it must parse
	}{
		{name: "the largest issue number", line: outcomeLine("a@"+testCommit, "2147483647")},
		{name: "an issue number over 2³¹−1", line: outcomeLine("a@"+testCommit, "2147483648"), wantErr: "not a positive number"},
		{name: "an issue number with 11 digits", line: outcomeLine("a@"+testCommit, "10000000000"), wantErr: "not a positive number"},
		{name: "a signed issue number", line: outcomeLine("a@"+testCommit, "+7"), wantErr: "not a positive number"},
		{name: "a signed comment id", line: resolutionLine("octocat", "+99"), wantErr: "not a comment id"},
		{name: "a 7-digit commit", line: outcomeLine("a@0123abc", "-")},
		{name: "a 64-digit commit (SHA-256)", line: outcomeLine("a@"+hexB, "-")},
		{name: "a 6-digit commit", line: outcomeLine("a@0123ab", "-"), wantErr: "commit is not 7 to 64"},
		{name: "a 65-digit commit", line: outcomeLine("a@"+hexB+"b", "-"), wantErr: "commit is not 7 to 64"},
		{name: "a 100-character login", line: resolutionLine("a"+strings.Repeat("b", 99), "99")},
		{name: "a 101-character login", line: resolutionLine("a"+strings.Repeat("b", 100), "99"), wantErr: "not a GitHub login"},
		{name: "a 1024-byte source path", line: outcomeLine(strings.Repeat("p", 1024)+"@"+testCommit, "-")},
		{name: "a 1025-byte source path", line: outcomeLine(strings.Repeat("p", 1025)+"@"+testCommit, "-"), wantErr: "longer than 1024 bytes"},
		{name: "a source path that is not UTF-8", line: outcomeLine("a%FF@"+testCommit, "-"), wantErr: "not UTF-8"},
		{name: "twenty actors", line: strings.Replace(outcomeLine("a@"+testCommit, "-"), " pr=- ", " pr=- actors=a,b,c,d,e,f,g,h,i,j,k,l,m,n,o,p,q,r,s,t ", 1)},
		{name: "twenty-one actors", line: strings.Replace(outcomeLine("a@"+testCommit, "-"), " pr=- ", " pr=- actors=a,b,c,d,e,f,g,h,i,j,k,l,m,n,o,p,q,r,s,t,u ", 1), wantErr: "not a list of 1 to 20"},
		{name: "no actor", line: strings.Replace(outcomeLine("a@"+testCommit, "-"), " pr=- ", " pr=- actors= ", 1), wantErr: "not a list of 1 to 20"},
		{name: "a resolution's head", line: strings.Replace(resolutionLine("octocat", "99"), " sig=", " head="+testCommit+" sig=", 1)},
		{name: "a resolution's head that is no commit", line: strings.Replace(resolutionLine("octocat", "99"), " sig=", " head=main sig=", 1), wantErr: "commit is not 7 to 64"},
		{name: "a resolution's head before its auth", line: strings.Replace(resolutionLine("octocat", "99"), " sig=", " head="+testCommit+" auth=write sig=", 1), wantErr: "unexpected marker key"},
		{name: "an authorisation", line: strings.Replace(resolutionLine("octocat", "99"), " sig=", " auth=maintain sig=", 1)},
		{name: "an authorisation that is no permission", line: strings.Replace(resolutionLine("octocat", "99"), " sig=", " auth=owner sig=", 1), wantErr: "not a permission"},
		{name: "a version that is not a number", line: "<!-- phasegate:outcome vX id=" + hexA + " -->", wantErr: "marker version is not v<number>"},
		{name: "a signed version", line: "<!-- phasegate:outcome v+1 id=" + hexA + " -->", wantErr: "marker version is not v<number>"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m, err := ParseMarker(tc.line)
			if tc.wantErr == "" {
				if err != nil {
					t.Fatalf("ParseMarker: %v", err)
				}
				if m.String() != tc.line {
					t.Errorf("String = %q, want the line parsed", m.String())
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) || errors.Is(err, ErrUnknownVersion) {
				t.Errorf("ParseMarker = %+v, %v; want an error with %q", m, err, tc.wantErr)
			}
		})
	}
}

// TestMutationMarkerLength: a marker line of exactly 2048 bytes is read,
// one of 2049 is not.
func TestMutationMarkerLength(t *testing.T) {
	actors := make([]string, 10)
	for i := range actors {
		actors[i] = string(rune('a'+i)) + strings.Repeat("x", 99)
	}
	m := Marker{Kind: KindOutcome, Version: 1, ID: hexA, Commit: testCommit, Actors: strings.Join(actors, ","), Sig: hexB}
	m.Source = "p"
	m.Source = strings.Repeat("p", 1+maxMarker-len(m.String()))
	if n := len(m.String()); n != maxMarker {
		t.Fatalf("the marker is %d bytes, want %d", n, maxMarker)
	}
	if back, err := ParseMarker(m.String()); err != nil || back != m {
		t.Errorf("a %d-byte marker: %+v, %v", maxMarker, back, err)
	}
	m.Source += "p"
	if _, err := ParseMarker(m.String()); err == nil || !strings.Contains(err.Error(), "longer than") {
		t.Errorf("a %d-byte marker: %v, want it refused as too long", maxMarker+1, err)
	}
}

// TestMutationMarkerSpelling: a path's letters and digits stand for
// themselves in the marker (only other bytes are percent-encoded), so the
// markers phasegate wrote keep reading as written; and the marker is found
// on a body's last non-blank line wherever that line is, also right after a
// leading blank line.
func TestMutationMarkerSpelling(t *testing.T) {
	const path = "outcomes/AZaz09/quiz-Zone_1.outcome.yaml"
	if got := escapePath(path); got != path {
		t.Errorf("escapePath(%q) = %q: letters and digits must not be escaped", path, got)
	}
	line := "<!-- phasegate:outcome v1 id=" + hexA + " source=" + path + "@" + testCommit + " pr=- sig=- -->"
	if m, err := ParseMarker(line); err != nil || m.Source != path {
		t.Errorf("ParseMarker: %+v, %v", m, err)
	}
	for _, body := range []string{line, "\n" + line, "text\n" + line + "\n\n", "\r\n" + line + " \r\n"} {
		if ms := ParseMarkers(body); len(ms) != 1 || ms[0].Source != path {
			t.Errorf("ParseMarkers(%q) = %+v, want the marker", body, ms)
		}
	}
}

// TestActorsNamedNotMentioned: the outcome comment names the accounts that
// pushed or authored the change in code spans, so GitHub shows them and
// notifies nobody (a bot's "[bot]" included).
func TestActorsNamedNotMentioned(t *testing.T) {
	_, o, canonical := loadOutcome(t, "seed.yaml")
	tests := []struct {
		name   string
		actors []string
		want   string
	}{
		{name: "none", actors: nil, want: ""},
		{name: "one", actors: []string{"agent-bot"}, want: "**Pushed or authored by:** `agent-bot` (they cannot resolve its decisions)\n\n"},
		{name: "several", actors: []string{"agent-bot", "release[bot]"}, want: "**Pushed or authored by:** `agent-bot`, `release[bot]` (they cannot resolve its decisions)\n\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			body, err := Render(o, canonical, Meta{Source: "outcomes/seed.yaml", Commit: testCommit, Actors: tc.actors})
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.Contains(body, "Pushed or authored by"); got != (tc.want != "") || tc.want != "" && !strings.Contains(body, tc.want) {
				t.Errorf("body does not name the actors as %q:\n%s", tc.want, body)
			}
			for _, a := range tc.actors {
				if strings.Contains(body, "@"+a) {
					t.Errorf("body mentions @%s", a)
				}
			}
		})
	}
}
