// Package examples embeds the example repository, examples/demo, into the
// binary for `phasegate demo`: go:embed cannot reach a parent directory, so
// the package sits beside the files, which stay where the README and the
// tests name them. It has no logic.
package examples

import (
	"embed"
	"io/fs"
)

// files holds examples/demo, its hidden directories (.pace, .github, …)
// included.
//
//go:embed all:demo
var files embed.FS

// Demo is the example repository as an FS rooted at its top.
var Demo, _ = fs.Sub(files, "demo") // "demo" is a valid path: fs.Sub cannot fail
