// Package web serves phasegate's own pages in `phasegate serve`: the details
// page of a commit, a pull request and an issue, and the organisation-wide
// decision inbox, for a person signed in with GitHub (the App's user-to-server
// OAuth web flow). It is off unless configured.
//
// The issue thread stays the only source of truth: the pages read what the
// server's Source folds from it, and a resolution made from a page is the
// person's own `/resolve` comment, posted with their own token and applied by
// the normal webhook path exactly as a typed one.
//
// This file is the contract between the pages and the rest of the server:
// the view types the templates render and the interfaces the pages consume
// (the server implements Source with decide and ghclient; ghclient implements
// OAuth and UserAPI).
package web

import (
	"context"
	"errors"
	"time"
)

// ErrNotFound is what a Source or UserAPI returns for a repository, issue,
// pull request or commit that does not exist or that the person cannot see.
// The pages answer both exactly alike (404, same body), so that a status
// code never tells a private repository from a missing one.
var ErrNotFound = errors.New("not found")

// Viewer is the signed-in person, as GitHub's /user answers for their token.
type Viewer struct {
	Login     string
	ID        int64
	Name      string
	AvatarURL string
}

// Token is a person's GitHub user access token (user-to-server). It lives
// only in the sealed session cookie: never in a URL, a log line, a page or a
// script.
type Token struct {
	AccessToken string
	// Expiry is when GitHub stops accepting it (zero: unknown); the session
	// ends no later.
	Expiry time.Time
}

// OAuth is the App's OAuth web flow (authorization code with state and PKCE).
type OAuth interface {
	// AuthCodeURL is GitHub's authorize page for this state and the PKCE
	// S256 challenge of verifier.
	AuthCodeURL(state, verifier string) string
	// Exchange trades the code GitHub sent back for the person's token,
	// proving the PKCE verifier.
	Exchange(ctx context.Context, code, verifier string) (Token, error)
	// User is GitHub read with that person's token.
	User(token Token) UserAPI
	// Revoke revokes the person's token at GitHub (at sign-out): every
	// copy of it stops working.
	Revoke(ctx context.Context, token Token) error
}

// RepoRef names a repository of one of the App's installations.
type RepoRef struct {
	Owner        string
	Name         string
	Installation int64
	Private      bool
}

// FullName is "owner/name".
func (r RepoRef) FullName() string { return r.Owner + "/" + r.Name }

// UserAPI is GitHub read as the signed-in person, with their own token: what
// they can see is exactly what GitHub lets them see.
type UserAPI interface {
	CurrentUser(ctx context.Context) (Viewer, error)
	// Repos is every repository of the App's installations that the person
	// can see (GitHub's /user/installations and their repositories).
	Repos(ctx context.Context) ([]RepoRef, error)
	// CanSee reports whether the person can read the repository; false with
	// a nil error when GitHub answers them 404.
	CanSee(ctx context.Context, owner, repo string) (bool, error)
}

// Source is what the pages show, read by the server with the App's
// installation token — only after the person's own token showed they can see
// the repository.
type Source interface {
	// Issue is the details page of an issue (or of a pull request's
	// conversation, which is an issue too) for viewer.
	Issue(ctx context.Context, owner, repo string, issue int, viewer string) (*IssuePage, error)
	// Commit is the details page of a commit for viewer.
	Commit(ctx context.Context, owner, repo, sha, viewer string) (*CommitPage, error)
	// PullHead is the head commit of a pull request.
	PullHead(ctx context.Context, owner, repo string, pr int) (string, error)
	// Pending is every pending decision in those repositories, newest and
	// blocking first, with MayResolve filled for viewer.
	Pending(ctx context.Context, repos []RepoRef, viewer string) ([]PendingItem, error)
	// Deployments is every deployment waiting for an answer in those
	// repositories, the longest waiting first.
	Deployments(ctx context.Context, repos []RepoRef) ([]Deployment, error)
	// Resolve posts the person's own `/resolve <decision> <option> <reason>`
	// comment with their token, after re-folding the thread and checking
	// that they may and that the composed body parses to exactly that
	// command. The webhook path then applies it like a typed comment.
	Resolve(ctx context.Context, token Token, r ResolveRequest) (commentURL string, err error)
	// Subscribe delivers a Change each time one of the server's jobs
	// changes what a page shows; cancel stops it. A slow reader misses
	// changes rather than slowing the jobs (the pages then poll).
	Subscribe() (changes <-chan Change, cancel func())
}

// ResolveRequest is a resolution asked for from a page.
type ResolveRequest struct {
	Owner, Repo string
	Issue       int
	Decision    string // "D-001"
	Option      string // an option key of the decision
	Reason      string // free text, may be empty
	Viewer      string // the signed-in person's login
}

// RefusedError is a resolution the person may not make, or that no longer
// applies (resolved meanwhile, unknown option): shown to them, not a 500.
type RefusedError struct {
	Why string
	// Conflict: the decision no longer applies (resolved meanwhile, the
	// thread frozen, an unknown option): the page answers 409, else 403.
	Conflict bool
}

