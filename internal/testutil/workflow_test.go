package testutil

import (
	"fmt"
	"testing"
)

// TestRunWorkflowCommands pins the emulator to the runner's behaviour, so
// that the tests built on it test what GitHub does.
func TestRunWorkflowCommands(t *testing.T) {
	tests := []struct {
		name      string
		out       string
		effective []string // "name props data" of each effective command
		ignored   int
		regions   []StopRegion
	}{
		{name: "plain text", out: "hello\nworld: a::b\n", effective: nil},
		{name: "annotation with properties", out: "::error file=a%3A%3Ab.yaml,line=3,title=t%2C x::m%0A%25\n",
			effective: []string{"error map[file:a::b.yaml line:3 title:t, x] m\n%"}},
		{name: "leading white space", out: " \t\u3000::warning::w\n", effective: []string{"warning map[] w"}},
		{name: "unknown command is text", out: "::pwned::x\n::ERROR::upper\n", effective: []string{"ERROR map[] upper"}},
		{name: "v1 anywhere in the line", out: "a.yaml:1:1: got ##[error file=x;line=2]v1%5D\n",
			effective: []string{"error map[file:x line:2] v1]"}},
		{name: "carriage return starts a line", out: "text\r::error::cr\r\n", effective: []string{"error map[] cr"}},
		{name: "stop and resume", out: "::stop-commands::tok\n::error::hidden\n##[warning]hidden\n::TOK::\n::error::shown\n",
			effective: []string{"error map[] shown"}, ignored: 2, regions: []StopRegion{{Token: "tok", Start: 1, End: 4}}},
		{name: "stop inside a stop is ignored", out: "::stop-commands::a\n::stop-commands::b\n::b::\n::error::hidden\n::a::\n",
			ignored: 2, regions: []StopRegion{{Token: "a", Start: 1, End: 5}}},
		{name: "resume by the v1 form", out: "::stop-commands::tok\nsome ##[tok]\n::error::shown\n",
			effective: []string{"error map[] shown"}, regions: []StopRegion{{Token: "tok", Start: 1, End: 2}}},
		{name: "never resumed", out: "::stop-commands::x/a.yaml:1:1: error\n::error::lost\n", ignored: 1,
			regions: []StopRegion{{Token: "x/a.yaml:1:1: error", Start: 1}}},
		{name: "a command's name is no token", out: "::stop-commands::error\n::error::shown\n", effective: []string{"error map[] shown"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := RunWorkflowCommands(tt.out)
			var got []string
			for _, c := range l.Effective {
				got = append(got, fmt.Sprintf("%s %v %s", c.Name, c.Props, c.Data))
			}
			if fmt.Sprint(got) != fmt.Sprint(tt.effective) {
				t.Errorf("effective = %q, want %q", got, tt.effective)
			}
			if len(l.Ignored) != tt.ignored {
				t.Errorf("%d ignored, want %d", len(l.Ignored), tt.ignored)
			}
			if fmt.Sprint(l.Regions) != fmt.Sprint(tt.regions) {
				t.Errorf("regions = %+v, want %+v", l.Regions, tt.regions)
			}
		})
	}
}
