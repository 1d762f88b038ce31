package server

import (
	"bytes"
	"container/list"
	"errors"
	"fmt"
	json "github.com/go-json-experiment/json/v1"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/phasegate/phasegate/internal/command"
	"github.com/phasegate/phasegate/internal/decide"
	"github.com/phasegate/phasegate/internal/ghclient"
)

// Kinds of work.
const (
	kindComment      = "comment"       // issue_comment created: commands
	kindTamper       = "tamper"        // issue_comment edited or deleted on a phasegate comment
	kindPullRequest  = "pull_request"  // pull_request opened, synchronize, reopened
	kindInstallRepos = "install_repos" // installation created, installation_repositories added
	kindUninstall    = "uninstall"     // installation deleted or suspended, repositories removed
	kindStatus       = "status"        // phasegate/decisions set by someone else
	kindMergeGroup   = "merge_group"   // merge_group checks_requested: phasegate/decisions on its head
	kindCheck        = "check"         // a commit to check: pull_request, push, merge_group, check_suite, check_run, pull_request_review
	kindDeploy       = "deployment"    // deployment_protection_rule requested, or the waiting requests of an issue to answer again
)

// job is one accepted delivery, queued for a worker. The durable queue
// carries it as JSON (encodeJob): every field but the in-memory queue's
// element.
type job struct {
	Kind         string         `json:"kind"`
	Delivery     string         `json:"delivery"`
	Event        string         `json:"event"`
	Action       string         `json:"action,omitempty"`
	Installation int64          `json:"installation"`
	Account      string         `json:"account,omitempty"` // installation events
	Owner        string         `json:"owner,omitempty"`
	Repo         string         `json:"repo,omitempty"`
	Issue        int            `json:"issue,omitempty"`
	Comment      decide.Comment `json:"comment"`
	Labels       []string       `json:"labels"` // the issue's labels in the payload (nil: none listed, apart from [])
	Sender       string         `json:"sender,omitempty"`
	SenderType   string         `json:"sender_type,omitempty"`
	PR           int            `json:"pr,omitempty"`
	SHA          string         `json:"sha,omitempty"`
	State        string         `json:"state,omitempty"`
	Description  string         `json:"description,omitempty"`
	Repos        []repoRef      `json:"repos,omitempty"`
	Base         string         `json:"base,omitempty"`        // check: the commit the change is measured from ("": none)
	BaseRef      string         `json:"base_ref,omitempty"`    // check: the branch of base (the pull request's base branch, the pushed branch)
	Ref          string         `json:"ref,omitempty"`         // check: the branch pushed (the pull request's head branch)
	Fork         string         `json:"fork,omitempty"`        // check: the head repository of a pull request from a fork
	RepoURL      string         `json:"repo_url,omitempty"`    // check: the repository's html_url
	Pusher       string         `json:"pusher,omitempty"`      // check: push's pusher, pull request's author
	CommentURL   string         `json:"comment_url,omitempty"` // issue_comment: the comment's html_url
	Environment  string         `json:"environment,omitempty"` // deployment: the environment deployed to
	RunID        int64          `json:"run_id,omitempty"`      // deployment: the workflow run waiting
	// ReplayKey names what the signed body is about (issue_comment: the
	// comment, the action, an edit's updated_at), recorded in the Seen
	// store next to the delivery ID: the X-GitHub-Delivery header is not
	// signed, so a captured body re-sent with a fresh ID is still a
	// replay. "" when the kind has none.
	ReplayKey string    `json:"replay_key,omitempty"`
	Enqueued  time.Time `json:"enqueued"`

	elem *list.Element
}

func (j *job) repository() string {
	if j.Owner == "" {
		return ""
	}
	return j.Owner + "/" + j.Repo
}

type user struct {
	Login string `json:"login"`
	Type  string `json:"type"`
}

type repoRef struct {
	ID       int64  `json:"id"`
	Name     string `json:"name"`
	FullName string `json:"full_name"`
}

// validName reports whether s can be a GitHub owner or repository name
// (letters, digits, '-', '_', '.'; not "." or ".."). The names go into API
// paths, so a payload naming anything else is malformed.
func validName(s string) bool {
	return s != "." && s != ".." && len(s) <= 100 &&
		s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.") == ""
}

