// Command openapi-subset cuts from GitHub's published descriptions what
// phasegate's tests hold the fake GitHub to (scripts/openapi-subset.sh runs
// it on the pinned npm packages):
//
//   - from @octokit/openapi's generated/api.github.com.json, the operations
//     listed below with every component they reference, transitively, as a
//     valid OpenAPI 3 document (descriptions and examples dropped, they do
//     not validate anything) → internal/ghfake/testdata/openapi-subset.json;
//   - from @octokit/webhooks-examples' api.github.com/index.json, every
//     example payload of the events `phasegate serve` handles, one JSON
//     document a line → internal/server/testdata/webhooks/<event>.jsonl.
//
// The output is deterministic: keys sorted, two-space indent, numbers as
// they were written, no HTML escaping.
//
// It is tooling, not the product: no phasegate package imports it.
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// operations are the REST operations phasegate calls or the fake serves,
// as "METHOD path" with the description's path template. The comment says
// who calls it.
var operations = []string{
	// ghclient (internal/ghclient: methods.go, activity.go, app.go, dispatch.go, tree.go, checks.go)
	"GET /repos/{owner}/{repo}",                                         // Repository
	"GET /repos/{owner}/{repo}/contents/{path}",                         // FileAt, ListDir
	"GET /repos/{owner}/{repo}/git/blobs/{file_sha}",                    // FileAt (files over 1 MB), Blob, CommitFS
	"GET /repos/{owner}/{repo}/issues",                                  // OpenIssuesWithLabel, FindIssue
	"POST /repos/{owner}/{repo}/issues",                                 // CreateIssue
	"GET /repos/{owner}/{repo}/issues/{issue_number}",                   // Issue
	"GET /repos/{owner}/{repo}/issues/comments",                         // CommentsSince
	"GET /repos/{owner}/{repo}/issues/{issue_number}/comments",          // ListIssueComments
	"POST /repos/{owner}/{repo}/issues/{issue_number}/comments",         // CreateComment
	"GET /repos/{owner}/{repo}/issues/{issue_number}/labels",            // Labels
	"POST /repos/{owner}/{repo}/issues/{issue_number}/labels",           // AddLabels
	"DELETE /repos/{owner}/{repo}/issues/{issue_number}/labels/{name}",  // RemoveLabel
	"GET /repos/{owner}/{repo}/issues/{issue_number}/events",            // LabelEvents
	"GET /repos/{owner}/{repo}/issues/comments/{comment_id}/reactions",  // Reactions
	"POST /repos/{owner}/{repo}/issues/comments/{comment_id}/reactions", // React
	"GET /repos/{owner}/{repo}/collaborators/{username}/permission",     // CollaboratorPermission
	"GET /orgs/{org}/teams/{team_slug}/memberships/{username}",          // TeamMember
	"GET /orgs/{org}/teams/{team_slug}/members",                         // TeamMember (can the token read the team at all?)
	"POST /repos/{owner}/{repo}/statuses/{sha}",                         // SetStatus
	"GET /repos/{owner}/{repo}/commits/{ref}/statuses",                  // Statuses
	"GET /repos/{owner}/{repo}/commits",                                 // CommitsTouching
	"GET /repos/{owner}/{repo}/commits/{ref}",                           // CommitFiles, Commit
	"GET /repos/{owner}/{repo}/commits/{commit_sha}/pulls",              // PullRequestsWithCommit
	"GET /repos/{owner}/{repo}/pulls",                                   // OpenPullRequests
	"GET /repos/{owner}/{repo}/pulls/{pull_number}",                     // PullRequest
	"GET /repos/{owner}/{repo}/pulls/{pull_number}/files",               // ghfake serves it (phasegate compares commits instead)
	"GET /repos/{owner}/{repo}/pulls/{pull_number}/reviews",             // PullRequestReviews
	"GET /repos/{owner}/{repo}/compare/{basehead}",                      // Compare
	"GET /repos/{owner}/{repo}/activity",                                // Pushes
	"POST /repos/{owner}/{repo}/dispatches",                             // Dispatch
	"GET /app",                                                          // App
	"GET /app/installations",                                            // ListInstallations
	"GET /installation/repositories",                                    // InstallationRepos
	"GET /app/hook/deliveries",                                          // HookDeliveries
	"POST /app/hook/deliveries/{delivery_id}/attempts",                  // Redeliver
	"POST /app/installations/{installation_id}/access_tokens",           // ghinstallation (NewInstallationTransport)
	"GET /repos/{owner}/{repo}/git/trees/{tree_sha}",                    // Tree, CommitFS
	"GET /repos/{owner}/{repo}/tarball/{ref}",                           // Archive; its 302 leads to codeload (an exception in ghfaketest)
	"POST /repos/{owner}/{repo}/check-runs",                             // CreateCheckRun
	"PATCH /repos/{owner}/{repo}/check-runs/{check_run_id}",             // UpdateCheckRun, CreateCheckRun (annotations past 50)
	"GET /repos/{owner}/{repo}/check-runs/{check_run_id}",               // UpdateCheckRun and its guard (the annotations a run has)
	"GET /repos/{owner}/{repo}/commits/{ref}/check-runs",                // CheckRunsForRef, CheckRunHistory
	"GET /repos/{owner}/{repo}/check-runs/{check_run_id}/annotations",   // CheckRunAnnotations
	"GET /user",               // CurrentUser (a person's token)
	"GET /user/installations", // UserInstallations
	"GET /user/installations/{installation_id}/repositories",                      // UserInstallationRepos
	"DELETE /applications/{client_id}/token",                                      // OAuth.RevokeToken (sign-out)
	"POST /repos/{owner}/{repo}/actions/runs/{run_id}/deployment_protection_rule", // ReviewDeployment
	"GET /repos/{owner}/{repo}/actions/runs",                                      // WaitingRuns
	"GET /repos/{owner}/{repo}/actions/runs/{run_id}/pending_deployments",         // PendingDeployments
	// served by internal/ghfake for its own tests and for what a test does
	// as a person would; phasegate does not call them
	"GET /rate_limit",
	"GET /repos/{owner}/{repo}/issues/comments/{comment_id}",
	"PATCH /repos/{owner}/{repo}/issues/comments/{comment_id}",
	"DELETE /repos/{owner}/{repo}/issues/comments/{comment_id}",
	"GET /repos/{owner}/{repo}/commits/{ref}/status",
	"GET /repos/{owner}/{repo}/git/ref/{ref}",
}

