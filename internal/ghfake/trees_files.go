package ghfake

import "sort"

// derivedTree is the tree of a commit that SetTree never named but whose
// files SetFile set (the contents API's files at that ref): GitHub has a
// tree for every commit it has, so the fake builds one from those files
// (regular files only), again whenever their number changed.
func (r *repo) derivedTree(sha string) (string, bool) {
	files, ok := r.files[sha]
	if !ok || len(files) == 0 {
		return "", false
	}
	if r.derived == nil {
		r.derived = map[string]int{}
	}
	if n, seen := r.derived[sha]; seen && n == len(files) {
		if t, ok := r.commitTrees[sha]; ok {
			return t, true
		}
	}
	root := &dirBuild{dirs: map[string]*dirBuild{}, leaves: map[string]treeEntry{}}
	paths := make([]string, 0, len(files))
	for p := range files {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	for _, p := range paths {
		e := leafOf(TreeFile{Path: p, Content: files[p]})
		r.blobs[e.sha] = append([]byte(nil), files[p]...)
		root.insert(p, e)
	}
	t := r.storeTree(root)
	r.commitTrees[sha] = t
	r.derived[sha] = len(files)
	return t, true
}