// clip makes payload text safe to echo in an answer or a log: printable
// ASCII only (anything else becomes '?'), at most 64 bytes.
func clip(s string) string {
	const max = 64
	var b strings.Builder
	for _, r := range s {
		if b.Len() >= max {
			b.WriteString("…")
			break
		}
		if r < 0x20 || r > 0x7e {
			r = '?'
		}
		b.WriteRune(r)
	}
	return b.String()
}

// ownerName splits full_name.
func (r repoRef) ownerName() (string, string, bool) {
	o, n, ok := strings.Cut(r.FullName, "/")
	return o, n, ok && validName(o) && validName(n)
}

// payload is the part of a webhook payload phasegate reads.
type payload struct {
	Action       string            `json:"action"`
	Installation *installationJSON `json:"installation"`
	Repository   *repositoryJSON   `json:"repository"`
	Sender       user              `json:"sender"`
	Issue        *issueJSON        `json:"issue"`
	Comment      *commentJSON      `json:"comment"`
	PullRequest  *struct {
		Number int    `json:"number"`
		State  string `json:"state"`
		User   user   `json:"user"`
		Head   struct {
			SHA  string `json:"sha"`
			Ref  string `json:"ref"`
			Repo *struct {
				FullName string `json:"full_name"`
			} `json:"repo"`
		} `json:"head"`
		Base struct {
			SHA string `json:"sha"`
			Ref string `json:"ref"`
		} `json:"base"`
	} `json:"pull_request"`
	Review     *struct{} `json:"review"` // pull_request_review: only its presence
	MergeGroup *struct {
		HeadSHA string `json:"head_sha"`
		BaseSHA string `json:"base_sha"`
		HeadRef string `json:"head_ref"`
		BaseRef string `json:"base_ref"`
	} `json:"merge_group"`
	// push
	Ref     string `json:"ref"`
	Before  string `json:"before"`
	After   string `json:"after"`
	Deleted bool   `json:"deleted"`
	Pusher  *struct {
		Name string `json:"name"`
	} `json:"pusher"`
	// check_suite, check_run
	CheckSuite *checkSuite `json:"check_suite"`
	CheckRun   *struct {
		HeadSHA    string      `json:"head_sha"`
		CheckSuite *checkSuite `json:"check_suite"`
	} `json:"check_run"`
	Number int `json:"number"`
	// status
	SHA         string  `json:"sha"`
	Context     string  `json:"context"`
	State       string  `json:"state"`
	Description *string `json:"description"`
	// deployment_protection_rule
	Environment           string `json:"environment"`
	DeploymentCallbackURL string `json:"deployment_callback_url"`
	Deployment            *struct {
		ID int64 `json:"id"`
	} `json:"deployment"`
	// installation, installation_repositories
	Repositories        []repoRef `json:"repositories"`
	RepositoriesAdded   []repoRef `json:"repositories_added"`
	RepositoriesRemoved []repoRef `json:"repositories_removed"`
}

type installationJSON struct {
	ID      int64 `json:"id"`
	Account *user `json:"account"`
}

type repositoryJSON struct {
	Name     string `json:"name"`
	FullName string `json:"full_name"`
	Owner    user   `json:"owner"`
	HTMLURL  string `json:"html_url"`
}

type issueJSON struct {
	Number int         `json:"number"`
	Labels []labelJSON `json:"labels"`
}

type labelJSON struct {
	Name string `json:"name"`
}

type commentJSON struct {
	ID        int64  `json:"id"`
	Body      string `json:"body"`
	User      user   `json:"user"`
	HTMLURL   string `json:"html_url"`
	UpdatedAt string `json:"updated_at"`
}

// checkSuite is the part of a check suite phasegate reads.
type checkSuite struct {
	HeadSHA    string `json:"head_sha"`
	HeadBranch string `json:"head_branch"`
	Before     string `json:"before"`
}

// errMalformed marks a payload that lacks what its event must carry (400).
var errMalformed = errors.New("malformed payload")

