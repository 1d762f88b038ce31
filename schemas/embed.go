// Package schemas holds the JSON Schema (draft 2020-12) of every artifact
// kind, one file per kind at <family>/<kind>.schema.json, and the schema of
// the configuration file (config/phasegate.schema.json), embedded into the
// binary. It has no logic.
package schemas

import "embed"

// FS holds every schema file.
//
//go:embed */*.schema.json
var FS embed.FS

// Version is the release these schemas belong to: every file's $id is
// https://raw.githubusercontent.com/phasegate/phasegate/<Version>/schemas/<path>,
// so an editor pointed at a release's schema and the phasegate of that
// release (in CI) read the same file, and a relative $ref resolves within
// the same release. scripts/schema-version.sh sets it (and every $id) before
// a release is tagged; the release workflow refuses a tag that differs.
const Version = "v0.1.0"

// BaseURL is where this release's schema files are published.
const BaseURL = "https://raw.githubusercontent.com/phasegate/phasegate/" + Version + "/schemas/"
