package server

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"mime"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Results of a delivery (the result label of
// phasegate_webhook_deliveries_total).
const (
	resultAccepted         = "accepted"           // 202: queued
	resultCoalesced        = "coalesced"          // 202: folded into the durable job of the same kind, repository and commit
	resultIgnored          = "ignored"            // 200: an event or action phasegate does not act on
	resultDuplicate        = "duplicate"          // 200: a delivery ID seen before
	resultMethodNotAllowed = "method_not_allowed" // 405
	resultTooLarge         = "too_large"          // 413
	resultBadRequest       = "bad_request"        // 400: headers or JSON
	resultUnauthorized     = "unauthorized"       // 401: signature missing or wrong
	resultQueueFull        = "queue_full"         // 503
	resultUnavailable      = "unavailable"        // 503: shutting down, or the seen store failed
	resultOverBudget       = "over_budget"        // 503: the in-flight body budget is spent
	resultThrottled        = "throttled"          // 200: an installation reconciled recently
)

const seenTimeout = 2 * time.Second

// webhook answers POST /webhook (and POST /). Nothing is acted on, and no
// delivery ID is recorded, unless the body's X-Hub-Signature-256 verifies.
func (s *Server) webhook(w http.ResponseWriter, r *http.Request) {
	event := r.Header.Get("X-GitHub-Event")
	rs := &responder{w: w, m: s.metrics, start: time.Now(), label: eventLabel(event)}
	delivery, ok := s.checkHeaders(rs, r, event)
	if !ok {
		return
	}
	want, ok := s.checkSignatureHeader(rs, r, event, delivery)
	if !ok {
		return
	}
	// The body's bytes are charged to the global budget as they arrive
	// (readVerified), so that the bodies held unverified at once stay
	// within it; a sender too slow is cut.
	var reserved int64
	defer func() { s.budget.release(reserved) }()
	j, ok := s.readVerified(rs, r, event, delivery, want, &reserved)
	if !ok {
		return
	}
	s.enqueue(rs, r, j)
}

// responder answers one delivery and counts the answer in the metrics.
type responder struct {
	w     http.ResponseWriter
	m     *metrics
	start time.Time
	label string // the event's label in the metrics
}

// answer writes the status code and msg as plain text, and counts the
// delivery under result.
func (rs *responder) answer(code int, result, msg string) {
	rs.m.deliveries.WithLabelValues(rs.label, result).Inc()
	rs.m.ack.Observe(time.Since(rs.start).Seconds())
	text(rs.w, code, msg)
}

// checkHeaders refuses what can be refused before the signature is looked
// at: a method other than POST, a server shutting down, a declared length
// over MaxBody, a missing or invalid X-GitHub-Event or X-GitHub-Delivery.
// It returns the delivery ID, and false when it answered.
func (s *Server) checkHeaders(rs *responder, r *http.Request, event string) (string, bool) {
	if r.Method != http.MethodPost {
		rs.w.Header().Set("Allow", http.MethodPost)
		rs.answer(http.StatusMethodNotAllowed, resultMethodNotAllowed, "method not allowed: webhooks are POSTed")
		return "", false
	}
	if s.draining.Load() {
		rs.answer(http.StatusServiceUnavailable, resultUnavailable, "shutting down")
		return "", false
	}
	if r.ContentLength > s.cfg.MaxBody {
		rs.answer(http.StatusRequestEntityTooLarge, resultTooLarge, "payload too large")
		return "", false
	}
	delivery := r.Header.Get("X-GitHub-Delivery")
	switch {
	case event == "":
		rs.answer(http.StatusBadRequest, resultBadRequest, "missing X-GitHub-Event header")
	case !validEvent(event):
		rs.answer(http.StatusBadRequest, resultBadRequest, "invalid X-GitHub-Event header")
	case delivery == "":
		rs.answer(http.StatusBadRequest, resultBadRequest, "missing X-GitHub-Delivery header")
	case !validDelivery(delivery):
		rs.answer(http.StatusBadRequest, resultBadRequest, "invalid X-GitHub-Delivery header")
	default:
		return delivery, true
	}
	return "", false
}

// checkSignatureHeader checks the signature header for its form before a
// byte of the body is read: an unsigned request costs no memory. It
// returns the decoded signature, and false when it answered.
func (s *Server) checkSignatureHeader(rs *responder, r *http.Request, event, delivery string) ([]byte, bool) {
	sig := r.Header.Get("X-Hub-Signature-256")
	if sig == "" {
		msg := "missing X-Hub-Signature-256 header"
		if r.Header.Get("X-Hub-Signature") != "" {
			msg = "missing X-Hub-Signature-256 header (the SHA-1 X-Hub-Signature is not accepted)"
		}
		s.log.Warn("webhook refused: unsigned", "delivery", delivery, "event", event, "remote", r.RemoteAddr)
		rs.answer(http.StatusUnauthorized, resultUnauthorized, msg)
		return nil, false
	}
	want, ok := parseSignature(sig)
	if !ok {
		s.log.Warn("webhook refused: the signature header is not sha256=<64 hex digits>", "delivery", delivery, "event", event, "remote", r.RemoteAddr)
		rs.answer(http.StatusUnauthorized, resultUnauthorized, "X-Hub-Signature-256 does not verify")
		return nil, false
	}
	return want, true
}

// readVerified reads the body, verifies its signature against want and
// classifies the delivery. It returns the job to queue, and false when it
// answered: a body too large or unreadable, a signature that does not
// verify, a malformed payload, or a delivery that is ignored (a ping).
func (s *Server) readVerified(rs *responder, r *http.Request, event, delivery string, want []byte, reserved *int64) (*job, bool) {
	body, err := s.readBody(rs.w, r, reserved)
	if err != nil {
		var tooLarge *http.MaxBytesError
		switch {
		case errors.As(err, &tooLarge):
			rs.answer(http.StatusRequestEntityTooLarge, resultTooLarge, "payload too large")
		case errors.Is(err, errOverBudget):
			s.log.Warn("webhook refused: the in-flight body budget is spent (reconcile recovers a delivery GitHub records as failed)",
				"delivery", delivery, "event", event, "remote", r.RemoteAddr, "content_length", r.ContentLength)
			rs.w.Header().Set("Retry-After", "5")
			rs.answer(http.StatusServiceUnavailable, resultOverBudget, "busy: too many payload bytes in flight")
		case errors.Is(err, errTooSlow):
			s.log.Warn("webhook refused: the body arrives too slowly", "delivery", delivery, "event", event, "remote", r.RemoteAddr,
				"content_length", r.ContentLength, "min_rate", s.cfg.bodyMinRate)
			rs.answer(http.StatusBadRequest, resultBadRequest, "could not read the payload: it arrives too slowly")
		default:
			rs.answer(http.StatusBadRequest, resultBadRequest, "could not read the payload")
		}
		return nil, false
	}
	if !verifySignature(s.cfg.Secrets, want, body) {
		s.log.Warn("webhook refused: the signature does not verify", "delivery", delivery, "event", event, "remote", r.RemoteAddr)
		rs.answer(http.StatusUnauthorized, resultUnauthorized, "X-Hub-Signature-256 does not verify")
		return nil, false
	}
	// Verified from here on.
	data, err := jsonPayload(r.Header.Get("Content-Type"), body)
	if err != nil {
		rs.answer(http.StatusBadRequest, resultBadRequest, err.Error())
		return nil, false
	}
	j, why, err := classify(event, delivery, data, s.Identity())
	if err != nil {
		s.log.Warn("webhook refused: malformed payload", "delivery", delivery, "event", event, "error", err)
		rs.answer(http.StatusBadRequest, resultBadRequest, err.Error())
		return nil, false
	}
	if j == nil {
		if why == "ping" {
			rs.answer(http.StatusOK, resultIgnored, "pong")
			return nil, false
		}
		s.log.Debug("webhook ignored", "delivery", delivery, "event", event, "why", string(why))
		rs.answer(http.StatusOK, resultIgnored, "ignored: "+string(why))
		return nil, false
	}
	return j, true
}

// enqueue queues a verified delivery's job and answers: refused when the
// queue is closed or full or the seen store fails, dropped when the
// delivery ID was seen before, throttled when its installation was
// reconciled recently.
func (s *Server) enqueue(rs *responder, r *http.Request, j *job) {
	if s.cfg.Tasks != nil && durableKinds[j.Kind] {
		s.enqueueDurable(rs, r, j)
		return
	}
	switch s.queue.reserve() {
	case slotClosed:
		rs.answer(http.StatusServiceUnavailable, resultUnavailable, "shutting down")
		return
	case slotFull:
		s.log.Warn("webhook refused: the queue is full (reconcile recovers it)", "delivery", j.Delivery, "event", j.Event,
			"installation", j.Installation, "repository", j.repository())
		rs.answer(http.StatusServiceUnavailable, resultQueueFull, "queue full")
		return
	}
	pushed := false
	defer func() {
		if !pushed { // a refusal, or a panic in the seen store: give the slot back
			s.queue.release()
		}
	}()
	if !s.firstSeen(r.Context(), rs, j) {
		return
	}
	if j.Kind == kindInstallRepos {
		if ok, msg := s.allowInstallReconcile(r.Context(), j); !ok {
			rs.answer(http.StatusOK, resultThrottled, "ignored: "+msg)
			return
		}
	}
	s.queue.push(j, s.cfg.Now())
	pushed = true
	rs.answer(http.StatusAccepted, resultAccepted, "accepted")
}

// firstSeen records the delivery ID, then what the body is about (its
// replayKey), in the seen store, and reports whether both are new. It
// answered when not: 200 "duplicate" for a delivery ID or a body seen
// before, 503 when the store fails (the delivery ID is then forgotten, when
// the store can, so that GitHub's redelivery is taken).
func (s *Server) firstSeen(ctx context.Context, rs *responder, j *job) bool {
	ctx = context.WithoutCancel(ctx)
	if _, mem := s.cfg.Seen.(*MemSeen); !mem { // the in-memory set does not wait
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, seenTimeout)
		defer cancel()
	}
	dup, err := s.cfg.Seen.SeenBefore(ctx, j.Delivery)
	if err == nil && !dup && j.ReplayKey != "" {
		if dup, err = s.cfg.Seen.SeenBefore(ctx, j.ReplayKey); err != nil {
			s.forgetDelivery(ctx, j.Delivery)
		} else if dup {
			s.log.Warn("webhook dropped: its body was delivered before under another delivery ID (a replay?)",
				"delivery", j.Delivery, "event", j.Event, "action", j.Action, "repository", j.repository(), "comment", j.Comment.ID)
			rs.answer(http.StatusOK, resultDuplicate, "duplicate")
			return false
		}
	}
	if err != nil {
		s.log.Error("webhook refused: the seen-delivery store failed", "delivery", j.Delivery, "event", j.Event, "error", err)
		rs.answer(http.StatusServiceUnavailable, resultUnavailable, "cannot check for replays now")
		return false
	}
	if dup {
		s.log.Info("webhook dropped: delivery seen before", "delivery", j.Delivery, "event", j.Event)
		rs.answer(http.StatusOK, resultDuplicate, "duplicate")
		return false
	}
	return true
}

