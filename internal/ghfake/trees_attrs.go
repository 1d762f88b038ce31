package ghfake

import (
	"path"
	"regexp"
	"strings"
)

// exportRule is one line of a .gitattributes file of the archived commit,
// as git archive reads it: its export-ignore and export-subst attributes
// (+1 set, -1 unset, 0 unspecified) for the paths its pattern matches.
type exportRule struct {
	dir           string // the directory of the .gitattributes: "" or "a/b/"
	pattern       string
	mustDir       bool // the pattern ended with "/": directories only
	anchored      bool // it has a "/": matched against the path under dir, else the last element
	ignore, subst int8
}

// parseAttributes reads the export rules of the .gitattributes in dir.
func parseAttributes(dir string, data []byte) []exportRule {
	var out []exportRule
	for _, line := range strings.Split(string(data), "\n") {
		fields := strings.Fields(line)
		if len(fields) < 2 || strings.HasPrefix(fields[0], "#") || strings.HasPrefix(fields[0], "!") {
			continue
		}
		r := exportRule{dir: dir, pattern: fields[0]}
		for _, a := range fields[1:] {
			set := int8(1)
			if a[0] == '-' || a[0] == '!' {
				set, a = -1, a[1:]
			}
			switch a {
			case "export-ignore":
				r.ignore = set
			case "export-subst":
				r.subst = set
			}
		}
		if r.ignore == 0 && r.subst == 0 {
			continue
		}
		r.mustDir = strings.HasSuffix(r.pattern, "/")
		r.pattern = strings.TrimSuffix(r.pattern, "/")
		r.anchored = strings.Contains(r.pattern, "/")
		r.pattern = strings.TrimPrefix(r.pattern, "/")
		out = append(out, r)
	}
	return out
}

// matches says whether r applies to p (relative to the root).
func (r exportRule) matches(p string, isDir bool) bool {
	rel, ok := strings.CutPrefix(p, r.dir)
	if !ok || (r.mustDir && !isDir) {
		return false
	}
	if !r.anchored {
		ok, _ := path.Match(r.pattern, path.Base(rel))
		return ok
	}
	return globMatch(strings.Split(r.pattern, "/"), strings.Split(rel, "/"))
}

// globMatch matches path elements against pattern elements, where "**"
// is any number of elements (at least one at the end of the pattern).
func globMatch(pat, elems []string) bool {
	if len(pat) == 0 {
		return len(elems) == 0
	}
	if pat[0] == "**" {
		if len(pat) == 1 {
			return len(elems) > 0
		}
		for i := 0; i <= len(elems); i++ {
			if globMatch(pat[1:], elems[i:]) {
				return true
			}
		}
		return false
	}
	if len(elems) == 0 {
		return false
	}
	ok, _ := path.Match(pat[0], elems[0])
	return ok && globMatch(pat[1:], elems[1:])
}

// exportAttrs says whether git archive leaves p out (export-ignore) and
// whether it substitutes its placeholders (export-subst): the last rule
// that says so wins, deeper .gitattributes files after shallower ones.
func exportAttrs(rules []exportRule, p string, isDir bool) (ignore, subst bool) {
	var ig, su int8
	for _, r := range rules {
		if !r.matches(p, isDir) {
			continue
		}
		if r.ignore != 0 {
			ig = r.ignore
		}
		if r.subst != 0 {
			su = r.subst
		}
	}
	return ig > 0, su > 0
}

var (
	formatPlaceholder = regexp.MustCompile(`\$Format:([^$\n]*)\$`)
	formatDirective   = regexp.MustCompile(`%([acG].|.)`) // %an, %cd, %GG; %H, %s
)

// substitute expands export-subst's $Format:…$ placeholders for commit:
// %H and %h (the commit id, full and short) and %%; other directives
// expand to nothing.
func substitute(data []byte, commit string) []byte {
	return formatPlaceholder.ReplaceAllFunc(data, func(m []byte) []byte {
		return formatDirective.ReplaceAllFunc(m[len("$Format:"):len(m)-1], func(d []byte) []byte {
			switch d[1] {
			case 'H':
				return []byte(commit)
			case 'h':
				return []byte(commit[:min(7, len(commit))])
			case '%':
				return []byte("%")
			}
			return nil
		})
	})
}
