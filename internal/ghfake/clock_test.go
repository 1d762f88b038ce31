package ghfake

import (
	"context"
	"testing"
	"time"
)

func TestJumpClock(t *testing.T) {
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	tests := []struct {
		name      string
		ctx       context.Context
		sleeps    []time.Duration
		wantErr   bool
		wantAhead time.Duration
	}{
		{name: "no sleep follows the real clock", ctx: context.Background()},
		{name: "sleeps move it ahead at once", ctx: context.Background(), sleeps: []time.Duration{time.Hour, time.Minute, 0, -time.Second}, wantAhead: time.Hour + time.Minute},
		{name: "a done context does not move it", ctx: cancelled, sleeps: []time.Duration{time.Hour}, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := NewJumpClock()
			began := time.Now()
			for _, d := range tt.sleeps {
				if err := c.Sleep(tt.ctx, d); (err != nil) != tt.wantErr {
					t.Fatalf("Sleep(%s) = %v, want error %v", d, err, tt.wantErr)
				}
			}
			if time.Since(began) > time.Minute {
				t.Fatal("Sleep slept")
			}
			before := time.Now()
			now := c.Now()
			after := time.Now()
			if now.Before(before.Add(tt.wantAhead)) || now.After(after.Add(tt.wantAhead)) {
				t.Errorf("Now = %s, want between %s and %s", now, before.Add(tt.wantAhead), after.Add(tt.wantAhead))
			}
			if _, ahead := c.Skipped(); ahead != tt.wantAhead {
				t.Errorf("ahead %s, want %s", ahead, tt.wantAhead)
			}
		})
	}
}
