package ghclient

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"unicode/utf8"

	"github.com/google/go-github/v60/github"
)

// GitHub's limits on a repository_dispatch event.
const (
	// MaxDispatchEventType is the longest event_type, in characters.
	MaxDispatchEventType = 100
	// MaxDispatchProperties is the most top-level keys client_payload may have.
	MaxDispatchProperties = 10
	// MaxDispatchPayloadBytes bounds the encoded client_payload: GitHub
	// wants it under 64 KB.
	MaxDispatchPayloadBytes = 64 << 10
)

// RepositoryDispatch sends a repository_dispatch event: every workflow of
// the repository's default branch that listens to `repository_dispatch`
// (with this type among its `types`, when it filters) starts. It is one of
// the two events a GITHUB_TOKEN may cause that start workflow runs.
//
// payload is encoded as the event's client_payload and must encode to a
// JSON object with at most 10 top-level keys, under 64 KiB (nil sends {}).
// The token needs contents: write; without it GitHub answers 403, which
// IsPermissionDenied recognises.
//
// Every accepted dispatch starts workflow runs, so a dispatch is not
// idempotent: the transport repeats it only when it surely never reached
// GitHub (a dial or DNS error). After an ambiguous failure (a 5xx, a
// connection lost after the request was sent) it may or may not have been
// delivered; the caller's bookkeeping decides whether to send it again.
func (c *Client) RepositoryDispatch(ctx context.Context, owner, repo, eventType string, payload any) error {
	ctx = withOp(ctx, "RepositoryDispatch")
	where := fmt.Sprintf("send repository_dispatch %q to %s", eventType, repoName(owner, repo))
	if eventType == "" {
		return fmt.Errorf("send repository_dispatch to %s: empty event type", repoName(owner, repo))
	}
	if n := utf8.RuneCountInString(eventType); n > MaxDispatchEventType {
		return fmt.Errorf("%s: event type has %d characters, github allows %d", where, n, MaxDispatchEventType)
	}
	raw := json.RawMessage("{}")
	if payload != nil {
		b, err := json.Marshal(payload)
		if err != nil {
			return fmt.Errorf("%s: encode payload: %w", where, err)
		}
		if !bytes.Equal(b, []byte("null")) {
			raw = b
		}
	}
	var props map[string]json.RawMessage
	if err := json.Unmarshal(raw, &props); err != nil {
		return fmt.Errorf("%s: the payload is not a json object", where)
	}
	if len(props) > MaxDispatchProperties {
		return fmt.Errorf("%s: the payload has %d top-level keys, github allows %d", where, len(props), MaxDispatchProperties)
	}
	if len(raw) >= MaxDispatchPayloadBytes {
		return fmt.Errorf("%s: the payload has %d bytes, github allows less than %d", where, len(raw), MaxDispatchPayloadBytes)
	}
	_, _, err := c.gh.Repositories.Dispatch(ctx, owner, repo, github.DispatchRequestOptions{EventType: eventType, ClientPayload: &raw})
	return wrapf(err, "%s", where)
}

// IsPermissionDenied reports whether err is GitHub's 403 refusal of a token
// that lacks a permission ("Resource not accessible by integration"), as
// opposed to a 403 rate limit.
func IsPermissionDenied(err error) bool {
	var rl *RateLimitError
	if errors.As(err, &rl) {
		return false
	}
	var er *github.ErrorResponse
	if !errors.As(err, &er) || er.Response == nil || er.Response.StatusCode != http.StatusForbidden {
		return false
	}
	var abuse *github.AbuseRateLimitError
	var rate *github.RateLimitError
	return !errors.As(err, &abuse) && !errors.As(err, &rate)
}
