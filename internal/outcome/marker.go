package outcome

import (
	"cmp"
	"errors"
	"fmt"
	"iter"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Marker grammar (version 1). A marker is one line, the last non-blank line
// of a comment body, with single spaces between its parts and its fields in
// this order:
//
//	outcome-marker    = "<!-- phasegate:outcome v1"
//	                    " id=" HEX64 " source=" PATH "@" COMMIT
//	                    " pr=" ( NUM / "-" ) [ " actors=" ACTOR *19( "," ACTOR ) ]
//	                    [ " prev=" NUM ] " sig=" ( HEX64 / "-" ) " -->"
//	resolution-marker = "<!-- phasegate:resolution v1"
//	                    " outcome=" HEX64 " decision=" TOKEN " option=" TOKEN
//	                    " by=" LOGIN " command=" NUM [ " captured=" NUM ]
//	                    [ " auth=" AUTH ] [ " head=" COMMIT ] [ " prev=" NUM ]
//	                    " sig=" ( HEX64 / "-" ) " -->"
//	reply-marker      = "<!-- phasegate:reply v1" " command=" NUM
//	                    [ " prev=" NUM ] " sig=" ( HEX64 / "-" ) " -->"
//	AUTH   = "admin" / "maintain" / "write" / "triage" / "read" / "listed"
//	ACTOR  = LOGIN [ "[bot]" ]
//	HEX64  = 64 of [0-9a-f]                 ; lower-case hex
//	COMMIT = 7 to 64 of [0-9a-f]
//	NUM    = [1-9] 0*18 [0-9]               ; a positive decimal
//	TOKEN  = [A-Za-z0-9] 0*63 [A-Za-z0-9._-]  ; see Token
//	LOGIN  = [A-Za-z0-9] 0*99 [A-Za-z0-9_-]   ; a GitHub login (EMU logins have _)
//	PATH   = 1* ( [A-Za-z0-9._~/-] / "%" HEXUP HEXUP )
//
// PATH is the outcome file's path, percent-encoded: every byte outside
// [A-Za-z0-9._~/-] is written %XX with upper-case hex, and nothing else is,
// so each path has exactly one spelling (and "@" in a path is %40: the
// last "@" of source starts the commit). pr is "-" when the run had no pull
// request; sig is "-" when no signing key was configured. captured is the
// issue opened by a capture resolution, absent otherwise.
//
// The trust fields (docs/security.md): actors are the accounts GitHub
// attested as having pushed or authored the change that carried the outcome
// (the push's sender and pusher, the pull request's author, and a commit's
// author and committer only when GitHub verified its signature): none of
// them may resolve its decisions. auth records why the resolver was allowed
// (their repository permission at the time, or "listed" in the config's
// resolvers). head is the commit the resolution was given on: the head of
// the pull request that carried the outcome when the command was answered
// (or the outcome's own commit without one); an approval covers the work as
// it was there, and a push that changes what the decision covers makes it
// pending again (docs/security.md). prev is the id of the phasegate comment that was newest on the
// thread when this one was posted, so that a deleted phasegate comment shows
// as a gap in the chain; it is absent on the first.
//
// Unknown keys, a missing or repeated key, another order, a value outside
// its charset, extra spaces and lines over 2048 bytes are errors. A marker
// with another version ("v2") is ErrUnknownVersion: ParseMarkers ignores it,
// so an older phasegate leaves newer comments alone.

// Kind is the kind of a phasegate comment.
type Kind string

// The kinds of phasegate comments.
const (
	KindOutcome    Kind = "outcome"
	KindResolution Kind = "resolution"
	KindReply      Kind = "reply"
)

// Version is the marker version this package writes and verifies.
const Version = 1

const (
	markerOpen  = "<!-- phasegate:"
	markerClose = " -->"
	maxMarker   = 2048
)

// Marker is a parsed marker line.
type Marker struct {
	Kind    Kind
	Version int

	// Outcome marker fields.
	ID     string // sha256 hex of the canonical YAML
	Source string // the outcome file's path (decoded)
	Commit string // the commit that added it
	PR     int    // the pull request of the run; 0 for "-"
	Actors string // the accounts GitHub attested for the change, comma-separated; "" when absent

	// Resolution marker fields (Captured, Auth and Head "" or 0 when
	// absent); Command is also a reply marker's, and Prev every kind's (0
	// when absent).
	Resolution

	// Sig is the hex HMAC-SHA256 of the marker; "" for "-".
	Sig string
}

// ErrUnknownVersion is the error of a marker of a version this package does
// not know.
var ErrUnknownVersion = errors.New("unknown marker version")

// ParseMarkers returns the phasegate marker of a comment body: the last
// non-blank line (after CRLF → LF), when it is a well-formed version 1
// outcome or resolution marker. A marker line anywhere else does not count:
// phasegate writes its marker last, so text after it means the comment is
// not (or no longer) phasegate's, and a marker-looking line quoted earlier in
// a body cannot be mistaken for one. The result therefore has at most one
// element; it is a slice so that a caller ranges over what was found.
func ParseMarkers(body string) []Marker {
	line := lastLine(body)
	if line == "" {
		return nil
	}
	m, err := ParseMarker(line)
	if err != nil {
		return nil
	}
	return []Marker{m}
}

// lastLine is the last non-blank line of body, without trailing white space.
func lastLine(body string) string {
	s := strings.TrimRight(body, " \t\r\n")
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		s = s[i+1:]
	}
	return strings.TrimRight(s, " \t\r")
}

