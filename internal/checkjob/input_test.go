package checkjob

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/phasegate/phasegate/internal/decide"
	"github.com/phasegate/phasegate/internal/ghclient"
	"github.com/phasegate/phasegate/internal/testutil"
)

var input = Input{Head: strings.Repeat("a", 40), Tree: strings.Repeat("7", 40), BaseRef: "main", Base: strings.Repeat("b", 40),
	PR: 12, ConfigBlob: strings.Repeat("c", 40), Version: "v1.2.3"}

// TestInputDigest: every field but the tree is in the digest, so a result
// recorded for one input never stands for another.
func TestInputDigest(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		change func(*Input)
		same   bool
	}{
		{name: "nothing", change: func(*Input) {}, same: true},
		{name: "the tree (the head names it)", change: func(in *Input) { in.Tree = "" }, same: true},
		{name: "the head", change: func(in *Input) { in.Head = strings.Repeat("d", 40) }},
		{name: "the base branch", change: func(in *Input) { in.BaseRef = "scratch" }},
		{name: "the base commit", change: func(in *Input) { in.Base = strings.Repeat("e", 40) }},
		{name: "the pull request", change: func(in *Input) { in.PR = 0 }},
		{name: "the fork", change: func(in *Input) { in.Fork = "agent/shop" }},
		{name: "the configuration", change: func(in *Input) { in.ConfigBlob = "" }},
		{name: "the version", change: func(in *Input) { in.Version = "v1.2.4" }},
		{name: "a field run into the next", change: func(in *Input) { in.BaseRef, in.Base = "main"+in.Base, "" }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			in := input
			tt.change(&in)
			if got := in.Digest() == input.Digest(); got != tt.same {
				t.Errorf("digest equal: %v, want %v", got, tt.same)
			}
			if d := in.Digest(); len(d) != 64 || strings.Trim(d, "0123456789abcdef") != "" {
				t.Errorf("digest %q is not 64 hex digits", d)
			}
		})
	}
}

// TestInputOf: the input of a request is the same whoever builds it: the
// commits and the fork in lower case.
func TestInputOf(t *testing.T) {
	t.Parallel()
	req := Request{SHA: strings.Repeat("A", 40), Base: strings.Repeat("B", 40), BaseRef: "Main", Fork: "Agent/Shop",
		PR: &ghclient.PR{Number: 7}, Version: "v1"}
	want := Input{Head: strings.Repeat("a", 40), Base: strings.Repeat("b", 40), BaseRef: "Main", Fork: "agent/shop", PR: 7,
		ConfigBlob: "cfg", Version: "v1"}
	if got := InputOf(req, "cfg"); got != want {
		t.Errorf("InputOf = %+v, want %+v", got, want)
	}
}

// TestInputMarkdown: the "Checked input" section, with what the pusher
// chooses (a branch name) escaped.
func TestInputMarkdown(t *testing.T) {
	t.Parallel()
	hostile := input
	hostile.BaseRef = "x`|**bold**<img src=x>\u202e\n# heading"
	hostile.Fork = "mallory/shop"
	tests := []struct {
		name string
		in   Input
	}{
		{name: "pull-request", in: input},
		{name: "push-new-branch", in: Input{Head: input.Head, Tree: input.Tree, Version: "v1.2.3"}},
		{name: "hostile", in: hostile},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := tt.in.Markdown()
			testutil.Golden(t, filepath.Join("testdata", "golden", "input-"+tt.name+".md"), []byte(got))
			if strings.ContainsRune(got, '\u202e') || strings.Count(got, "`")%2 != 0 {
				t.Errorf("a bidi control or an unbalanced code span reached the summary:\n%s", got)
			}
			for _, line := range strings.Split(strings.TrimSpace(got), "\n") {
				if strings.HasPrefix(line, "|") && strings.Count(line, "|") != 3 || strings.HasPrefix(line, "# ") {
					t.Errorf("a value broke out of its cell: %q", line)
				}
			}
		})
	}
}

// TestInputRecord: the input goes into the external_id and at the end of
// the summary, which is cut to keep both within GitHub's limit; no input
// read, nothing recorded.
func TestInputRecord(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("é", ghclient.MaxCheckOutputBytes/2)
	for _, summary := range []string{"SHIP", long} {
		c := decide.Contracts{State: "success", Summary: summary}
		in := input
		in.record(&c)
		if c.Input != input.Digest() || c.PR != 12 {
			t.Errorf("recorded input %q pr %d", c.Input, c.PR)
		}
		if len(c.Summary) > ghclient.MaxCheckOutputBytes || !utf8.ValidString(c.Summary) {
			t.Errorf("summary of %d bytes (valid UTF-8: %v), over GitHub's %d", len(c.Summary), utf8.ValidString(c.Summary), ghclient.MaxCheckOutputBytes)
		}
		if !strings.HasSuffix(c.Summary, input.Markdown()) || !strings.HasPrefix(c.Summary, summary[:4]) {
			t.Errorf("the summary does not keep its start and end with the input")
		}
		if summary == long && !strings.Contains(c.Summary, "cut here") {
			t.Errorf("a cut summary does not say so")
		}
	}
	c := decide.Contracts{State: "failure", Summary: "could not check"}
	(*Input)(nil).record(&c)
	if c.Input != "" || c.PR != 0 || c.Summary != "could not check" {
		t.Errorf("no input read, yet %+v recorded", c)
	}
}

type fileReader struct {
	data  string
	found bool
	err   error
}

func (f fileReader) FileContent(context.Context, string, string, string, string) ([]byte, bool, error) {
	return []byte(f.data), f.found, f.err
}

// TestConfigBlob: the configuration's id is git's blob id of its content.
func TestConfigBlob(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		gh      fileReader
		want    string
		wantErr bool
	}{
		{name: "a file", gh: fileReader{data: "hello\n", found: true}, want: "ce013625030ba8dba906f756967f9e9ca394464a"},
		{name: "an empty file", gh: fileReader{found: true}, want: "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391"},
		{name: "none: the defaults", gh: fileReader{}, want: ""},
		{name: "unreadable", gh: fileReader{err: errors.New("502")}, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := ConfigBlob(context.Background(), tt.gh, "o", "r", ".github/phasegate.yml", "")
			if got != tt.want || (err != nil) != tt.wantErr {
				t.Errorf("ConfigBlob = %q, %v; want %q (error: %v)", got, err, tt.want, tt.wantErr)
			}
		})
	}
}
