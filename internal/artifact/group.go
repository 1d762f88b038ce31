package artifact

import "strings"

// GroupKey is the unit an artifact is checked with for cross-file rules:
//
//   - PACE: the .pace directory (plan, backlog and every day, so a day can be
//     compared with the plan and "the latest day" is known);
//   - JG: the issue folder .pipeline/<issue> (or .pipeline/completed/<issue>);
//     lessons.yaml alone;
//   - SCC: the task folder artifacts/<task_id>;
//   - Autopilot: the project directory holding .autopilot and .planning;
//   - a Phase Outcome, and anything classified by content or config glob
//     outside those folders: the file alone.
//
// The key is a path prefix ending in the marker directory (or the file
// itself), so keys sort in discovery order.
func GroupKey(rel string, k *Kind) string {
	if k == nil {
		return rel
	}
	segs := strings.Split(rel, "/")
	dirs := segs[:len(segs)-1]
	join := func(n int) string { return strings.Join(segs[:n], "/") }
	// under is the directory holding segs[:n] joined with name.
	under := func(n int, name string) string {
		if n == 0 {
			return name
		}
		return join(n) + "/" + name
	}
	switch k.Family {
	case "pace":
		if i := lastIndex(dirs, ".pace"); i >= 0 {
			return join(i + 1)
		}
		if k.ID == "pace.plan" && len(dirs) > 0 && dirs[len(dirs)-1] == "pace" {
			// pace/plan.yaml (the code's location) belongs with a sibling .pace.
			return under(len(dirs)-1, ".pace")
		}
	case "jg":
		if i := lastIndex(dirs, ".pipeline"); i >= 0 && k.ID != "jg.lessons" {
			if i+2 < len(segs) && segs[i+1] == "completed" && i+3 < len(segs) {
				return join(i + 3)
			}
			if i+2 < len(segs) {
				return join(i + 2)
			}
		}
	case "scc":
		if i := lastIndex(dirs, "artifacts"); i >= 0 && i+2 < len(segs) {
			return join(i + 2)
		}
	case "autopilot":
		if i := lastIndex(dirs, ".autopilot"); i >= 0 {
			return under(i, ".autopilot")
		}
		if i := lastIndex(dirs, ".planning"); i >= 0 {
			return under(i, ".autopilot")
		}
	}
	return rel
}

// GroupScope is the directory (with a trailing '/', or "" for the whole
// tree) outside which no file of the group key's unit lies. A depth-first
// walk in lexical order that has left the scope will not see the unit again,
// so the unit can be checked and dropped then: memory stays flat in the
// number of files. A PACE or Autopilot unit's scope is the project directory
// (pace/plan.yaml and .planning/ are siblings of .pace and .autopilot); a JG
// or SCC unit's is its folder; a single-file unit's is the file itself.
func GroupScope(key string, k *Kind) string {
	if k == nil {
		return key
	}
	switch {
	case k.Family == "pace" && strings.HasSuffix(key, ".pace"),
		k.Family == "autopilot" && strings.HasSuffix(key, ".autopilot"):
		dir := key[:strings.LastIndex(key, ".")]
		return dir // "" or "<project>/"
	case k.Family == "jg" || k.Family == "scc":
		if key != "" {
			return key + "/"
		}
	}
	return key
}
