// Package outcome is the Phase Outcome model and its issue comments (design
// §5, §6 and §8): it parses an outcome from its decoded value, serialises it
// as canonical YAML with a content ID, renders the immutable outcome comment
// and the resolution comment, parses their hidden markers, and signs and
// verifies them.
//
// It is pure: no I/O, no GitHub, no printing, no clock. Its one state is
// a bounded cache of the outcome YAML VerifyOutcomeComment decoded, by ID
// (decoded.go), which hands out copies. Every string an
// agent wrote is untrusted and reaches a comment only through Inline (the
// summary) or Canonical (the fenced YAML), so that nothing an agent writes
// can mention anyone, reference another issue, inject HTML, break out of
// a table cell or the YAML fence, forge or end the marker, or start a line
// that reads as a command.
//
// The comment formats, the marker grammar (marker.go), the canonical YAML
// (canonical.go) and the signed message (sign.go) are a public interface:
// comments already posted must keep verifying, so any change to them is a
// new marker version.
package outcome
