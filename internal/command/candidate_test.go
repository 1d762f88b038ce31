package command

import (
	"strings"
	"testing"
)

func TestMayHold(t *testing.T) {
	tests := []struct {
		name string
		body string
		want bool
	}{
		{"empty", "", false},
		{"no slash", "Looks good to me.", false},
		{"a slash mid-line", "see a/resolve and /decisions in the docs", false},
		{"resolve", "/resolve D-001 approve", true},
		{"upper case", "/RESOLVE D-001 approve", true},
		{"decisions", "text\n/decisions", true},
		{"phasegate", "  /phasegate help", true},
		{"a near miss", "/reslove D-001 approve", true},
		{"another bot's", "/label bug\n/assign me", false},
		{"indented as code", "    /resolve D-001 approve", false},
		{"after a lone CR", "text\r/resolve D-001 approve", true},
		{"after a byte order mark", "\uFEFF/decisions", true},
		{"hidden, for Parse to say", "<details>\n\n/resolve D-001 approve\n\n</details>", true},
		{"fenced code", "```\n/resolve D-001 approve\n```", false},
		{"in a block quote", "> /resolve D-001 approve", false},
		{"in an HTML block", "<div>\n/resolve D-001 approve\n</div>", false},
		{"too long", "/resolve D-001 approve\n" + strings.Repeat("x", MaxBody), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := MayHold(tt.body); got != tt.want {
				t.Errorf("MayHold(%.40q) = %v, want %v", tt.body, got, tt.want)
			}
			if len(Parse(tt.body)) > 0 && !MayHold(tt.body) {
				t.Errorf("Parse finds a command in %.40q, MayHold does not", tt.body)
			}
		})
	}
}

func TestMayHoldAllocates(t *testing.T) {
	body := strings.Repeat("Some discussion of the outcome / quoted at length.\n", 400) + "/label bug\n"
	if n := testing.AllocsPerRun(10, func() { MayHold(body) }); n != 0 {
		t.Errorf("MayHold allocates %v times", n)
	}
}
