package ghfaketest

import (
	"net/http"
	"regexp"
	"strings"
	"sync"
)

// The exceptions: what GitHub does that its description does not say, so
// that the fake does it unchecked. Each names its reason; a new one needs a
// reason a reviewer can check against GitHub's documentation.

// skipAll names why an exchange is not checked at all, or "".
func skipAll(x Exchange) string {
	p := strings.TrimPrefix(x.Request.URL.Path, "/api")
	switch {
	case x.Request.Method == http.MethodPost && p == "/graphql":
		// "graphql": the GraphQL endpoint (POST /graphql, GitHub
		// Enterprise Server's /api/graphql) is not part of the REST
		// description; ghclient sends one query (lastEditedAt of comments),
		// and ghfake's tests check its shape.
		return "graphql"
	case strings.HasPrefix(x.Request.URL.Path, "/login/oauth/"):
		// "oauth-web": GET /login/oauth/authorize and POST
		// /login/oauth/access_token, a GitHub App's user-to-server OAuth
		// web flow, are endpoints of GitHub's web host (github.com, a GitHub
		// Enterprise Server's root), not of the REST API, and its
		// description does not cover them; ghfake serves them at its root
		// as GitHub documents them, and its tests check them
		// (internal/ghfake/oauth_test.go).
		// https://docs.github.com/apps/creating-github-apps/authenticating-with-a-github-app/generating-a-user-access-token-for-a-github-app
		return "oauth-web"
	case x.Request.Method == http.MethodHead:
		// "head": the description lists no HEAD operations; GitHub answers
		// HEAD as GET without a body. phasegate sends none.
		return "head"
	case x.Request.Method == http.MethodGet && codeloadPath.MatchString(x.Request.URL.Path):
		// "codeload": GET /repos/{owner}/{repo}/tarball/{ref} answers 302
		// with a Location on codeload.github.com (that 302 is checked as
		// the operation's); the download it leads to is not part of the
		// REST API nor of its description, and its body is a gzip
		// tarball, not JSON. The fake serves codeload on its own host at
		// /_codeload/{owner}/{repo}/legacy.tar.gz/{sha} (ghfake's
		// getTarball), and only that path is let through.
		// https://docs.github.com/rest/repos/contents#download-a-repository-archive-tar
		return "codeload"
	}
	return ""
}

// codeloadPath is the path of the fake's codeload downloads, the target of
// its tarball redirects.
var codeloadPath = regexp.MustCompile(`^/_codeload/[^/]+/[^/]+/legacy\.tar\.gz/[0-9a-f]{40}$`)

// skipResponseBody: the answer is not checked against the operation's
// response (its status still is).
func skipResponseBody(x Exchange) bool {
	// "raw media types": with Accept: application/vnd.github.raw or
	// .v3.raw (blobs, contents) GitHub answers the bytes themselves; the
	// description documents these custom media types in prose only
	// (https://docs.github.com/rest/using-the-rest-api/getting-started-with-the-rest-api#media-types).
	return rawMediaType.MatchString(x.Request.Header.Get("Accept")) && x.Status == http.StatusOK
}

// untypedBody is the media type of a request body sent without a
// Content-Type ("untyped body"): GitHub reads a request body as JSON
// whatever it is labelled (`curl -d` works), and go-github always labels
// it; only hand-made requests in tests leave it out.
const untypedBody = "application/json"

var rawMediaType = regexp.MustCompile(`application/vnd\.github(\.v3)?\.raw\b`)

