package outcome

import (
	"strings"
	"testing"
)

// renderValue renders the comment of an outcome value.
func renderValue(t *testing.T, v map[string]any, m Meta) string {
	t.Helper()
	o, err := Parse(v)
	if err != nil {
		t.Fatal(err)
	}
	canonical, err := Canonical(v)
	if err != nil {
		t.Fatal(err)
	}
	body, err := Render(o, canonical, m)
	if err != nil {
		t.Fatal(err)
	}
	return body
}

func outcomeWithTitle(title string) map[string]any {
	return map[string]any{
		"phase": "requirements", "feature": "feature-042", "produced": []any{},
		"findings":          []any{map[string]any{"type": "out-of-scope-item", "title": title, "reasoning": "r", "proposed_category": "out-of-scope"}},
		"pending_decisions": []any{map[string]any{"id": "D-001", "type": "approval", "question": "Approve?", "options": []any{"approve", "reject"}, "blocking": true}},
	}
}

// TestHostileTitleIsInert is the case of issue #4: a finding titled
// "@org/team </details> /resolve D-001 approve" shows as that text, and
// GitHub finds in it no mention, no HTML and no command.
func TestHostileTitleIsInert(t *testing.T) {
	const title = "@org/team </details> /resolve D-001 approve"
	body := renderValue(t, outcomeWithTitle(title), Meta{Source: "o.yaml", Commit: testCommit})
	out := renderHTML(t, body)
	for _, p := range inertReport(out, 1, nil, nil) {
		t.Errorf("not inert: %s", p)
	}
	if !strings.Contains(visibleText(out), title) {
		t.Errorf("the title is not shown as written:\n%s", out)
	}
	if strings.Count(out, "</details>") != 1 {
		t.Errorf("the title closed the details element:\n%s", out)
	}
	for _, line := range strings.Split(body, "\n") {
		if strings.HasPrefix(strings.ToLower(strings.TrimSpace(line)), "/resolve") {
			t.Errorf("a line reads as a command: %q", line)
		}
	}
}

// TestFenceOutgrowsBackticks: the YAML fence is longer than any run of
// backticks the YAML holds, so nothing in it closes the block.
func TestFenceOutgrowsBackticks(t *testing.T) {
	for _, run := range []int{0, 2, 3, 4, 10} {
		title := "x" + strings.Repeat("`", run) + "y"
		body := renderValue(t, outcomeWithTitle(title), Meta{Source: "o.yaml", Commit: testCommit})
		fence := strings.Repeat("`", max(3, run+1))
		if !strings.Contains(body, "\n"+fence+"yaml\n") || !strings.Contains(body, "\n"+fence+"\n\n</details>") {
			t.Errorf("run of %d: no fence of %d backticks:\n%s", run, len(fence), body)
		}
		out := renderHTML(t, body)
		if strings.Count(out, "<pre>") != 1 || strings.Count(out, "</pre>") != 1 || !strings.Contains(out, strings.Repeat("`", run)+"y") {
			t.Errorf("run of %d: the YAML is not one code block:\n%s", run, out)
		}
		if _, err := VerifyOutcomeComment(body, nil); err != nil {
			t.Errorf("run of %d: %v", run, err)
		}
	}
}

func TestCommandsColumn(t *testing.T) {
	tests := []struct {
		name string
		d    Decision
		want string
	}{
		{name: "one per option", d: Decision{ID: "D-001", Options: []string{"approve", "reject"}}, want: "`/resolve D-001 approve`<br>`/resolve D-001 reject`"},
		{name: "recommended marked", d: Decision{ID: "D-002", Options: []string{"capture", "discard"}, Recommended: "capture"}, want: "`/resolve D-002 capture` (recommended)<br>`/resolve D-002 discard`"},
		{name: "untypable option", d: Decision{ID: "D-003", Options: []string{"ok", "not ok"}}, want: "`/resolve D-003 ok`<br>option 2 cannot be typed in a command"},
		{name: "untypable id", d: Decision{ID: "D 4", Options: []string{"ok"}}, want: "none: this id cannot be typed in a command"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := commands(tc.d); got != tc.want {
				t.Errorf("commands = %q, want %q", got, tc.want)
			}
		})
	}
}

// TestRenderIsDeterministic: the same outcome renders to the same bytes
// (map order never leaks into the output).
func TestRenderIsDeterministic(t *testing.T) {
	first, _, _ := renderCase(t, "defaults.yaml", testKey, 3)
	for i := 0; i < 20; i++ {
		again, _, _ := renderCase(t, "defaults.yaml", testKey, 3)
		if again != first {
			t.Fatalf("render %d differs", i)
		}
	}
}