// ParseMarker parses one marker line (without its line break) by the strict
// grammar above.
func ParseMarker(line string) (Marker, error) {
	var m Marker
	if len(line) > maxMarker {
		return m, fmt.Errorf("marker is longer than %d bytes", maxMarker)
	}
	// Equivalent mutant (+ → - in the length guard): no line shorter than open+close has both (":" ends one, ">" the other).
	if !strings.HasPrefix(line, markerOpen) || !strings.HasSuffix(line, markerClose) || len(line) < len(markerOpen)+len(markerClose) {
		return m, fmt.Errorf("not a phasegate marker")
	}
	parts := strings.Split(line[len(markerOpen):len(line)-len(markerClose)], " ")
	if len(parts) < 2 {
		return m, fmt.Errorf("marker has no version")
	}
	keys, ok := markerKeys[Kind(parts[0])]
	if !ok {
		return m, fmt.Errorf("unknown marker kind")
	}
	m.Kind = Kind(parts[0])
	v := parts[1]
	if len(v) < 2 || v[0] != 'v' || !isNum(v[1:]) {
		return m, fmt.Errorf("marker version is not v<number>")
	}
	if v != "v1" {
		return m, fmt.Errorf("%w %s", ErrUnknownVersion, v)
	}
	m.Version = 1
	k := 0
	for _, f := range parts[2:] {
		key, val, ok := strings.Cut(f, "=")
		if !ok || key == "" {
			return m, fmt.Errorf("marker field is not key=value")
		}
		for k < len(keys) && keys[k].name != key && keys[k].optional {
			k++
		}
		if k == len(keys) || keys[k].name != key {
			return m, fmt.Errorf("unexpected marker key %q", truncateText(key))
		}
		if err := keys[k].set(&m, val); err != nil {
			return m, fmt.Errorf("marker %s: %w", key, err)
		}
		k++
	}
	for ; k < len(keys); k++ {
		if !keys[k].optional {
			return m, fmt.Errorf("marker has no %s", keys[k].name)
		}
	}
	return m, nil
}

// markerKey is one key of a marker's grammar, for every kind: get spells
// the field as the marker writes it ("" leaves an optional key out), set
// reads it. ParseMarker, String and the signed message all go through it.
type markerKey struct {
	name     string
	optional bool
	get      func(m *Marker) string
	set      func(m *Marker, val string) error
}

