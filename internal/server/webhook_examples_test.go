package server

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
)

// The example payloads of @octokit/webhooks-examples (pinned in
// scripts/openapi-subset.sh, which copies those of the events below into
// testdata/webhooks/, one payload a line; CI re-extracts and compares them)
// go through classify and, signed, through the webhook handler. Each must
// be accepted with the fields the payload holds, ignored with a reason, or
// refused for a reason this table documents — never a panic or a 5xx.

// exampleOutcome is what serve makes of an event's action (action "*":
// any action not listed).
type exampleOutcome struct {
	event, action string
	kind          string // the job's kind when accepted; "" when ignored
	ignored       string // a substring of the reason it is ignored
}

var exampleOutcomes = []exampleOutcome{
	{event: "issue_comment", action: "created", ignored: "no command in the comment"},
	{event: "issue_comment", action: "edited", ignored: "not phasegate's"},
	{event: "issue_comment", action: "deleted", ignored: "not phasegate's"},
	{event: "pull_request", action: "opened", kind: kindCheck},
	{event: "pull_request", action: "synchronize", kind: kindCheck},
	{event: "pull_request", action: "reopened", kind: kindCheck},
	{event: "pull_request", action: "ready_for_review", kind: kindCheck},
	{event: "pull_request", action: "*", ignored: "pull request "},
	// A push is checked on its new head when it moved a branch; the
	// examples also delete branches and push tags (see pushOutcome).
	{event: "push", action: "*", kind: kindCheck},
	{event: "check_suite", action: "requested", kind: kindCheck},
	{event: "check_suite", action: "rerequested", kind: kindCheck},
	{event: "check_suite", action: "*", ignored: "check suite "},
	{event: "check_run", action: "rerequested", kind: kindCheck},
	{event: "check_run", action: "*", ignored: "check run "},
	{event: "pull_request_review", action: "submitted", kind: kindCheck},
	{event: "pull_request_review", action: "edited", kind: kindCheck},
	{event: "pull_request_review", action: "dismissed", kind: kindCheck},
	{event: "pull_request_review", action: "*", ignored: "pull request review "},
	{event: "merge_group", action: "checks_requested", kind: kindCheck},
	{event: "merge_group", action: "*", ignored: "merge group "},
	{event: "status", action: "*", ignored: "is not phasegate's"}, // the examples' context is "default"
	{event: "installation", action: "created", kind: kindInstallRepos},
	{event: "installation", action: "unsuspend", kind: kindInstallRepos},
	{event: "installation", action: "deleted", kind: kindUninstall},
	{event: "installation", action: "suspend", kind: kindUninstall},
	{event: "installation", action: "*", ignored: "installation "},
	{event: "installation_repositories", action: "added", kind: kindInstallRepos},
	{event: "installation_repositories", action: "removed", kind: kindUninstall},
}

func outcomeOf(event, action string) (exampleOutcome, bool) {
	var any exampleOutcome
	found := false
	for _, o := range exampleOutcomes {
		if o.event != event {
			continue
		}
		if o.action == action {
			return o, true
		}
		if o.action == "*" {
			any, found = o, true
		}
	}
	return any, found
}

// example is one payload of the package.
type example struct {
	event string
	index int
	body  []byte
	raw   map[string]any
	// app is the example as an App delivery (asAppDelivery), encoded once
	// by examplesOnce for the tests that read it; nil elsewhere.
	app *example
}

func (e example) name() string {
	return fmt.Sprintf("%s/%d/%s", e.event, e.index, str(e.raw, "action"))
}

