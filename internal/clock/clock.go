// Package clock holds the context-aware sleep that the notify sender's
// backoff and `phasegate decisions --wait` share (internal/ghclient keeps
// its own: it imports no phasegate package but internal/retry). It is pure: it waits, nothing
// else.
package clock

import (
	"context"
	"time"
)

// Sleep waits for d or until ctx ends, whichever comes first, and returns
// ctx's error in the second case. A d of zero or less returns at once.
func Sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