// markerKeys are the keys of each kind, in marker order.
var markerKeys = map[Kind][]markerKey{
	KindOutcome: {
		textKey("id", false, func(m *Marker) *string { return &m.ID }, isHex64, errHex64),
		{name: "source", get: func(m *Marker) string { return escapePath(m.Source) + "@" + m.Commit }, set: setSource},
		{name: "pr", get: func(m *Marker) string { return cmp.Or(positive(int64(m.PR)), "-") }, set: func(m *Marker, v string) error {
			if v == "-" {
				return nil
			}
			n, err := issueNumber(v)
			m.PR = n
			return err
		}},
		textKey("actors", true, func(m *Marker) *string { return &m.Actors }, ActorList, "not a list of 1 to 20 GitHub logins"),
		prevKey, sigKey,
	},
	KindResolution: {
		textKey("outcome", false, func(m *Marker) *string { return &m.Outcome }, isHex64, errHex64),
		textKey("decision", false, func(m *Marker) *string { return &m.Decision }, Token, "not a token"),
		textKey("option", false, func(m *Marker) *string { return &m.Option }, Token, "not a token"),
		textKey("by", false, func(m *Marker) *string { return &m.By }, Login, "not a GitHub login"),
		commandKey,
		{name: "captured", optional: true, get: func(m *Marker) string { return positive(int64(m.Captured)) }, set: func(m *Marker, v string) error {
			n, err := issueNumber(v)
			m.Captured = n
			return err
		}},
		textKey("auth", true, func(m *Marker) *string { return &m.Auth }, func(v string) bool { return slices.Contains(Auths, v) }, `not a permission or "listed"`),
		textKey("head", true, func(m *Marker) *string { return &m.Head }, isCommit, errCommit),
		prevKey, sigKey,
	},
	KindReply: {commandKey, prevKey, sigKey},
}

var (
	commandKey = markerKey{name: "command", get: func(m *Marker) string { return strconv.FormatInt(m.Command, 10) },
		set: func(m *Marker, v string) error { return commentID(&m.Command, v) }}
	prevKey = markerKey{name: "prev", optional: true, get: func(m *Marker) string { return positive(m.Prev) },
		set: func(m *Marker, v string) error { return commentID(&m.Prev, v) }}
	// sig is written by String and left out of the signed message (fields).
	sigKey = markerKey{name: "sig", set: func(m *Marker, v string) error {
		if v == "-" {
			return nil
		}
		if !isHex64(v) {
			return errors.New(errHex64)
		}
		m.Sig = v
		return nil
	}}
)

const (
	errHex64  = "not 64 lower-case hex digits"
	errCommit = "commit is not 7 to 64 lower-case hex digits"
)

// textKey is a key whose value is the string field at, as written, when ok
// accepts it; want says what it must be.
func textKey(name string, optional bool, at func(*Marker) *string, ok func(string) bool, want string) markerKey {
	return markerKey{name: name, optional: optional, get: func(m *Marker) string { return *at(m) },
		set: func(m *Marker, v string) error {
			if !ok(v) {
				return errors.New(want)
			}
			*at(m) = v
			return nil
		}}
}

func setSource(m *Marker, v string) error {
	i := strings.LastIndexByte(v, '@')
	if i < 0 {
		return fmt.Errorf("not path@commit")
	}
	p, err := unescapePath(v[:i])
	if err != nil {
		return err
	}
	if !isCommit(v[i+1:]) {
		return errors.New(errCommit)
	}
	m.Source, m.Commit = p, v[i+1:]
	return nil
}

// Auths are the values of a resolution marker's auth field.
var Auths = []string{"admin", "maintain", "write", "triage", "read", "listed"}

// MaxActors is the most accounts an outcome marker records.
const MaxActors = 20

// ActorList reports whether v is a marker's actors value: 1 to 20 actors
// separated by commas.
func ActorList(v string) bool {
	parts := strings.Split(v, ",")
	return v != "" && len(parts) <= MaxActors && !slices.ContainsFunc(parts, func(p string) bool { return !Actor(p) })
}

// Actor reports whether s is a GitHub login or a bot's login ("name[bot]").
func Actor(s string) bool {
	return Login(s) || (strings.HasSuffix(s, "[bot]") && Login(strings.TrimSuffix(s, "[bot]")))
}

// ActorLogins splits a marker's actors value.
func (m Marker) ActorLogins() []string {
	if m.Actors == "" {
		return nil
	}
	return strings.Split(m.Actors, ",")
}

func commentID(dst *int64, v string) error {
	if !isNum(v) || len(v) > 19 || v[0] == '0' {
		return fmt.Errorf("not a comment id")
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return fmt.Errorf("not a comment id")
	}
	*dst = n
	return nil
}

