package command

import "strings"

// MayHold reports whether Parse could find a command in body, without
// rendering it: whether a line of a paragraph starts, after at most three
// spaces, with phasegate's slash word or one close to it (what Parse
// answers with a suggestion), as the line scanner reads the body. When it
// is false, Parse returns no command; when it is true, only Parse says
// (the rendering decides what a reader sees). A body without a candidate
// line costs one pass over its bytes and no allocation; one with a
// candidate, the line scanner's pass (no Markdown is rendered). A server
// can so answer a comment at once and leave the full parse to its worker.
func MayHold(body string) bool {
	if len(body) > MaxBody || strings.IndexByte(body, '/') < 0 {
		return false
	}
	candidate := false
	forEachLine(body, func(_ int, ln string) bool {
		i := commandIndent(ln)
		candidate = i >= 0 && ln[i] == '/' && classify(ln[i:]) == slashOurs
		return !candidate
	})
	if !candidate {
		return false
	}
	res := scan(body, nil)
	return len(res.Commands) > 0 && !res.TooDeep
}
