package main

import (
	"os"
	"testing"
	"time"

	"github.com/phasegate/phasegate/bench/serve"
)

func TestStatTicks(t *testing.T) {
	tests := []struct {
		name, stat string
		want       int64
		wantErr    bool
	}{
		{"plain", "4242 (peer) S 1 4242 4242 0 -1 4194560 1200 0 0 0 150 25 0 0 20 0 9 0 100 1000 200", 175, false},
		{"name with spaces and parens", "7 (a (b) c) R 1 7 7 0 -1 0 0 0 0 0 3 4 0 0 20 0 1 0 1 1 1", 7, false},
		{"no name", "7 a R 1", 0, true},
		{"too short", "7 (a) R 1 2 3", 0, true},
		{"not a number", "7 (a) R 1 7 7 0 -1 0 0 0 0 0 x 4 0", 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := statTicks(tt.stat)
			if (err != nil) != tt.wantErr || got != tt.want {
				t.Errorf("statTicks = %d, %v; want %d, error %v", got, err, tt.want, tt.wantErr)
			}
		})
	}
}

func TestStatTicksOfThisProcess(t *testing.T) {
	b, err := os.ReadFile("/proc/self/stat")
	if err != nil {
		t.Skip("no /proc:", err)
	}
	if _, err := statTicks(string(b)); err != nil {
		t.Fatal(err)
	}
}

func TestMedian(t *testing.T) {
	at := func(d ...time.Duration) []measurement {
		var ms []measurement
		for _, c := range d {
			ms = append(ms, measurement{res: serve.Result{}, cpu: c})
		}
		return ms
	}
	cpu := func(m measurement) float64 { return float64(m.cpu) }
	tests := []struct {
		name string
		in   []measurement
		want float64
	}{
		{"none", nil, 0},
		{"odd", at(3, 1, 2), 2},
		{"even", at(4, 1, 3, 2), 2.5},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := median(tt.in, cpu); got != tt.want {
				t.Errorf("median = %v, want %v", got, tt.want)
			}
		})
	}
}