// anyOperation are the statuses GitHub may answer to any operation, though
// the description lists them for some operations only. Their body must
// still be GitHub's error JSON (basic-error), and a 304 has none.
var anyOperation = map[int]string{
	// a body GitHub cannot parse ("Problems parsing JSON")
	http.StatusBadRequest: "problems parsing JSON",
	// a repository, issue, comment or delivery that does not exist or that
	// the caller may not see: GitHub answers 404 to every operation
	// (https://docs.github.com/rest/using-the-rest-api/troubleshooting-the-rest-api#404-not-found-for-an-existing-resource)
	http.StatusNotFound: "not found",
	// https://docs.github.com/rest/using-the-rest-api/best-practices-for-using-the-rest-api#use-conditional-requests-if-appropriate
	http.StatusNotModified: "conditional request",
	// https://docs.github.com/rest/authentication/authenticating-to-the-rest-api#failed-login-limit
	http.StatusUnauthorized: "bad credentials",
	// https://docs.github.com/rest/using-the-rest-api/rate-limits-for-the-rest-api#exceeding-the-rate-limit
	http.StatusForbidden:       "rate limit or no permission",
	http.StatusTooManyRequests: "rate limit",
	// a write whose body breaks a rule the description does not state
	// (the 140-character status description, an unknown state): GitHub
	// answers Validation Failed to every operation that takes a body.
	// https://docs.github.com/rest/using-the-rest-api/troubleshooting-the-rest-api
	http.StatusUnprocessableEntity: "validation failed",
	// https://docs.github.com/rest/using-the-rest-api/troubleshooting-the-rest-api
	http.StatusInternalServerError: "server error",
	http.StatusBadGateway:          "server error",
	http.StatusServiceUnavailable:  "server error",
	http.StatusGatewayTimeout:      "server error",
}

// exception is a known gap between the description and GitHub: problems of
// operation op on side whose pointer and reason match are not violations.
type exception struct {
	name    string
	op      string // a regular expression the whole "METHOD /path" (as in the description) matches
	side    string
	pointer string // a regular expression the whole JSON pointer matches
	reason  string // a substring of kin-openapi's reason
	why     string
}

var exceptions = []exception{
	{
		name: "created takes search syntax", op: `GET /repos/\{owner\}/\{repo\}/actions/runs`,
		side: "request", pointer: `/`, reason: `doesn't match the format "date-time"`,
		why: "the created parameter takes a range in GitHub's search syntax (>=2024-05-01T12:00:00Z, A..B), " +
			"as the parameter's own description says; its schema says a bare date-time",
	},
	{
		name: "add-labels takes an array", op: `POST /repos/\{owner\}/\{repo\}/issues/\{issue_number\}/labels`,
		side: "request", pointer: `/`, reason: "value must be an object",
		why: "GitHub takes a bare JSON array of label names as well as {\"labels\": [...]}; " +
			"go-github (IssuesService.AddLabelsToIssue) sends the array, the description lists only the object",
	},
	{
		name: "installation account is allOf", op: `GET /app/installations`,
		side: "response", pointer: `/\d+/account/(name|slug|created_at|updated_at)`, reason: "is missing",
		why: "the description makes an installation's account allOf simple-user and enterprise, so it requires " +
			"an enterprise's name, slug, created_at and updated_at of every account; GitHub's own docs say anyOf, " +
			"and an organization's or user's account has none of them",
	},
	{
		name: "user installation account is allOf", op: `GET /user/installations`,
		side: "response", pointer: `/installations/\d+/account/(name|slug|created_at|updated_at)`, reason: "is missing",
		why: "as for GET /app/installations: the description's installation account is allOf simple-user and " +
			"enterprise, which no organization's or user's account satisfies",
	},
	{
		name: "access token request of null", op: `POST /app/installations/\{installation_id\}/access_tokens`,
		side: "request", pointer: `/`, reason: "not nullable",
		why: "ghinstallation posts the JSON null when it asks for no narrower repositories or permissions; " +
			"GitHub takes it as no options, the description's body is a non-nullable object",
	},
	{
		name: "a pull request's label without description", op: `GET /repos/.*/pulls(/\{pull_number\})?`,
		side: "response", pointer: `(/\d+)?/labels/\d+/description`, reason: "not nullable",
		why: "a label's description is null until someone writes one (the label schema says nullable); " +
			"the description's pull-request and pull-request-simple inline the label with a non-nullable string",
	},
}

// excepted names the exception p falls under, or "".
func excepted(op string, p problem) string {
	for _, e := range exceptions {
		if whole(e.op, op) && e.side == p.side && whole(e.pointer, p.pointer) && strings.Contains(p.reason, e.reason) {
			return e.name
		}
	}
	return ""
}

// whole: s matches all of re. Each expression is compiled once (an
// exception is tried on every problem, and compiling it each time was a
// few percent of a test binary's time).
func whole(re, s string) bool {
	c, ok := compiled.Load(re)
	if !ok {
		c, _ = compiled.LoadOrStore(re, regexp.MustCompile("^(?:"+re+")$"))
	}
	return c.(*regexp.Regexp).MatchString(s)
}

// compiled are the exceptions' expressions, compiled.
var compiled sync.Map