// decodePayload decodes a verified body; an error is a malformed payload.
// The decoder is go-json-experiment/json's v1 package: encoding/json's
// API and semantics (the whole body validated, nesting at most 10,000
// deep) on the Go authors' engine for encoding/json/v2, 2.4 times as fast
// on a 20 KB comment, where encoding/json was half of serve's CPU on the
// acknowledgement path (bench/serve/README.md). FuzzDecodePayload holds it
// to encoding/json on every body.
func decodePayload(body []byte) (*payload, error) {
	p := new(payload)
	if err := json.Unmarshal(body, p); err != nil {
		return nil, fmt.Errorf("%w: %v", errMalformed, err)
	}
	return p, nil
}

func jsonObject(body []byte) bool {
	b := bytes.TrimLeft(body, " \t\r\n")
	return len(b) > 0 && b[0] == '{' && json.Valid(b)
}

// matches checks that the payload has the shape of the event its
// X-GitHub-Event header claims. The header is not covered by the
// signature: without this, any captured signed body (a comment) could be
// re-sent as an installation event. Each event must carry what GitHub
// always sends with it, and none of what marks another event:
//
//   - installation, installation_repositories: the full installation object
//     (with its account) and no repository, comment, issue or pull request
//     (every repository event carries a repository); installation_repositories
//     has repositories_added or repositories_removed, installation neither.
//   - issue_comment: a repository, an issue and a comment, no top-level
//     pull request or review.
//   - pull_request: a repository and a pull request, no comment, issue or
//     review.
//   - status: a repository, a sha, a context and a state, no comment, issue
//     or pull request.
//   - merge_group: a repository and a merge group with its head_sha, no
//     comment, issue or pull request.
//   - push: a repository, a ref and an after sha, no comment, issue or pull
//     request.
//   - check_suite, check_run: a repository and the suite (run) with its
//     head_sha, no comment, issue or pull request at the top.
//   - pull_request_review: a repository, a pull request and a review, no
//     comment or issue.
//   - deployment_protection_rule: a repository, a sha, an environment and a
//     deployment_callback_url, no comment, issue or pull request at the top.
func (p *payload) matches(event string) error {
	var missing, foreign []string
	need := func(name string, present bool) {
		if !present {
			missing = append(missing, name)
		}
	}
	refuse := func(name string, present bool) {
		if present {
			foreign = append(foreign, name)
		}
	}
	switch event {
	case "installation", "installation_repositories":
		need("installation.account", p.Installation.Account != nil && p.Installation.Account.Login != "")
		refuse("repository", p.Repository != nil)
		refuse("comment", p.Comment != nil)
		refuse("issue", p.Issue != nil)
		refuse("pull_request", p.PullRequest != nil)
		added, removed := p.RepositoriesAdded != nil, p.RepositoriesRemoved != nil
		if event == "installation" {
			refuse("repositories_added", added)
			refuse("repositories_removed", removed)
		} else {
			need("repositories_added or repositories_removed", added || removed)
			refuse("repositories", p.Repositories != nil)
		}
	case "issue_comment":
		need("repository", p.Repository != nil)
		need("issue", p.Issue != nil)
		need("comment", p.Comment != nil)
		refuse("pull_request", p.PullRequest != nil)
		refuse("review", p.Review != nil)
	case "pull_request":
		need("repository", p.Repository != nil)
		need("pull_request", p.PullRequest != nil)
		refuse("comment", p.Comment != nil)
		refuse("issue", p.Issue != nil)
		refuse("review", p.Review != nil)
	case "pull_request_review":
		need("repository", p.Repository != nil)
		need("pull_request", p.PullRequest != nil)
		need("review", p.Review != nil)
		refuse("comment", p.Comment != nil)
		refuse("issue", p.Issue != nil)
	case "deployment_protection_rule":
		need("repository", p.Repository != nil)
		need("sha", p.SHA != "")
		need("environment", p.Environment != "")
		need("deployment_callback_url", p.DeploymentCallbackURL != "")
		refuse("comment", p.Comment != nil)
		refuse("issue", p.Issue != nil)
		refuse("pull_request", p.PullRequest != nil)
	case "status", "merge_group", "push", "check_suite", "check_run":
		need("repository", p.Repository != nil)
		p.needCommit(event, need)
		refuse("comment", p.Comment != nil)
		refuse("issue", p.Issue != nil)
		refuse("pull_request", p.PullRequest != nil)
	}
	switch {
	case len(foreign) > 0:
		return fmt.Errorf("%w: the body is not a%s %s event's: it has %s", errMalformed, article(event), event, strings.Join(foreign, ", "))
	case len(missing) > 0:
		return fmt.Errorf("%w: the body is not a%s %s event's: it has no %s", errMalformed, article(event), event, strings.Join(missing, ", "))
	}
	return nil
}

