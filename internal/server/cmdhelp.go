package server

import "fmt"

// serveHelpFooter ends `phasegate serve -h`, after the flags (each of which
// names its variable): the variables that are not a flag's, and the exit
// codes. TestServeHelpListsEveryVariable compares the variables with those
// parseServe reads; TestServeHelpListsExitCodes the codes with what Main returns.
var serveHelpFooter = fmt.Sprintf(`
Also read from the environment:
  PHASEGATE_WEBHOOK_SECRET_FILE   a file holding the webhook secret(s), when PHASEGATE_WEBHOOK_SECRET is not set
  PHASEGATE_PRIVATE_KEY           the App's private key, PEM, instead of a file (never a flag: ps shows flags)
  PHASEGATE_SIGNING_KEY           signs outcome and resolution comments
  PHASEGATE_NOTIFY_URL            POST each resolution's event (phasegate.resolved, phasegate.phase-advanced) here
  PHASEGATE_NOTIFY_SECRET         required with PHASEGATE_NOTIFY_URL: the HMAC key of X-Phasegate-Signature-256
  PHASEGATE_NOTIFY_ALLOW_PRIVATE  true lets the notify URL reach loopback, private and link-local addresses (default false)
  PHASEGATE_OAUTH_CLIENT_SECRET   the App's client secret itself, instead of --oauth-client-secret-file
  PHASEGATE_SESSION_KEY           the pages' session key(s) themselves, instead of --session-key-file

The pages (details pages and the decision inbox) are served only when --public-url, --oauth-client-id,
the client secret and the session key are all set; setting only some of them is refused.

Exit codes: 0 after a graceful shutdown (SIGTERM or SIGINT: stop accepting, drain the queue for up to %s),
for -h, and for a --probe answered 200; 1 when --probe gets no 200 from /readyz; 2 when it cannot
start (no webhook secret; a private key missing, unreadable or not an RSA key in PEM, checked before
any network call; a bad flag or variable; Redis unreachable; only some of the pages' settings; a
session key shorter than 32 bytes; a public URL that is not https) or the server fails.
`, DefaultShutdownTimeout)
