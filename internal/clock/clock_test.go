package clock

import (
	"context"
	"errors"
	"testing"
	"time"
)

func TestSleep(t *testing.T) {
	tests := []struct {
		name    string
		d       time.Duration
		cancel  bool
		wantErr error
	}{
		{name: "zero returns at once", d: 0},
		{name: "a short wait ends", d: time.Millisecond},
		{name: "a cancelled context ends a long wait", d: time.Hour, cancel: true, wantErr: context.Canceled},
		{name: "a cancelled context with no wait", d: 0, cancel: true, wantErr: context.Canceled},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			if tc.cancel {
				cancel()
			} else {
				defer cancel()
			}
			if err := Sleep(ctx, tc.d); !errors.Is(err, tc.wantErr) {
				t.Errorf("Sleep = %v, want %v", err, tc.wantErr)
			}
		})
	}
}