func article(word string) string {
	if strings.ContainsRune("aeiou", rune(word[0])) {
		return "n"
	}
	return ""
}

// ignored is the reason a verified delivery is not acted on (200).
type ignored string

// classify maps a verified delivery to a job, or to the reason it is
// ignored. identity is the App's login when known ("" before it is): with
// it, phasegate's own comments and statuses are ignored here; without it,
// the worker checks.
func classify(event, delivery string, body []byte, identity string) (*job, ignored, error) {
	switch {
	case event == "ping":
		return nil, "ping", nil
	case !handledEvents[event]:
		if !jsonObject(body) {
			return nil, "", fmt.Errorf("%w: not a JSON object", errMalformed)
		}
		return nil, ignored("event " + clip(event) + " is not handled"), nil
	}
	p, err := decodePayload(body)
	if err != nil {
		return nil, "", err
	}
	if p.Installation == nil || p.Installation.ID <= 0 {
		return nil, "no installation: phasegate serve handles GitHub App deliveries", nil
	}
	if err := p.matches(event); err != nil {
		return nil, "", err
	}
	j := newJob(event, delivery, p)
	if !strings.HasPrefix(event, "installation") {
		if err := j.needRepo(); err != nil {
			return nil, "", err
		}
	}
	var why ignored
	switch event {
	case "issue_comment":
		why, err = j.fromComment(p, identity)
	case "pull_request":
		why, err = j.fromPullRequest(p, body)
	case "status":
		why, err = j.fromStatus(p, identity)
	case "merge_group":
		why, err = j.fromMergeGroup(p)
	case "push":
		why, err = j.fromPush(p)
	case "check_suite", "check_run":
		why, err = j.fromCheckSuite(p)
	case "pull_request_review":
		why, err = j.fromReview(p)
	case "deployment_protection_rule":
		why, err = j.fromDeployment(p)
	case "installation":
		why = j.fromInstallation(p)
	case "installation_repositories":
		why = j.fromInstallationRepos(p)
	}
	if err != nil || why != "" {
		return nil, why, err
	}
	return j, "", nil
}

// newJob is the job of a delivery before its event is looked at: the
// installation, its account, the sender and the repository, named by its
// owner and name or else by its full name.
func newJob(event, delivery string, p *payload) *job {
	j := &job{Event: event, Delivery: delivery, Action: p.Action, Installation: p.Installation.ID,
		Sender: p.Sender.Login, SenderType: p.Sender.Type}
	if p.Installation.Account != nil {
		j.Account = p.Installation.Account.Login
	}
	if p.Repository != nil {
		j.Owner, j.Repo = p.Repository.Owner.Login, p.Repository.Name
		if j.Owner == "" || j.Repo == "" {
			if o, n, ok := (repoRef{FullName: p.Repository.FullName}).ownerName(); ok {
				j.Owner, j.Repo = o, n
			}
		}
	}
	return j
}

// needRepo checks that the delivery names a repository, and one whose
// owner and name GitHub would accept.
func (j *job) needRepo() error {
	if j.Owner == "" || j.Repo == "" {
		return fmt.Errorf("%w: %s without a repository", errMalformed, j.Event)
	}
	if !validName(j.Owner) || !validName(j.Repo) {
		return fmt.Errorf("%w: %s names a repository that GitHub would not (%q)", errMalformed, j.Event, clip(j.Owner+"/"+j.Repo))
	}
	return nil
}

// isSelf reports whether login is phasegate's identity (never when the
// identity is not known yet).
func isSelf(identity, login string) bool {
	return identity != "" && strings.EqualFold(login, identity)
}

