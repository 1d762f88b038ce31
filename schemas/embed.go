// Package schemas holds the JSON Schema (draft 2020-12) of every artifact
// kind, one file per kind at <family>/<kind>.schema.json, embedded into the
// binary. It has no logic.
package schemas

import "embed"

// FS holds every schema file.
//
//go:embed */*.schema.json
var FS embed.FS
