package app

import (
	"encoding/json"
	"errors"
	"fmt"
	"sort"

	"github.com/phasegate/phasegate/bench/corpus"
	"github.com/phasegate/phasegate/internal/ghfake"
	"github.com/phasegate/phasegate/internal/testutil/outcometest"
)

// prAuthor opens every pull request.
const prAuthor = "agent-bot"

// baseFiles is the base commit's tree: the repository before the change.
var baseFiles = []ghfake.TreeFile{{Path: "README.md", Content: []byte("# service monorepo\n")}}

// change is one pull request's commit: its tree (the base's files and the
// change's) and the files it adds.
type change struct {
	tree      []ghfake.TreeFile
	added     []ghfake.File
	artifacts int
	bytes     int64
}

// errEnough stops corpus.Walk once a change has its artifacts.
var errEnough = errors.New("enough artifacts")

// corpusChange is a change adding n artifacts of the corpus of seed (with
// their companion files), plus extra files. With noOutcomes the corpus's
// own Phase Outcomes are left out (the walk goes on until n other
// artifacts were added): they name issues feature-NNN that the
// repositories of a burst do not have.
func corpusChange(n int, seed int64, noOutcomes bool, extra map[string]string) (change, error) {
	c := change{tree: append([]ghfake.TreeFile(nil), baseFiles...)}
	add := func(path string, data []byte) {
		c.tree = append(c.tree, ghfake.TreeFile{Path: path, Content: data})
		c.added = append(c.added, ghfake.File{Filename: path, Status: "added"})
		c.bytes += int64(len(data))
	}
	walk := n
	if noOutcomes {
		walk = 2*n + 100
	}
	err := corpus.Walk(walk, seed, func(f corpus.File) error {
		if c.artifacts == n {
			return errEnough
		}
		if noOutcomes && f.Kind == outcomeKind {
			return nil
		}
		add(f.Path, f.Data)
		if f.Kind != "" {
			c.artifacts++
		}
		return nil
	})
	if err != nil && !errors.Is(err, errEnough) {
		return change{}, fmt.Errorf("generating the corpus: %w", err)
	}
	paths := make([]string, 0, len(extra))
	for path := range extra {
		paths = append(paths, path)
	}
	sort.Strings(paths)
	for _, path := range paths {
		add(path, []byte(extra[path]))
		c.artifacts++
	}
	return c, nil
}

const outcomeKind = "outcome.phase-outcome"

// outcomeFor is a Phase Outcome for issue (it carries decision D-001).
func outcomeFor(issue int) (string, string) {
	return fmt.Sprintf("outcomes/feature-%03d-requirements.outcome.yaml", issue), outcometest.SeedFor(issue)
}

// sha is the i-th commit SHA of the benchmark.
func sha(kind byte, i int) string { return fmt.Sprintf("%c%039x", kind, i) }

// addPR stores the change's commit and base in repo and opens a pull
// request from it; it returns the pull request's number.
func addPR(f *ghfake.Server, repo, head, base string, c change) int {
	f.SetTree(Owner, repo, head, c.tree)
	pr := f.AddPullRequest(Owner, repo, ghfake.PullRequest{HeadSHA: head, BaseSHA: base, BaseRef: "main", Author: prAuthor})
	f.SetPullRequestFiles(Owner, repo, pr, c.added)
	// GitHub compares any two commits: the App asks for the merge base of
	// a change it reads from the trees (more than 3,000 files).
	f.SetCompare(Owner, repo, base, head, c.added)
	return pr
}

// prEvent is the pull_request "opened" delivery GitHub sends for it.
func prEvent(installation int64, repoID int, repo string, number int, head, base string) []byte {
	if installation == 0 {
		installation = Installation
	}
	user := func(login string) map[string]any { return map[string]any{"login": login, "type": "User"} }
	r := map[string]any{"id": repoID, "name": repo, "full_name": Owner + "/" + repo, "owner": user(Owner),
		"html_url": "https://github.com/" + Owner + "/" + repo, "default_branch": "main"}
	b, err := json.Marshal(map[string]any{
		"action": "opened", "number": number,
		"installation": map[string]any{"id": installation}, "repository": r, "sender": user(prAuthor),
		"pull_request": map[string]any{"number": number, "state": "open", "user": user(prAuthor),
			"head": map[string]any{"sha": head, "ref": fmt.Sprintf("feature-%d", number), "repo": map[string]any{"full_name": Owner + "/" + repo}},
			"base": map[string]any{"sha": base, "ref": "main"}},
	})
	if err != nil {
		panic(err) // maps of strings and numbers always encode
	}
	return b
}
