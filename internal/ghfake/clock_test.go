package ghfake

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
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

// TestJumpClockTimers: an AfterFunc fires on real time, or at once when a
// request with its method, path and query is Expired (the clock then
// reaches its deadline); a stopped one never fires.
func TestJumpClockTimers(t *testing.T) {
	req := func(method, target string) *http.Request { return httptest.NewRequest(method, target, nil) }
	tests := []struct {
		name        string
		expire      *http.Request
		stop        bool
		wantExpired bool
		wantFired   bool
	}{
		{name: "the same request expires it", expire: req("GET", "/repos/a/b?page=2"), wantExpired: true, wantFired: true},
		{name: "another query does not", expire: req("GET", "/repos/a/b?page=3")},
		{name: "another method does not", expire: req("POST", "/repos/a/b?page=2")},
		{name: "a stopped timer does not fire", expire: req("GET", "/repos/a/b?page=2"), stop: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := NewJumpClock()
			fired := make(chan struct{}, 1)
			stop := c.AfterFunc(req("GET", "http://127.0.0.1/repos/a/b?page=2"), time.Hour, func() { fired <- struct{}{} })
			if tt.stop && !stop() {
				t.Fatal("stop of a pending timer = false")
			}
			if got := c.Expire(tt.expire); got != tt.wantExpired {
				t.Fatalf("Expire = %v, want %v", got, tt.wantExpired)
			}
			if got := len(fired) == 1; got != tt.wantFired {
				t.Fatalf("fired = %v, want %v", got, tt.wantFired)
			}
			if tt.wantFired && (c.Now().Before(time.Now().Add(59*time.Minute)) || c.Expired() != 1 || stop()) {
				t.Fatalf("after Expire: now %s ahead, %d expired", time.Until(c.Now()), c.Expired())
			}
			stop()
		})
	}
	t.Run("real time fires it", func(t *testing.T) {
		c := NewJumpClock()
		fired := make(chan struct{})
		c.AfterFunc(req("GET", "/x"), time.Millisecond, func() { close(fired) })
		<-fired
		if c.Expire(req("GET", "/x")) {
			t.Fatal("a fired timer expired again")
		}
	})
}

// TestExpireHangs: a request drawn to hang first calls the hook; when it
// finds the client's timer the request hangs (here HangFor 0), else it is
// answered without a fault and does not count against MaxHangs.
func TestExpireHangs(t *testing.T) {
	for _, found := range []bool{true, false} {
		t.Run(fmt.Sprint("timer found ", found), func(t *testing.T) {
			s := newTestServer(t)
			var seen []string
			s.ExpireHangs(func(r *http.Request) bool { seen = append(seen, r.Method+" "+r.URL.Path); return found })
			s.SetFaults(Faults{Seed: 1, HangRate: 1, MaxHangs: 1})
			do(t, s, "GET", "/repos/acme/widgets", tok, "")
			do(t, s, "GET", "/repos/acme/widgets", tok, "")
			want := map[bool]int{true: 1, false: 0}[found]
			if got := countFault(s.Calls(), "hang"); got != want {
				t.Errorf("%d requests hung, want %d", got, want)
			}
			if wantSeen := map[bool]int{true: 1, false: 2}[found]; len(seen) != wantSeen {
				t.Errorf("hook saw %q, want %d requests", seen, wantSeen)
			}
		})
	}
}