// parseSignature decodes an X-Hub-Signature-256 header ("sha256=<hex>").
func parseSignature(header string) ([]byte, bool) {
	hexSig, ok := strings.CutPrefix(header, "sha256=")
	if !ok || len(hexSig) != 2*sha256.Size {
		return nil, false
	}
	want, err := hex.DecodeString(hexSig)
	if err != nil {
		return nil, false
	}
	return want, true
}

// allowInstallReconcile reports whether a delivery may start a reconcile
// of its installation: at most one per installation per
// InstallReconcileInterval, whatever the delivery ids. The event header is
// not signed, and a captured installation body stays validly signed
// forever, so a replay with fresh ids is refused here; the periodic
// reconcile loop covers what a refused delivery would have done.
func (s *Server) allowInstallReconcile(ctx context.Context, j *job) (bool, string) {
	key := strconv.FormatInt(j.Installation, 10)
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), seenTimeout)
	recent, err := s.cfg.InstallThrottle.SeenBefore(cctx, key)
	cancel()
	log := s.log.With("delivery", j.Delivery, "event", j.Event, "action", j.Action, "installation", j.Installation)
	switch {
	case err != nil:
		log.Error("webhook not acted on: the installation reconcile limit cannot be checked (the reconcile loop covers it)", "error", err)
		return false, "the installation's reconcile limit cannot be checked now; the reconcile loop covers it"
	case recent:
		log.Warn("webhook not acted on: this installation was reconciled for a delivery recently (a replay?); the reconcile loop covers it",
			"interval", s.cfg.InstallReconcileInterval.String())
		return false, "installation reconciled less than " + s.cfg.InstallReconcileInterval.String() + " ago; the reconcile loop covers it"
	}
	return true, ""
}