// issueNumber parses an issue or pull request number.
func issueNumber(v string) (int, error) {
	if !isNum(v) || v[0] == '0' || len(v) > 10 {
		return 0, fmt.Errorf("not a positive number")
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n > math.MaxInt32 {
		return 0, fmt.Errorf("not a positive number")
	}
	return int(n), nil
}

func isNum(s string) bool { return s != "" && strings.Trim(s, "0123456789") == "" }

func isHex64(s string) bool { return len(s) == 64 && isLowerHex(s) }

func isLowerHex(s string) bool { return strings.Trim(s, "0123456789abcdef") == "" }

func isCommit(s string) bool { return len(s) >= 7 && len(s) <= 64 && isLowerHex(s) }

// Login reports whether s is a GitHub login as the marker grammar accepts
// it: an ASCII letter or digit, then up to 99 letters, digits, '-' or '_'.
func Login(s string) bool { return word(s, 100, "-_") }

// word reports whether s is 1 to max ASCII letters, digits and bytes of
// punct, starting with a letter or digit (Token, Login).
func word(s string, max int, punct string) bool {
	if len(s) == 0 || len(s) > max {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case i > 0 && strings.IndexByte(punct, c) >= 0:
		default:
			return false
		}
	}
	return true
}

// pathSafe reports whether byte c stands for itself in a marker path.
func pathSafe(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("._~/-", c) >= 0
}

// escapePath percent-encodes p for the marker.
func escapePath(p string) string {
	const hexUp = "0123456789ABCDEF"
	var b strings.Builder
	for i := 0; i < len(p); i++ {
		c := p[i]
		if pathSafe(c) {
			b.WriteByte(c)
			continue
		}
		b.WriteByte('%')
		b.WriteByte(hexUp[c>>4])
		b.WriteByte(hexUp[c&15])
	}
	return b.String()
}

// unescapePath decodes a marker path, accepting only the one spelling
// escapePath writes.
func unescapePath(v string) (string, error) {
	if v == "" {
		return "", fmt.Errorf("path is empty")
	}
	var b strings.Builder
	for i := 0; i < len(v); i++ {
		c := v[i]
		switch {
		case pathSafe(c):
			b.WriteByte(c)
		case c == '%' && i+2 < len(v) && upperHex(v[i+1]) && upperHex(v[i+2]):
			d := unhex(v[i+1])<<4 | unhex(v[i+2])
			if pathSafe(d) {
				return "", fmt.Errorf("path has a needless escape")
			}
			b.WriteByte(d)
			i += 2
		default:
			return "", fmt.Errorf("path is not percent-encoded")
		}
	}
	p := b.String()
	if err := checkSourcePath(p); err != nil {
		return "", err
	}
	return p, nil
}

// checkSourcePath says whether p can be a marker's source path.
func checkSourcePath(p string) error {
	switch {
	case p == "":
		return fmt.Errorf("source path is empty")
	case len(p) > 1024:
		return fmt.Errorf("source path is longer than 1024 bytes")
	case !utf8.ValidString(p):
		return fmt.Errorf("source path is not UTF-8")
	case strings.ContainsFunc(p, func(r rune) bool { return r < 0x20 || r == 0x7f }):
		return fmt.Errorf("source path has a control character")
	}
	return nil
}

func upperHex(c byte) bool { return isDigit(c) || c >= 'A' && c <= 'F' }

func unhex(c byte) byte {
	if isDigit(c) {
		return c - '0'
	}
	return c - 'A' + 10
}

// fields are the marker's fields other than sig, in marker order, spelled
// as in the marker.
func (m Marker) fields() iter.Seq2[string, string] {
	return func(yield func(key, val string) bool) {
		for _, k := range markerKeys[m.Kind] {
			if k.name == "sig" {
				continue
			}
			if v := k.get(&m); (v != "" || !k.optional) && !yield(k.name, v) {
				return
			}
		}
	}
}

// positive spells n, or "" when it is not positive (an absent field).
func positive(n int64) string {
	if n <= 0 {
		return ""
	}
	return strconv.FormatInt(n, 10)
}

// String is the marker line (without a line break). For a marker that
// ParseMarker returned, it is the line that was parsed.
func (m Marker) String() string {
	var b strings.Builder
	b.WriteString(markerOpen)
	b.WriteString(string(m.Kind))
	b.WriteString(" v")
	b.WriteString(strconv.Itoa(m.Version))
	for key, val := range m.fields() {
		b.WriteString(" " + key + "=" + val)
	}
	b.WriteString(" sig=" + cmp.Or(m.Sig, "-"))
	b.WriteString(markerClose)
	return b.String()
}

// validate checks that the marker's fields are within the grammar, so that
// String writes a line ParseMarker reads back.
func (m Marker) validate() error {
	line := m.String()
	back, err := ParseMarker(line)
	if err != nil {
		return err
	}
	if back != m {
		return fmt.Errorf("marker does not read back as written")
	}
	return nil
}