func loadExamples(t *testing.T) []example {
	t.Helper()
	out, err := examplesOnce()
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// examplesOnce reads the example payloads once for all the tests (which
// only read them: classify is given a copy of a body).
var examplesOnce = sync.OnceValues(func() ([]example, error) {
	files, err := filepath.Glob("testdata/webhooks/*.jsonl")
	if err != nil || len(files) == 0 {
		return nil, fmt.Errorf("no example payloads under testdata/webhooks (run scripts/openapi-subset.sh): %v", err)
	}
	var out []example
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		event := strings.TrimSuffix(filepath.Base(f), ".jsonl")
		sc := bufio.NewScanner(bytes.NewReader(data))
		sc.Buffer(nil, 4<<20)
		for i := 0; sc.Scan(); i++ {
			var raw map[string]any
			if err := json.Unmarshal(sc.Bytes(), &raw); err != nil {
				return nil, fmt.Errorf("%s line %d: %w", f, i+1, err)
			}
			out = append(out, example{event: event, index: i, body: append([]byte(nil), sc.Bytes()...), raw: raw})
		}
	}
	// Four tests read every example as an App delivery: re-encoding
	// 1.3 MB of payloads in each was a tenth of their CPU.
	for i := range out {
		app := asAppDelivery(out[i])
		out[i].app = &app
	}
	return out, nil
})

// str and num read a path of keys in a decoded payload ("" and 0 when
// absent).
func str(m map[string]any, path ...string) string {
	v, _ := at(m, path...).(string)
	return v
}

func num(m map[string]any, path ...string) int64 {
	v, _ := at(m, path...).(float64)
	return int64(v)
}

func at(m map[string]any, path ...string) any {
	var v any = m
	for _, k := range path {
		o, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = o[k]
	}
	return v
}

// asAppDelivery is the payload as a GitHub App's webhook gets it: with the
// installation (id and node_id) that a repository webhook's payload lacks.
func asAppDelivery(e example) example {
	if e.app != nil {
		return *e.app
	}
	if at(e.raw, "installation") != nil {
		return e
	}
	raw := map[string]any{}
	for k, v := range e.raw {
		raw[k] = v
	}
	raw["installation"] = map[string]any{"id": float64(424242), "node_id": "MDIzOkludGVncmF0aW9uSW5zdGFsbGF0aW9uNDI0MjQy"}
	body, _ := json.Marshal(raw)
	return example{event: e.event, index: e.index, body: body, raw: raw}
}

// withComment is an issue_comment payload whose comment body is body.
func withComment(e example, body string) example {
	var raw map[string]any
	_ = json.Unmarshal(e.body, &raw)
	raw["comment"].(map[string]any)["body"] = body
	b, _ := json.Marshal(raw)
	return example{event: e.event, index: e.index, body: b, raw: raw}
}

// classifySafely is classify, with a panic turned into a test failure.
func classifySafely(t *testing.T, e example, identity string) (j *job, why ignored, err error) {
	t.Helper()
	defer func() {
		if r := recover(); r != nil {
			t.Fatalf("classify panicked on %s: %v", e.name(), r)
		}
	}()
	return classify(e.event, "example-delivery", bytes.Clone(e.body), identity) // classify may write into the body
}

// pushOutcome is a push example's outcome: a deleted branch and a tag are
// ignored, any other push is checked on its new head.
func pushOutcome(e example, o exampleOutcome) exampleOutcome {
	if e.event != "push" {
		return o
	}
	switch {
	case at(e.raw, "deleted") == true:
		return exampleOutcome{event: "push", action: "*", ignored: "push deleted a branch"}
	case !strings.HasPrefix(str(e.raw, "ref"), "refs/heads/"):
		return exampleOutcome{event: "push", action: "*", ignored: "not a branch"}
	}
	return o
}

