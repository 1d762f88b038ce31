package corpus

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"time"
)

// rnd wraps a deterministic source with the helpers the generators use.
type rnd struct{ *rand.Rand }

func newRnd(seed int64) rnd {
	return rnd{rand.New(rand.NewPCG(uint64(seed), 0x9e3779b97f4a7c15))}
}

// between returns an int in [lo, hi].
func (r rnd) between(lo, hi int) int { return lo + r.IntN(hi-lo+1) }

func (r rnd) chance(p float64) bool { return r.Float64() < p }

func pick[T any](r rnd, l []T) T { return l[r.IntN(len(l))] }

// cost returns a dollar amount rounded to 4 decimals, like PACE writes.
func (r rnd) cost(lo, hi float64) float64 {
	v := lo + r.Float64()*(hi-lo)
	return float64(int(v*10000+0.5)) / 10000
}

func round4(v float64) float64 { return float64(int64(v*10000+0.5)) / 10000 }

func (r rnd) hex(n int) string {
	const digits = "0123456789abcdef"
	b := make([]byte, n)
	for i := range b {
		b[i] = digits[r.IntN(16)]
	}
	return string(b)
}

func (r rnd) uuid() string {
	h := r.hex(32)
	return h[:8] + "-" + h[8:12] + "-4" + h[13:16] + "-" + string("89ab"[r.IntN(4)]) + h[17:20] + "-" + h[20:]
}

const tsLayout = "2006-01-02T15:04:05Z"

func ts(t time.Time) string { return t.UTC().Format(tsLayout) }

var (
	verbs = []string{"Add", "Implement", "Refactor", "Fix", "Harden", "Extend", "Migrate", "Validate", "Cache", "Paginate", "Instrument", "Split"}
	nouns = []string{"user model", "session store", "billing webhook", "rate limiter", "audit log", "search index",
		"notification service", "export job", "password reset flow", "feature flag client", "invoice renderer",
		"OAuth callback", "metrics endpoint", "retry queue", "config loader", "upload handler", "tenant resolver",
		"email templates", "permission checker", "report scheduler", "cart service", "inventory sync"}
	areas    = []string{"auth", "billing", "search", "notifications", "export", "admin", "api", "core", "storage", "web", "jobs", "reports"}
	outcomes = []string{"requests over the limit get a 429", "expired tokens are rejected with 401", "the list is paginated 50 at a time",
		"failures are retried with backoff", "every change is written to the audit log", "the response is cached for 5 minutes",
		"invalid input returns a 422 with field errors", "the job resumes after a crash", "only admins can see the page",
		"the export completes under 30 seconds for 10k rows", "duplicate submissions are ignored", "the email renders in dark mode"}
	fileStems = []string{"service", "handler", "model", "repository", "client", "middleware", "router", "schema", "worker", "cache", "views", "utils", "config", "validator"}
	langs     = []struct{ src, test, testCmd string }{
		{"src/%s/%s.ts", "src/%s/%s.test.ts", "npm test"},
		{"src/%s/%s.py", "tests/%s/test_%s.py", "pytest -q"},
		{"internal/%s/%s.go", "internal/%s/%s_test.go", "go test ./..."},
	}
	risks = []string{"bcrypt rounds set to 12 — acceptable for auth latency.", "Cache invalidation relies on TTL only; stale reads for up to 5 minutes.",
		"Migration locks the table briefly; run outside peak hours.", "Retry storm possible if the upstream is down for long; capped at 5 attempts.",
		"New index increases write latency by about 3%.", "Pagination cursor is opaque but not signed."}
	deps = []string{"passlib[bcrypt] added to requirements.txt", "none", "redis client bumped to 5.0.1", "no new dependencies",
		"added zod 3.23 for request validation", "golang.org/x/time/rate for the limiter"}
	edgeCases = []string{"Wrong password returns False", "Empty password raises ValueError", "Unicode e-mail addresses are normalised",
		"Concurrent requests share one token bucket", "Zero-row export produces a header-only CSV", "Expired cursor returns 400",
		"Clock skew of 30 s is tolerated", "Retry after 429 honours Retry-After", "Deleted users are skipped", "Very long titles are truncated to 200 chars"}
	outOfScope = []string{"OAuth / social login", "CI pipeline — not yet configured in this sprint", "Admin UI for rate limits", "Dark mode for emails",
		"CSV import", "Multi-region failover", "Audit log retention policy", "Localisation of error messages", "Webhook signature rotation",
		"Bulk export over 100k rows", "SAML single sign-on", "Mobile push notifications"}
	checksSentinel = []string{"Hardcoded secrets in source files", "HTTP timeout on external API calls", "SQL built by string concatenation",
		"Dependency with known CVE", "Sensitive data in logs", "Missing authorization check on new endpoint", "Insecure random for tokens", "CORS allows any origin"}
	checksConduit = []string{"Action version pinning", "Test gate in CI", "Secrets passed as plain env", "Deploy step requires approval",
		"Docker base image pinned by digest", "Cache key includes lockfile hash", "Workflow permissions are least privilege"}
	themes = []string{"User model and password hashing", "Session handling", "Rate limiting", "Search indexing", "Billing webhooks",
		"Notification preferences", "Data export", "Admin dashboard", "Audit trail", "Password reset", "Tenant isolation", "Reporting"}
)

func (r rnd) file(area string) string {
	l := pick(r, langs)
	return fmt.Sprintf(l.src, area, pick(r, fileStems))
}

func (r rnd) sentence() string {
	return fmt.Sprintf("%s the %s so that %s", pick(r, verbs), pick(r, nouns), pick(r, outcomes))
}

// criterion returns an acceptance criterion; n makes it unique within a story.
func (r rnd) criterion(n int) string {
	noun := pick(r, nouns)
	switch r.IntN(4) {
	case 0:
		return fmt.Sprintf("The %s: %s", noun, pick(r, outcomes))
	case 1:
		return fmt.Sprintf("%s() returns an error for invalid input (case %d)", camel(noun), n)
	case 2:
		return fmt.Sprintf("Given a %s, when it is saved, then %s", noun, pick(r, outcomes))
	}
	return fmt.Sprintf("Unit tests cover the %s (%d cases)", noun, r.between(3, 20)+n)
}

func camel(s string) string {
	parts := strings.Fields(s)
	for i, p := range parts {
		if i > 0 {
			parts[i] = strings.ToUpper(p[:1]) + p[1:]
		}
	}
	return strings.Join(parts, "")
}

// words returns a text of about n words, for summaries and descriptions.
func (r rnd) words(n int) string {
	var parts []string
	for len(parts) < n {
		parts = append(parts, strings.Fields(r.sentence()+".")...)
	}
	return strings.Join(parts[:n], " ")
}