// fromComment fills an issue_comment job: a created comment with a command
// (not phasegate's own), or an edit or deletion of phasegate's comment,
// checked for tampering.
func (j *job) fromComment(p *payload, identity string) (ignored, error) {
	if p.Issue == nil || p.Issue.Number <= 0 || p.Comment == nil || p.Comment.ID <= 0 {
		return "", fmt.Errorf("%w: issue_comment without an issue or a comment", errMalformed)
	}
	j.Issue = p.Issue.Number
	if p.Issue.Labels != nil {
		j.Labels = []string{}
		for _, l := range p.Issue.Labels {
			j.Labels = append(j.Labels, l.Name)
		}
	}
	j.Comment = decide.Comment{ID: p.Comment.ID, Author: p.Comment.User.Login, Bot: p.Comment.User.Type == "Bot", Body: p.Comment.Body}
	j.CommentURL = p.Comment.HTMLURL
	switch p.Action {
	case "created":
		if isSelf(identity, j.Comment.Author) {
			return "phasegate's own comment", nil
		}
		// A cheap test routes it; the worker parses (decide.HandleComment
		// renders the Markdown to keep only what a reader sees), off the
		// acknowledgement path.
		if !command.MayHold(j.Comment.Body) {
			return "no command in the comment", nil
		}
		j.Kind = kindComment
	case "edited", "deleted":
		// Only phasegate's own comments matter; without the identity
		// yet, any bot's comment is checked by the worker.
		if identity != "" && !isSelf(identity, j.Comment.Author) || identity == "" && !j.Comment.Bot {
			return ignored("comment " + clip(p.Action) + ": not phasegate's"), nil
		}
		j.Kind = kindTamper
	default:
		return ignored("comment " + clip(p.Action)), nil
	}
	j.ReplayKey = commentReplayKey(j.repository(), j.Comment.ID, p.Action, p.Comment.UpdatedAt)
	return "", nil
}

// commentReplayKey names one action on one comment: its repository
// (GitHub's names are case-insensitive), its ID, the action, and for an
// edit the comment's updated_at (each edit is news). The spaces keep it
// apart from every delivery ID (validDelivery refuses them), so a delivery
// ID chosen by whoever replays a body cannot take the key of a comment.
func commentReplayKey(repository string, id int64, action, updatedAt string) string {
	k := "comment " + strings.ToLower(repository) + " " + strconv.FormatInt(id, 10) + " " + action
	if action == "edited" {
		k += " " + updatedAt
	}
	return k
}

// fromPullRequest fills a pull_request job: a pull request opened,
// synchronized or reopened, or its base changed (edited with changes.base:
// the same head is now compared with another base, so its checks stand for
// an input it no longer has), and its head.
func (j *job) fromPullRequest(p *payload, body []byte) (ignored, error) {
	switch p.Action {
	case "opened", "synchronize", "reopened", "ready_for_review":
	case "edited":
		if !baseChanged(body) {
			return "pull request edited: not its base", nil
		}
	default:
		return ignored("pull request " + clip(p.Action)), nil
	}
	j.PR = p.Number
	if p.PullRequest != nil {
		if j.PR <= 0 {
			j.PR = p.PullRequest.Number
		}
		j.SHA = p.PullRequest.Head.SHA
	}
	if j.PR <= 0 {
		return "", fmt.Errorf("%w: pull_request without a number", errMalformed)
	}
	if j.SHA != "" && !hexSHA(j.SHA) {
		return "", fmt.Errorf("%w: pull_request.head.sha is not a commit sha (%q)", errMalformed, clip(j.SHA))
	}
	j.SHA = strings.ToLower(j.SHA)
	j.Kind = kindCheck
	j.checkFromPull(p)
	return "", nil
}

// baseChanged reports whether a pull_request edited body has
// changes.base.
func baseChanged(body []byte) bool {
	var ed struct {
		Changes struct {
			Base json.RawMessage `json:"base"`
		} `json:"changes"`
	}
	return json.Unmarshal(body, &ed) == nil && len(ed.Changes.Base) > 0 && string(ed.Changes.Base) != "null"
}

// fromStatus fills a status job: a phasegate/decisions status that
// phasegate did not set itself.
func (j *job) fromStatus(p *payload, identity string) (ignored, error) {
	if p.Context != decide.ContextDecisions {
		return ignored("status " + clip(p.Context) + " is not phasegate's"), nil
	}
	if isSelf(identity, p.Sender.Login) {
		return "phasegate's own status", nil
	}
	if p.SHA == "" {
		return "", fmt.Errorf("%w: status without a sha", errMalformed)
	}
	j.SHA, j.State = p.SHA, p.State
	if p.Description != nil {
		j.Description = *p.Description
	}
	j.Kind = kindStatus
	return "", nil
}