// verifySignature checks want (a decoded X-Hub-Signature-256) against the
// HMAC-SHA256 of body under every secret, in constant time for each.
func verifySignature(secrets [][]byte, want, body []byte) bool {
	match := false
	for _, secret := range secrets {
		mac := hmac.New(sha256.New, secret)
		mac.Write(body)
		if hmac.Equal(mac.Sum(nil), want) {
			match = true
		}
	}
	return match
}

// jsonPayload returns the JSON of a delivery: the body, or the payload
// field of a form-encoded one (a webhook configured for
// application/x-www-form-urlencoded).
func jsonPayload(contentType string, body []byte) ([]byte, error) {
	if contentType == "application/json" { // what GitHub sends, without parsing it
		return body, nil
	}
	mt, _, _ := mime.ParseMediaType(contentType)
	if mt != "application/x-www-form-urlencoded" {
		return body, nil
	}
	v, err := url.ParseQuery(string(body))
	if err != nil || v.Get("payload") == "" {
		return nil, errors.New("malformed payload: a form without a payload field")
	}
	return []byte(v.Get("payload")), nil
}

// handledEvents are the events phasegate acts on (the others are metric
// label "other").
var handledEvents = map[string]bool{
	"issue_comment": true, "pull_request": true, "installation": true, "installation_repositories": true,
	"status": true, "merge_group": true, "ping": true,
	"push": true, "check_suite": true, "check_run": true, "pull_request_review": true,
	"deployment_protection_rule": true,
}

// eventLabel bounds the event label: the header is read before the
// signature is.
func eventLabel(event string) string {
	if handledEvents[event] {
		return event
	}
	if event == "" {
		return "none"
	}
	return "other"
}

func validEvent(s string) bool {
	return len(s) <= 64 && strings.Trim(s, "abcdefghijklmnopqrstuvwxyz_0123456789") == ""
}

func validDelivery(s string) bool {
	return len(s) <= 128 && !strings.ContainsFunc(s, func(r rune) bool { return r <= ' ' || r >= 0x7f })
}
