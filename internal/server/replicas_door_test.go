//go:build integration

package server

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// TestInstallationReplayAcrossReplicas: with Redis, the per-installation
// limit is shared: the captured body re-sent to another replica with a
// fresh delivery id starts no second reconcile.
func TestInstallationReplayAcrossReplicas(t *testing.T) {
	t.Parallel() // real time (processes, Redis, leases) overlaps the other tests' CPU
	_, _, env := replicaWorld(t, "0")
	a, b := env.start(t, "a"), env.start(t, "b")
	captured := installationEvent("installation", "created", "acme/shop")
	if code, body := a.send("installation", "install-1", captured); code != http.StatusAccepted {
		t.Fatalf("the first delivery: %d %q", code, body)
	}
	for i, r := range []*replica{b, a, b} {
		code, body := r.send("installation", fmt.Sprintf("replay-%d", i), captured)
		if code != http.StatusOK || !strings.Contains(body, "reconciled less than") {
			t.Fatalf("replay %d on %s: %d %q, want 200 not acted on", i, r.name, code, body)
		}
	}
	until(t, "the replicas handled what they accepted", func() bool { return a.idle() && b.idle() })
	if got := a.metric("phasegate_handler_duration_seconds_count", `event="installation"`); got != 1 {
		t.Fatalf("replica a handled %v installation deliveries, want 1", got)
	}
	if got := a.metric("phasegate_webhook_deliveries_total", `result="accepted"`) + b.metric("phasegate_webhook_deliveries_total", `result="accepted"`); got != 1 {
		t.Fatalf("%v deliveries accepted across the replicas, want 1", got)
	}
	if got := b.metric("phasegate_webhook_deliveries_total", `result="throttled"`); got != 2 {
		t.Fatalf("replica b throttled %v, want 2", got)
	}
}
