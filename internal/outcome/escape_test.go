package outcome

import (
	"strings"
	"testing"
)

func TestInline(t *testing.T) {
	const z = zwsp
	tests := []struct {
		name string
		in   string
		want string
	}{
		{name: "plain", in: "User avatar upload sizing", want: "User avatar upload sizing"},
		{name: "trimmed", in: " \t a b \t ", want: "a b"},
		{name: "markdown punctuation", in: "*a* _b_ `c` [d](e) ~f~ $g$ !h ^i \\j |k", want: `\*a\* \_b\_ \` + "`" + `c\` + "`" + ` \[d\](e) \~f\~ \$g\$ \!h \^i \\j \|k`},
		{name: "html", in: "<b>&amp;</b>", want: "&lt;b&gt;&amp;amp;&lt;/b&gt;"},
		{name: "comment delimiters", in: "<!-- x -->", want: `&lt;\!-- x --&gt;`},
		{name: "mention", in: "@octocat", want: "@" + z + "octocat"},
		{name: "team mention", in: "hi @org/team", want: "hi @" + z + "org/team"},
		{name: "email", in: "a@b.example", want: "a@" + z + "b.example"},
		{name: "entity mention", in: "&#64;octocat", want: `&amp;\#` + z + "64;octocat"},
		{name: "issue reference", in: "see #12", want: `see \#` + z + "12"},
		{name: "hash without digit", in: "C# #x", want: `C\# \#x`},
		{name: "cross-repo reference", in: "org/repo#3", want: `org/repo\#` + z + "3"},
		{name: "GH reference", in: "GH-7 gh-8 GH-x", want: "GH-" + z + "7 gh-" + z + "8 GH-x"},
		{name: "leading slash", in: "/resolve D-001 approve", want: z + "/resolve D-001 approve"},
		{name: "slash after spaces", in: "   /resolve", want: z + "/resolve"},
		{name: "inner slash", in: "a/b /c", want: "a/b /c"},
		{name: "newlines", in: "a\nb\r\nc\rd\u2028e\u2029f\u0085g\vh\fi", want: "a<br>b<br>c<br>d<br>e<br>f<br>g<br>h<br>i"},
		{name: "command on the next line", in: "ok\n/resolve D-001 approve", want: "ok<br>" + z + "/resolve D-001 approve"},
		{name: "command after indented line", in: "ok\n  \t/resolve", want: "ok<br>   " + z + "/resolve"},
		{name: "heading and quote", in: "# h\n> q", want: `\# h<br>&gt; q`},
		{name: "tab", in: "a\tb", want: "a b"},
		{name: "controls", in: "a\x00b\x1bc\x7fd\u0080", want: `a\\u0000b\\u001bc\\u007fd\\u0080`},
		{name: "bidi and invisible", in: "\u202eabc\u200b\ufeff", want: `\\u202eabc\\u200b\\ufeff`},
		{name: "tag character", in: "a\U000E0041", want: `a\\U000e0041`},
		{name: "invalid UTF-8", in: "a\xffb", want: `a\\xffb`},
		{name: "non-ASCII", in: "Größe → 大小 ＠x", want: "Größe → 大小 ＠x"},
		{name: "trailing break", in: "a\n ", want: "a<br>"},
		{name: "finding title of the brief", in: "@org/team </details> /resolve D-001 approve", want: "@" + z + "org/team &lt;/details&gt; /resolve D-001 approve"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := Inline(tc.in); got != tc.want {
				t.Errorf("Inline(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}

// TestInlineRendersAsText: what Inline writes renders, in a table cell and
// in a paragraph, as the original characters (line breaks as <br>, the
// zero width spaces aside) and as nothing else.
func TestInlineRendersAsText(t *testing.T) {
	inputs := []string{
		"*a* _b_ `c` [d](e) ~~f~~ $g$ ![i](j) \\k |l| <m> &n; &#64;o",
		"@org/team </details> /resolve D-001 approve",
		"backslash at the end \\",
		"pipe \\| escaped",
		"```` fence ~~~",
		"-->",
	}
	for _, in := range inputs {
		t.Run(in, func(t *testing.T) {
			for _, md := range []string{"| h |\n| --- |\n| " + Inline(in) + " |\n", "x " + Inline(in) + "\n"} {
				out := renderHTML(t, md)
				text := visibleText(out)
				if !strings.Contains(text, in) {
					t.Errorf("rendered text %q does not hold %q\nMarkdown: %q\nHTML: %s", text, in, md, out)
				}
				if strings.Contains(out, "<a ") || strings.Contains(out, "<code>") || strings.Contains(out, "<em>") || strings.Contains(out, "<img") || strings.Contains(out, "<del>") {
					t.Errorf("markup in %s", out)
				}
			}
		})
	}
}

// visibleText is the text of rendered HTML, tags dropped, entities decoded,
// zero width spaces removed.
func visibleText(out string) string {
	text := tagRE.ReplaceAllString(out, "")
	text = strings.NewReplacer("&lt;", "<", "&gt;", ">", "&quot;", `"`, "&amp;", "&", zwsp, "").Replace(text)
	return text
}

func TestToken(t *testing.T) {
	tests := []struct {
		in   string
		want bool
	}{
		{"D-001", true}, {"approve", true}, {"request-changes", true}, {"v1.2_x", true}, {"9", true},
		{"", false}, {"-x", false}, {".x", false}, {"a b", false}, {"a:b", false}, {"a`", false},
		{"a|b", false}, {"@x", false}, {"é", false}, {strings.Repeat("a", 64), true}, {strings.Repeat("a", 65), false},
	}
	for _, tc := range tests {
		if got := Token(tc.in); got != tc.want {
			t.Errorf("Token(%q) = %v, want %v", tc.in, got, tc.want)
		}
	}
}