// events are the webhook events `phasegate serve` handles.
var events = []string{
	"check_run", "check_suite", "installation", "installation_repositories", "issue_comment",
	"merge_group", "pull_request", "pull_request_review", "push", "status",
}

// webhookSchemas are the components kept for the payloads of events
// serve handles that @octokit/webhooks-examples has no example of: the
// fake builds those payloads, and ghfaketest validates them against these.
var webhookSchemas = []string{"webhook-deployment-protection-rule-requested"}

func main() {
	openapi := flag.String("openapi", "", "GitHub's description: @octokit/openapi's generated/api.github.com.json")
	examples := flag.String("webhooks", "", "@octokit/webhooks-examples' api.github.com/index.json")
	out := flag.String("out", ".", "the module root to write the subsets under")
	flag.Parse()
	if *openapi == "" || *examples == "" {
		fmt.Fprintln(os.Stderr, "usage: openapi-subset -openapi api.github.com.json -webhooks index.json [-out DIR]")
		os.Exit(2)
	}
	if err := run(*openapi, *examples, *out); err != nil {
		fmt.Fprintln(os.Stderr, "openapi-subset:", err)
		os.Exit(1)
	}
}

func run(openapiFile, examplesFile, out string) error {
	var full map[string]any
	if err := readJSON(openapiFile, &full); err != nil {
		return err
	}
	sub, err := subset(full, operations)
	if err != nil {
		return fmt.Errorf("%s: %w", openapiFile, err)
	}
	if err := writeJSON(filepath.Join(out, "internal/ghfake/testdata/openapi-subset.json"), sub); err != nil {
		return err
	}
	var hooks []struct {
		Name     string `json:"name"`
		Examples []any  `json:"examples"`
	}
	if err := readJSON(examplesFile, &hooks); err != nil {
		return err
	}
	byName := map[string][]any{}
	for _, h := range hooks {
		byName[h.Name] = h.Examples
	}
	dir := filepath.Join(out, "internal/server/testdata/webhooks")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for _, ev := range events {
		list, ok := byName[ev]
		if !ok || len(list) == 0 {
			return fmt.Errorf("%s: no examples of the %s event", examplesFile, ev)
		}
		var b bytes.Buffer
		for _, ex := range list {
			line, err := encode(ex, "")
			if err != nil {
				return err
			}
			b.Write(line)
		}
		if err := os.WriteFile(filepath.Join(dir, ev+".jsonl"), b.Bytes(), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// subset is the document with only ops and the components they reach.
func subset(full map[string]any, ops []string) (map[string]any, error) {
	paths, _ := full["paths"].(map[string]any)
	outPaths := map[string]any{}
	for _, op := range ops {
		method, path, _ := strings.Cut(op, " ")
		item, _ := paths[path].(map[string]any)
		o, ok := item[strings.ToLower(method)]
		if !ok {
			return nil, fmt.Errorf("no operation %s", op)
		}
		kept, _ := outPaths[path].(map[string]any)
		if kept == nil {
			kept = map[string]any{}
			if p, ok := item["parameters"]; ok {
				kept["parameters"] = p
			}
			outPaths[path] = kept
		}
		kept[strings.ToLower(method)] = o
	}
	components, _ := full["components"].(map[string]any)
	refs := []any{outPaths}
	for _, name := range webhookSchemas {
		refs = append(refs, map[string]any{"$ref": "#/components/schemas/" + name})
	}
	outComponents, err := reachable(refs, components)
	if err != nil {
		return nil, err
	}
	info, _ := full["info"].(map[string]any)
	doc := map[string]any{
		"openapi": full["openapi"],
		"info": map[string]any{
			"title":   info["title"],
			"version": info["version"],
			"license": info["license"],
			"description": "The operations of GitHub's REST API that phasegate calls or internal/ghfake serves, " +
				"with the components they reference, cut from @octokit/openapi " + fmt.Sprint(info["version"]) +
				" (generated/api.github.com.json) by scripts/openapi-subset.sh; descriptions and examples dropped. " +
				"Do not edit: change the script and run it.",
		},
		"servers":    full["servers"],
		"paths":      outPaths,
		"components": outComponents,
	}
	return strip(doc, false).(map[string]any), nil
}

// reachable are the components paths references, transitively, by kind
// (schemas, parameters, responses, headers); examples are left out.
func reachable(paths any, components map[string]any) (map[string]any, error) {
	outComponents := map[string]any{}
	var reach func(v any) error
	reach = func(v any) error {
		switch x := v.(type) {
		case map[string]any:
			if ref, ok := x["$ref"].(string); ok {
				kind, name, err := splitRef(ref)
				if err != nil {
					return err
				}
				if kind == "examples" {
					return nil // dropped below
				}
				have, _ := outComponents[kind].(map[string]any)
				if have == nil {
					have = map[string]any{}
					outComponents[kind] = have
				}
				if _, done := have[name]; done {
					return nil
				}
				target, ok := components[kind].(map[string]any)[name]
				if !ok {
					return fmt.Errorf("dangling %s", ref)
				}
				have[name] = target
				return reach(target)
			}
			for _, k := range sortedKeys(x) {
				if err := reach(x[k]); err != nil {
					return err
				}
			}
		case []any:
			for _, e := range x {
				if err := reach(e); err != nil {
					return err
				}
			}
		}
		return nil
	}
	if err := reach(paths); err != nil {
		return nil, err
	}
	return outComponents, nil
}

func splitRef(ref string) (kind, name string, err error) {
	rest, ok := strings.CutPrefix(ref, "#/components/")
	kind, name, ok2 := strings.Cut(rest, "/")
	if !ok || !ok2 || strings.Contains(name, "/") {
		return "", "", fmt.Errorf("unexpected $ref %q", ref)
	}
	return kind, name, nil
}

// strip drops what validates nothing: descriptions (but a Response
// object's, which OpenAPI requires), examples, tags, and the docs-only
// x-github metadata. Keys of a properties map are property names and are
// kept whatever they are called.
func strip(v any, names bool) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			if !names {
				switch k {
				case "example", "examples", "tags", "x-github", "x-github-breaking-changes":
					continue
				case "description":
					if _, isText := e.(string); isText && !isResponse(x) {
						continue
					}
				}
			}
			out[k] = strip(e, !names && k == "properties")
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = strip(e, false)
		}
		return out
	}
	return v
}

// isResponse: a Response object is the only map phasegate's subset has
// whose description is required; it is the one with content or headers
// besides its description, or nothing else at all.
func isResponse(m map[string]any) bool {
	if _, ok := m["type"]; ok {
		return false
	}
	for k := range m {
		switch k {
		case "description", "content", "headers", "links":
		default:
			return false
		}
	}
	return true
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func readJSON(file string, v any) error {
	b, err := os.ReadFile(file)
	if err != nil {
		return err
	}
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	if err := d.Decode(v); err != nil {
		return fmt.Errorf("%s: %w", file, err)
	}
	return nil
}

func encode(v any, indent string) ([]byte, error) {
	var b bytes.Buffer
	e := json.NewEncoder(&b)
	e.SetEscapeHTML(false)
	e.SetIndent("", indent)
	if err := e.Encode(v); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

func writeJSON(file string, v any) error {
	b, err := encode(v, "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		return err
	}
	return os.WriteFile(file, b, 0o644)
}
