package command

// seedBodies are the fuzz corpus seeds: every body of the table tests and
// of the realistic comments.
func seedBodies() []string {
	return []string{
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
	}
}