// checkJob compares the job with what the payload holds.
func checkJob(t *testing.T, e example, j *job) {
	t.Helper()
	if got := j.Installation; got != num(e.raw, "installation", "id") {
		t.Errorf("installation %d, the payload's %d", got, num(e.raw, "installation", "id"))
	}
	if repo := at(e.raw, "repository"); repo != nil {
		if j.Owner != str(e.raw, "repository", "owner", "login") || j.Repo != str(e.raw, "repository", "name") {
			t.Errorf("repository %s/%s, the payload's %s", j.Owner, j.Repo, str(e.raw, "repository", "full_name"))
		}
	}
	switch j.Kind {
	case kindComment, kindTamper:
		if int64(j.Issue) != num(e.raw, "issue", "number") || j.Comment.ID != num(e.raw, "comment", "id") {
			t.Errorf("issue #%d comment %d, the payload's #%d comment %d", j.Issue, j.Comment.ID, num(e.raw, "issue", "number"), num(e.raw, "comment", "id"))
		}
		if j.Comment.Body != str(e.raw, "comment", "body") || j.Comment.Author != str(e.raw, "comment", "user", "login") {
			t.Errorf("comment by %q %q, the payload's by %q", j.Comment.Author, j.Comment.Body, str(e.raw, "comment", "user", "login"))
		}
	case kindCheck:
		var want string
		switch e.event {
		case "pull_request":
			want = str(e.raw, "pull_request", "head", "sha")
			if int64(j.PR) != num(e.raw, "number") {
				t.Errorf("pull request #%d, the payload's #%d", j.PR, num(e.raw, "number"))
			}
		case "pull_request_review":
			want = str(e.raw, "pull_request", "head", "sha")
			if int64(j.PR) != num(e.raw, "pull_request", "number") {
				t.Errorf("pull request #%d, the payload's #%d", j.PR, num(e.raw, "pull_request", "number"))
			}
		case "merge_group":
			want = str(e.raw, "merge_group", "head_sha")
		case "push":
			want = str(e.raw, "after")
		case "check_suite":
			want = str(e.raw, "check_suite", "head_sha")
		case "check_run":
			want = str(e.raw, "check_run", "head_sha")
		}
		if j.SHA != strings.ToLower(want) {
			t.Errorf("sha %s, the payload's head %s", j.SHA, want)
		}
	case kindStatus:
		if j.SHA != str(e.raw, "sha") || j.State != str(e.raw, "state") {
			t.Errorf("status %s at %s, the payload's %s at %s", j.State, j.SHA, str(e.raw, "state"), str(e.raw, "sha"))
		}
	case kindInstallRepos, kindUninstall:
		if j.Account != str(e.raw, "installation", "account", "login") {
			t.Errorf("account %q, the payload's %q", j.Account, str(e.raw, "installation", "account", "login"))
		}
		key := "repositories"
		if e.event == "installation_repositories" {
			key = "repositories_" + str(e.raw, "action")
		}
		var want []string
		list, _ := at(e.raw, key).([]any)
		for _, r := range list {
			want = append(want, str(r.(map[string]any), "full_name"))
		}
		var got []string
		for _, r := range j.Repos {
			got = append(got, r.FullName)
		}
		if !slices.Equal(got, want) {
			t.Errorf("repositories %q, the payload's %s %q", got, key, want)
		}
	}
}

// TestWebhookExamples: every example payload, as it is and as a GitHub
// App gets it, classified as the table says, with the payload's fields.
func TestWebhookExamples(t *testing.T) {
	t.Parallel()
	const identity = "phasegate-test[bot]"
	examples := loadExamples(t)
	events := map[string]int{}
	for _, e := range examples {
		events[e.event]++
	}
	for _, ev := range []string{"issue_comment", "pull_request", "push", "merge_group", "check_suite", "check_run", "pull_request_review", "installation", "installation_repositories", "status"} {
		if events[ev] == 0 {
			t.Errorf("no example of %s under testdata/webhooks", ev)
		}
	}
	for _, e := range examples {
		t.Run(e.name(), func(t *testing.T) {
			want, ok := outcomeOf(e.event, str(e.raw, "action"))
			if !ok {
				t.Fatalf("the table has no row for %s %s", e.event, str(e.raw, "action"))
			}
			want = pushOutcome(e, want)
			// As sent: a repository webhook's payload has no installation
			// and is ignored as such; anything else as below.
			if _, why, err := classifySafely(t, e, identity); err != nil {
				t.Fatalf("as sent: refused: %v", err)
			} else if at(e.raw, "installation") == nil && !strings.Contains(string(why), "no installation") && !strings.Contains(string(why), "not handled") {
				t.Errorf("as sent, without an installation: ignored %q, want no installation", why)
			}
			app := asAppDelivery(e)
			j, why, err := classifySafely(t, app, identity)
			switch {
			case err != nil:
				t.Fatalf("refused: %v", err)
			case want.kind == "" && j != nil:
				t.Fatalf("accepted as %s, the table says ignored (%q)", j.Kind, want.ignored)
			case want.kind == "" && !strings.Contains(string(why), want.ignored):
				t.Fatalf("ignored %q, want %q", why, want.ignored)
			case want.kind != "" && j == nil:
				t.Fatalf("ignored %q, want a %s job", why, want.kind)
			case want.kind != "" && j.Kind != want.kind:
				t.Fatalf("a %s job, want %s", j.Kind, want.kind)
			}
			if j != nil {
				checkJob(t, app, j)
			}
		})
	}
}

