package testutil

import "testing"

func TestMain(m *testing.M) { Exit(m.Run()) }

func TestSkipRaceExitSleep(t *testing.T) {
	tests := []struct {
		name      string
		code      int
		race      bool
		gorace    string
		coverMode string
		want      bool
	}{
		{"a passing run under -race", 0, true, "", "", true},
		{"a failing run keeps the race runtime's exit", 1, true, "", "", false},
		{"a run with races found exits 66 through os.Exit", 66, true, "", "", false},
		{"without -race there is no sleep to skip", 0, false, "", "", false},
		{"GORACE set: the race runtime's options apply", 0, true, "atexit_sleep_ms=1000", "", false},
		{"coverage is written by the exit hooks", 0, true, "", "atomic", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := skipRaceExitSleep(tt.code, tt.race, tt.gorace, tt.coverMode); got != tt.want {
				t.Errorf("skipRaceExitSleep(%d, %v, %q, %q) = %v, want %v", tt.code, tt.race, tt.gorace, tt.coverMode, got, tt.want)
			}
		})
	}
}
