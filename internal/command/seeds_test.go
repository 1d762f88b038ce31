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
	}
	for _, c := range realisticComments {
		seeds = append(seeds, c.body)
	}
	return seeds
}