// fromMergeGroup fills a merge_group job: checks requested for the merge
// group's commit.
func (j *job) fromMergeGroup(p *payload) (ignored, error) {
	if p.Action != "checks_requested" {
		return ignored("merge group " + clip(p.Action)), nil
	}
	if !hexSHA(p.MergeGroup.HeadSHA) {
		return "", fmt.Errorf("%w: merge_group.head_sha is not a commit sha (%q)", errMalformed, clip(p.MergeGroup.HeadSHA))
	}
	j.SHA = strings.ToLower(p.MergeGroup.HeadSHA)
	j.RepoURL = repoURL(p)
	if hexSHA(p.MergeGroup.BaseSHA) {
		j.Base, j.BaseRef = strings.ToLower(p.MergeGroup.BaseSHA), p.MergeGroup.BaseRef
	}
	j.Kind = kindCheck
	return "", nil
}

// maxEnvironment bounds an environment's name (GitHub's limit is 255).
const maxEnvironment = 255

// fromDeployment fills a deployment job: a workflow run waits for
// phasegate's answer before deploying the commit to the environment. The
// run is read from the callback URL's path, which must name the event's
// repository; its host is never used (ghclient.DeploymentRunID).
func (j *job) fromDeployment(p *payload) (ignored, error) {
	if p.Action != "requested" {
		return ignored("deployment protection rule " + clip(p.Action)), nil
	}
	if !hexSHA(p.SHA) {
		return "", fmt.Errorf("%w: deployment_protection_rule.sha is not a commit sha (%q)", errMalformed, clip(p.SHA))
	}
	if len(p.Environment) > maxEnvironment || strings.ContainsFunc(p.Environment, unicode.IsControl) {
		return "", fmt.Errorf("%w: deployment_protection_rule.environment is not an environment's name (%q)", errMalformed, clip(p.Environment))
	}
	run, err := ghclient.DeploymentRunID(p.DeploymentCallbackURL, j.Owner, j.Repo)
	if err != nil {
		return "", fmt.Errorf("%w: %v", errMalformed, err)
	}
	j.Kind, j.SHA, j.Ref, j.Environment, j.RunID = kindDeploy, strings.ToLower(p.SHA), p.Ref, p.Environment, run
	j.RepoURL = repoURL(p)
	// A run asks again for each attempt, with a new deployment: the same
	// body re-sent under a fresh delivery ID is a replay.
	var deployment int64
	if p.Deployment != nil {
		deployment = p.Deployment.ID
	}
	j.ReplayKey = fmt.Sprintf("deployment %s %d %s %d", strings.ToLower(j.repository()), run, strings.ToLower(j.Environment), deployment)
	return "", nil
}

// fromInstallation fills an installation job: phasegate installed or
// unsuspended (its repositories to check), or deleted or suspended.
func (j *job) fromInstallation(p *payload) ignored {
	switch p.Action {
	case "created", "unsuspend":
		j.Kind, j.Repos = kindInstallRepos, p.Repositories
	case "deleted", "suspend":
		j.Kind, j.Repos = kindUninstall, p.Repositories
	default:
		return ignored("installation " + clip(p.Action))
	}
	return ""
}

// fromInstallationRepos fills an installation_repositories job:
// repositories added to the installation or removed from it.
func (j *job) fromInstallationRepos(p *payload) ignored {
	switch p.Action {
	case "added":
		j.Kind, j.Repos = kindInstallRepos, p.RepositoriesAdded
	case "removed":
		j.Kind, j.Repos = kindUninstall, p.RepositoriesRemoved
	default:
		return ignored("installation_repositories " + clip(p.Action))
	}
	return ""
}

// hexSHA reports whether s is a full commit sha (40 hex digits, or 64 in a
// SHA-256 repository).
func hexSHA(s string) bool {
	return (len(s) == 40 || len(s) == 64) && strings.Trim(s, "0123456789abcdefABCDEF") == ""
}
