package testutil

import (
	"os"
	"syscall"
	"testing"
)

// Exit ends a test binary with code, the result of its m.Run: every
// package's TestMain ends with it (archtest keeps it so).
//
// It differs from os.Exit in one case only: a run that passed under -race,
// with no GORACE in the environment and no coverage being written, ends at
// once instead of paying the race runtime's exit sleep. ThreadSanitizer's
// atexit_sleep_ms (1,000 ms unless GORACE says otherwise, golang/go#20364)
// waits at exit for goroutines still running to report a race; the testing
// package has by then already failed the run on any race seen during a test
// or outside one ("race detected outside of test execution"), so the sleep
// only watches goroutines that outlived every test. It cost every package a
// second: 27 of the suite's test binaries, a quarter of a minute on two
// cores. Set GORACE (even to "atexit_sleep_ms=1000") to keep the sleep.
func Exit(code int) {
	if skipRaceExitSleep(code, raceEnabled, os.Getenv("GORACE"), testing.CoverMode()) {
		syscall.Exit(0) // os.Exit(0) would run the race runtime's fini, and its sleep
	}
	os.Exit(code)
}

// skipRaceExitSleep reports whether Exit may leave without the race
// runtime's finalisation.
func skipRaceExitSleep(code int, race bool, gorace, coverMode string) bool {
	return code == 0 && race && gorace == "" && coverMode == ""
}
