//go:build !windows

package cli

import "os"

// enableVT: every other terminal understands ANSI sequences.
func enableVT(*os.File) bool { return true }