func (e *RefusedError) Error() string { return "refused: " + e.Why }

// Change says which page changed.
type Change struct {
	Owner, Repo string
	Issue       int    // 0 when the change is a commit's
	SHA         string // "" when the change is an issue's
}

// IssuePage is everything the details page of an issue shows.
type IssuePage struct {
	Owner, Repo string
	Issue       int
	Title       string
	URL         string // the issue on GitHub
	Outcomes    []OutcomeView
	History     []HistoryEntry
	Tampering   []TamperView
	// Frozen: tampering stopped the ledger; nothing resolves until a
	// maintainer repairs it.
	Frozen bool
}

// OutcomeView is one Phase Outcome posted on the issue.
type OutcomeView struct {
	ID         string // content ID
	Phase      string
	Status     string
	Summary    string
	Commit     string // the commit that carried it, if known
	CommentURL string
	PostedAt   time.Time
	Decisions  []DecisionView
}

// DecisionView is one decision of an outcome.
type DecisionView struct {
	ID             string
	Type           string
	Question       string
	Options        []OptionView
	Recommendation string
	Blocking       bool
	// Resolvers says who may resolve it, in words ("members of @org/leads",
	// "anyone with write access but the agent and the pull request's author").
	Resolvers string
	// Pending, or else resolved: ResolvedBy, Option, Reason, ResolvedAt,
	// ResolutionURL.
	Pending       bool
	ResolvedBy    string
	Option        string
	Reason        string
	ResolvedAt    time.Time
	ResolutionURL string
	// MayResolve: the viewer may resolve it now; WhyNot says why not when
	// they may not.
	MayResolve bool
	WhyNot     string
	// ChangedSinceApproval lists what pushes after its approval changed
	// (commits and files), when any.
	ChangedSinceApproval []string
	// Deployments are the deployments waiting on it, when it is pending.
	Deployments []Deployment
}

// OptionView is one option of a decision.
type OptionView struct {
	Key         string
	Label       string
	Recommended bool
}

// HistoryEntry is one comment of the ledger, oldest first.
type HistoryEntry struct {
	At         time.Time
	Who        string
	What       string // "posted outcome pace/plan", "resolved D-001: approve", "refused /resolve …: why"
	CommentURL string
}

// TamperView is one tampering finding.
type TamperView struct {
	CommentID int64
	Reason    string
}

// CommitPage is everything the details page of a commit (or a pull
// request's head) shows.
type CommitPage struct {
	Owner, Repo string
	SHA         string
	PR          int // the pull request it was reached from, 0 when none
	// Checked is false when no check result is known for the commit (not
	// checked yet, or checked before the server's memory of it); the page
	// then says so instead of a verdict.
	Checked   bool
	CheckedAt time.Time
	Verdict   string // SHIP, ADVISORY, HOLD
	Reasons   []string
	Findings  []FindingView
	// Decisions is the phasegate/decisions state of the commit and the
	// issues whose outcomes it carries.
	Decisions     string // success, pending, failure, error
	DecisionsText string
	Issues        []IssueRef
	// Input is what the check result stands for (the head, its base, the
	// pull request, the configuration, the version): nil when unknown.
	Input []InputRow
}

// InputRow is one line of a check's input; Code marks an identifier (a
// commit, a branch), shown as code. (The JSON is how internal/pages keeps
// it, with FindingView's, for every replica.)
type InputRow struct {
	Name  string `json:"name"`
	Value string `json:"value"`
	Code  bool   `json:"code,omitempty"`
}

// FindingView is one finding at file:line.
type FindingView struct {
	File     string `json:"file,omitempty"`
	Line     int    `json:"line,omitempty"`
	Column   int    `json:"column,omitempty"`
	Rule     string `json:"rule,omitempty"`
	Severity string `json:"severity,omitempty"` // error, warning, info
	Message  string `json:"message,omitempty"`
	// URL is the file at that commit on GitHub, at the line (set when
	// shown, never kept).
	URL string `json:"-"`
}

// IssueRef links an issue whose outcomes a commit carries.
type IssueRef struct {
	Number  int
	Title   string
	Pending int // pending decisions
}

// PendingItem is one pending decision in the inbox.
type PendingItem struct {
	Repo       RepoRef
	Issue      int
	IssueTitle string
	Decision   string
	Type       string
	Phase      string
	Question   string
	Blocking   bool
	Since      time.Time // when its outcome was posted
	MayResolve bool
	WhyNot     string
	Options    []OptionView
	CommentURL string // the outcome comment on GitHub
}

// Deployment is a deployment waiting for phasegate's answer: a job of
// workflow run RunID deploying commit SHA (Ref) to Environment. The
// environment and the ref are the repository's workflows' words.
type Deployment struct {
	Repo        RepoRef
	Environment string
	SHA, Ref    string
	RunID       int64
	Since       time.Time // when phasegate was first asked
	Reason      string    // why it waits, as last answered
	Waits       []Wait
}

// Wait is a blocking decision a deployment waits for, on its issue.
type Wait struct {
	Decision string
	Issue    int
	// Stale: it was resolved, and a push since made it stale.
	Stale bool
}
