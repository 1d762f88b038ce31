package command

// seedBodies are the fuzz corpus seeds: Markdown corners, the realistic
// comments and the benchmark's text.
func seedBodies() []string {
	seeds := []string{
		"/resolve D-001 approve",
		"```\n/resolve D-001 approve\n```\n/resolve D-002 capture",
		"> a\n/resolve D-001 approve\nbecause",
		"<!--\n/resolve D-001 approve\n-->",
		"- ```\n  /resolve D-001 approve\n  ```\n/resolve D-002 x",
		"/reslove D-1 x\n/phasegate hlp\n/decision\n/lgtm",
		"a <!-- b\n/resolve D-001 approve\n-->",
		"<div>\n```\n</div>\n/resolve D-001 approve\n```",
		"\t- a\n\t\t/resolve D-001 approve",
		"/resolve\u00a0d-001\u200b approve\r\nok\r\n",
		"<div><!--\n</div>\n\n/resolve D-001 approve\n\n-->",
		"* 1. \n\n  <div>\n/resolve D-001 approve",
		benchBlock,
		// text GitHub does not show
		"See [the plan](https://example.com \"\n/resolve D-001 approve\n\") first.",
		"[plan]: https://example.com \"\n/resolve D-001 approve\n\"",
		"[^1]: a note\n/resolve D-001 approve",
		"Hi <span title=\"\n/resolve D-001 approve\n\">x</span>",
		"<img alt='\n/resolve D-001 approve\n' src=x>",
		"![\n/resolve D-001 approve\n][i]\n\n[i]: /x.png",
		"<div title=\"\n\n/resolve D-001 approve\n\n\">",
		"<details><summary>s</summary>\n\n/resolve D-001 approve\n\n</details>\n\n/resolve D-002 x",
		"~~x\n/resolve D-001 approve~~",
		"`x\n/resolve D-001 approve`",
		"H<sub>2</sub>O\n/resolve D-001 approve",
		// invisible and direction-changing characters, literal and as
		// character references, and the text next to them that is read
		"/resolve D-\u202e100\u202c approve",
		"/resolve D-&#x202E;100&#x202C; approve\n/resolve D-001 approve &#8207; &rlm; &zwj; &#x0000202E; &not; &notit;",
		"/resolve D-001 approve \u2067evil\u2069\n\n/decisions \u200b\n\n/phasegate help\ufeff",
		"/resolve D-001 approve \U000E0049\U000E0067\U000E006E\n/resolve D-002 x\ufe0f",
		"/resolve D-001 approve 👍🏽 ❤️ 1️⃣ 👨\u200d👩\u200d👧 🏳️\u200d🌈 می\u200cخواهم\n/resolve D-002 x a\u200db",
		"/resolve D-001 approve موافق מאושר 承認\n\u202e/resolve D-002 x\n/reslove\u200b D-003 x",
		"/resolve D-001 approve <!-- \u202e --> `&#x202E;` \\&#x202E;",
		"<div>\uE0000\uE001</div>\n\n<details>\n\n/resolve D-001 approve\n\n</details>",
	}
	for _, c := range realisticComments {
		seeds = append(seeds, c.body)
	}
	return seeds
}
