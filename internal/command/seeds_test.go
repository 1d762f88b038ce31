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
	}
	for _, c := range realisticComments {
		seeds = append(seeds, c.body)
	}
	return seeds
}
