package outcome

import (
	"errors"
	"fmt"
	"strings"
)

// ErrNotPhasegate is the error of a body that is not a phasegate comment of
// the kind asked for: no marker, a marker of another kind, or of a version
// this package does not know. The ledger ignores such a comment.
var ErrNotPhasegate = errors.New("not a phasegate comment")

// ErrTampered is the error of a body that is (or claims to be) a phasegate
// comment but is not exactly what phasegate posted: edited, forged, or, when
// a signing key is configured, unsigned or signed with another key. The
// ledger reports it as tampering. A *TamperError is ErrTampered.
var ErrTampered = errors.New("phasegate comment was edited")

// ErrUnsigned is the error of a comment that is otherwise intact but carries
// no signature while a signing key is configured. It is also ErrTampered:
// whoever can post as phasegate's identity without the key (any workflow
// holding the repository's GITHUB_TOKEN) must not be able to post a trusted
// outcome or resolution. It is distinct so that a deployment that has just
// introduced a key can tell its older, unsigned comments apart.
var ErrUnsigned = errors.New("phasegate comment is not signed")

// TamperError says why a phasegate comment failed verification.
type TamperError struct {
	Kind Kind
	// ID is the outcome's ID as the marker states it (for a resolution, the
	// resolved outcome's); "" when the marker is unreadable.
	ID string
	// Reason says what does not match, in a few words.
	Reason string
	// Unsigned reports that the comment is intact but unsigned while a key
	// is configured (errors.Is ErrUnsigned).
	Unsigned bool
}

func (e *TamperError) Error() string {
	return fmt.Sprintf("phasegate %s comment was edited or tampered with: %s", e.Kind, e.Reason)
}

// Is makes errors.Is(err, ErrTampered) true, and errors.Is(err,
// ErrUnsigned) for an unsigned comment.
func (e *TamperError) Is(target error) bool {
	return target == ErrTampered || (e.Unsigned && target == ErrUnsigned)
}

// Normalize is the form in which comment bodies are compared and signed:
// CRLF line breaks become LF (GitHub's web editor saves CRLF), spaces and
// tabs at the end of each line are dropped, and so are blank lines at the
// end. Nothing else is changed. Render's output is already normal.
func Normalize(body string) string {
	s := strings.ReplaceAll(body, "\r\n", "\n")
	if strings.Contains(s, " \n") || strings.Contains(s, "\t\n") {
		s = trimLines(s)
	}
	return strings.TrimRight(s, " \t\n")
}

// Verified is an outcome comment that verified.
type Verified struct {
	// Outcome is the outcome its YAML holds.
	Outcome *Outcome
	// Value is the decoded canonical YAML (the outcome's whole value).
	Value any
	// Canonical is the canonical YAML.
	Canonical []byte
	// ID is the outcome's ID (the SHA-256 of Canonical).
	ID string
	// Source, Commit and PR are the marker's provenance: the outcome file,
	// the commit that added it and the pull request of the run (0 if none).
	Source string
	Commit string
	PR     int
	// Signed reports whether the signature was checked and verified (a key
	// was given). Without a key the marker's sig is not checked.
	Signed bool
	// Actors are the accounts the marker records as having pushed or
	// authored the change; Prev is the previous phasegate comment (0: none).
	Actors []string
	Prev   int64
}

// VerifiedResolution is a resolution comment that verified.
type VerifiedResolution struct {
	Resolution
	// Signed reports whether the signature was checked and verified.
	Signed bool
}

// VerifyOutcomeComment checks that body is exactly an outcome comment as
// Render writes it and returns what it records. After Normalize, the last
// line must be a version 1 outcome marker; the fenced YAML must hash to the
// marker's id, be canonical and parse as an outcome; and the body must be
// byte for byte what Render produces from that YAML and the marker's fields.
// With a key, the marker's sig must be the HMAC of the marker and the body
// above it (an unsigned comment does not verify: ErrUnsigned, which is also
// ErrTampered); without a key the sig is not checked, whatever it holds, so
// that comments signed before a key was removed still read, with the trust
// that remains: the author and the hash.
//
// The error is ErrNotPhasegate (errors.Is) when body is not an outcome
// comment at all, and a *TamperError (errors.Is ErrTampered) when it is one,
// or claims to be one by its header or a broken marker, but does not
// verify. Call it only for comments whose author is phasegate's identity:
// the verdict on anyone else's comment means nothing (docs/security.md).
func VerifyOutcomeComment(body string, key []byte) (*Verified, error) {
	norm := Normalize(body)
	above, line := splitMarker(norm)
	mk, err := ParseMarker(line)
	if err != nil || mk.Kind != KindOutcome {
		return nil, classify(norm, line, KindOutcome, mk, err)
	}
	tampered := func(reason string) error {
		return &TamperError{Kind: KindOutcome, ID: mk.ID, Reason: reason}
	}
	canonical, ok := fencedYAML(above)
	if !ok {
		return nil, tampered("the YAML block is missing or broken")
	}
	if ID(canonical) != mk.ID {
		return nil, tampered("the YAML does not hash to the marker's id")
	}
	value, o, err := decodeCanonicalID(canonical, mk.ID)
	if err != nil {
		return nil, tampered("the YAML is not a canonical Phase Outcome")
	}
	if renderOutcomeAbove(o, canonical, mk) != above {
		return nil, tampered("the comment is not what phasegate rendered from its YAML")
	}
	if err := checkSig(key, mk, above); err != nil {
		return nil, &TamperError{Kind: KindOutcome, ID: mk.ID, Reason: err.Error(), Unsigned: errors.Is(err, errNoSig)}
	}
	return &Verified{
		Outcome: o, Value: value, Canonical: canonical, ID: mk.ID,
		Source: mk.Source, Commit: mk.Commit, PR: mk.PR, Signed: len(key) > 0,
		Actors: mk.ActorLogins(), Prev: mk.Prev,
	}, nil
}