type variant struct {
	name     string
	e        example
	identity string
	kind     string
}

// TestWebhookExampleVariants: the examples serve ignores become jobs once
// they carry what phasegate acts on — a command in a comment, an edit of
// phasegate's own comment, phasegate/decisions set by someone else — with
// the payload's fields.
func TestWebhookExampleVariants(t *testing.T) {
	t.Parallel()
	const identity = "phasegate-test[bot]"
	n := 0
	for _, e := range loadExamples(t) {
		var variants []variant
		switch {
		case e.event == "issue_comment" && str(e.raw, "action") == "created":
			variants = append(variants, variant{"a command", withComment(e, "Looks right.\n/resolve D-001 approve"), identity, kindComment})
		case e.event == "issue_comment":
			variants = append(variants, variant{"phasegate's comment", e, str(e.raw, "comment", "user", "login"), kindTamper})
		case e.event == "status":
			var raw map[string]any
			_ = json.Unmarshal(e.body, &raw)
			raw["context"] = "phasegate/decisions"
			b, _ := json.Marshal(raw)
			variants = append(variants, variant{"phasegate/decisions", example{event: e.event, index: e.index, body: b, raw: raw}, identity, kindStatus})
		}
		for _, v := range variants {
			n++
			t.Run(e.name()+"/"+v.name, func(t *testing.T) {
				app := asAppDelivery(v.e)
				j, why, err := classifySafely(t, app, v.identity)
				if err != nil || j == nil || j.Kind != v.kind {
					t.Fatalf("got %+v, %q, %v; want a %s job", j, why, err, v.kind)
				}
				checkJob(t, app, j)
			})
		}
	}
	if n == 0 {
		t.Fatal("no variant was tried")
	}
}

// TestWebhookExamplesSigned: every example, as a GitHub App gets it and
// signed, through serve's webhook handler: 202 for what the table accepts,
// 200 for what it ignores (or throttles), never a 4xx or 5xx.
func TestWebhookExamplesSigned(t *testing.T) {
	t.Parallel()
	byEvent := map[string][]example{}
	for _, e := range loadExamples(t) {
		byEvent[e.event] = append(byEvent[e.event], e)
	}
	for event, list := range byEvent {
		t.Run(event, func(t *testing.T) {
			h := newHarness(t) // not started: accepted jobs stay queued
			for _, e := range list {
				app := asAppDelivery(e)
				want, _ := outcomeOf(e.event, str(e.raw, "action"))
				code, body := h.send(delivery{event: e.event, body: app.body})
				switch {
				case code >= 500 || code >= 400:
					t.Errorf("%s: %d %s", e.name(), code, body)
				case want.kind != "" && code != 202 && !strings.Contains(body, "ignored: "): // throttled install reconciles answer 200
					t.Errorf("%s: %d %s, want 202 (a %s job)", e.name(), code, body, want.kind)
				case want.kind == "" && code != 200:
					t.Errorf("%s: %d %s, want 200 (ignored)", e.name(), code, body)
				}
			}
		})
	}
}
