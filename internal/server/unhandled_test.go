package server

import (
	"errors"
	"strings"
	"testing"
)

// TestClassifyIgnoresUnhandledEvents: an event phasegate does not act on is
// ignored (200) even when its signed body carries an installation and a
// repository, as every App delivery does: it never becomes a job (a job of
// no kind would be queued, answered 202 and fail in a worker). A body that
// is not a JSON object is malformed (400), as for any event.
func TestClassifyIgnoresUnhandledEvents(t *testing.T) {
	t.Parallel()
	const body = `{"action":"created","installation":{"id":7,"account":{"login":"acme"}},` +
		`"repository":{"name":"shop","full_name":"acme/shop","owner":{"login":"acme"}},"sender":{"login":"alice"},` +
		`"issue":{"number":3},"comment":{"id":9,"body":"/resolve D-001 approve","user":{"login":"alice"}}}`
	for _, tt := range []struct {
		event, body string
		malformed   bool
	}{
		{event: "issues", body: body},
		{event: "star", body: body},
		{event: "workflow_run", body: body},
		{event: "discussion_comment", body: body},
		{event: "star", body: `["not", "an", "object"]`, malformed: true},
	} {
		t.Run(tt.event, func(t *testing.T) {
			t.Parallel()
			j, why, err := classify(tt.event, "d-1", []byte(tt.body), "phasegate[bot]")
			switch {
			case tt.malformed && !errors.Is(err, errMalformed):
				t.Fatalf("err %v, want a malformed payload", err)
			case tt.malformed:
			case err != nil || j != nil:
				t.Fatalf("job %+v, err %v: want it ignored", j, err)
			case !strings.Contains(string(why), "is not handled"):
				t.Fatalf("ignored %q, want \"event … is not handled\"", why)
			}
		})
	}
}
