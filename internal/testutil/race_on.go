//go:build race

package testutil

// raceEnabled says the binary was built with -race.
const raceEnabled = true