// VerifyResolutionComment checks that body is exactly a resolution comment
// as RenderResolution writes it, under the same rules and with the same
// errors as VerifyOutcomeComment.
func VerifyResolutionComment(body string, key []byte) (*VerifiedResolution, error) {
	norm := Normalize(body)
	above, line := splitMarker(norm)
	mk, err := ParseMarker(line)
	if err != nil || mk.Kind != KindResolution {
		return nil, classify(norm, line, KindResolution, mk, err)
	}
	if renderResolutionAbove(mk) != above {
		return nil, &TamperError{Kind: KindResolution, ID: mk.Outcome, Reason: "the comment is not what phasegate rendered from its marker"}
	}
	if err := checkSig(key, mk, above); err != nil {
		return nil, &TamperError{Kind: KindResolution, ID: mk.Outcome, Reason: err.Error(), Unsigned: errors.Is(err, errNoSig)}
	}
	return &VerifiedResolution{Resolution: mk.Resolution, Signed: len(key) > 0}, nil
}

// VerifyReplyComment checks that body ends with a reply marker and, with a
// key, that its signature covers the marker and the text above it (an
// unsigned reply does not verify: without that, any workflow posting as
// phasegate's identity could silence a command by "answering" it).
// ErrNotPhasegate when body has no reply marker.
func VerifyReplyComment(body string, key []byte) (*Reply, error) {
	norm := Normalize(body)
	above, line := splitMarker(norm)
	mk, err := ParseMarker(line)
	if err != nil || mk.Kind != KindReply {
		if err == nil || !strings.Contains(line, "phasegate:"+string(KindReply)) {
			return nil, fmt.Errorf("%w: no reply marker on the last line", ErrNotPhasegate)
		}
		return nil, &TamperError{Kind: KindReply, Reason: "the marker line is malformed"}
	}
	if err := checkSig(key, mk, above); err != nil {
		return nil, &TamperError{Kind: KindReply, Reason: err.Error(), Unsigned: errors.Is(err, errNoSig)}
	}
	return &Reply{Command: mk.Command, Prev: mk.Prev, Signed: len(key) > 0}, nil
}

var errNoSig = errors.New("the comment is not signed, but a signing key is configured")

// checkSig checks the marker's signature when there is a key.
func checkSig(key []byte, mk Marker, above string) error {
	if len(key) == 0 {
		return nil
	}
	if mk.Sig == "" {
		return errNoSig
	}
	if !sigValid(key, mk, above) {
		return errors.New("the signature does not verify")
	}
	return nil
}

// splitMarker splits a normalised body into everything above its last line
// (including the line breaks before it) and the last line.
func splitMarker(norm string) (above, line string) {
	i := strings.LastIndexByte(norm, '\n')
	return norm[:i+1], norm[i+1:]
}

// classify is the error of a body whose last line is not a version 1 marker
// of kind k. A body that claims to be such a comment — its first line is the
// kind's version 1 header, or its last line names the kind's marker — was
// edited; a well-formed marker of another version without the version 1
// header is a newer phasegate's comment; any other body is not phasegate's.
func classify(norm, line string, k Kind, mk Marker, err error) error {
	if err == nil {
		return fmt.Errorf("%w: a %s comment, not a %s comment", ErrNotPhasegate, mk.Kind, k)
	}
	header := outcomeHeader
	if k == KindResolution {
		header = resolutionHeader
	}
	v1Header := strings.HasPrefix(norm, header)
	if errors.Is(err, ErrUnknownVersion) && !v1Header {
		// A comment of another version, left to the phasegate that wrote it.
		return fmt.Errorf("%w: %v", ErrNotPhasegate, err)
	}
	if v1Header || strings.Contains(line, "phasegate:"+string(k)) {
		return &TamperError{Kind: k, Reason: "the marker line is missing or malformed"}
	}
	return fmt.Errorf("%w: no %s marker on the last line", ErrNotPhasegate, k)
}

// fencedYAML is the content of the first ```yaml block above the marker:
// the lines between an opening line of three or more backticks followed by
// "yaml" and the next line of exactly as many backticks.
func fencedYAML(above string) ([]byte, bool) {
	rest := above
	for rest != "" {
		line, after, _ := strings.Cut(rest, "\n")
		if n := len(line) - len("yaml"); n >= 3 && strings.HasSuffix(line, "yaml") && strings.Trim(line[:n], "`") == "" {
			closing := "\n" + line[:n] + "\n"
			if strings.HasPrefix(after, line[:n]+"\n") {
				return []byte{}, true
			}
			i := strings.Index(after, closing)
			// Equivalent mutant (< → <=): a block of one empty line is no canonical outcome, so the comment is tampering either way.
			if i < 0 {
				return nil, false
			}
			return []byte(after[:i+1]), true
		}
		rest = after
	}
	return nil, false
}
