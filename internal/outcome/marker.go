package outcome

import (
	"cmp"
	"errors"
	"fmt"
	"math"
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

	// Resolution marker fields.
	Outcome  string // the resolved outcome's ID
	Decision string // e.g. D-001
	Option   string // e.g. approve
	By       string // the login of the person who resolved it
	Command  int64  // the id of the comment holding the command
	Captured int    // the issue a capture opened; 0 when absent
	Auth     string // why By was allowed: a permission or "listed"; "" when absent
	Head     string // the commit the resolution was given on; "" when absent

	// Outcome marker: the accounts GitHub attested for the change.
	Actors string // comma-separated logins; "" when absent

	// Every kind: the previous phasegate comment on the thread; 0 when absent.
	Prev int64

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
	switch Kind(parts[0]) {
	case KindOutcome, KindResolution, KindReply:
		m.Kind = Kind(parts[0])
	default:
		return m, fmt.Errorf("unknown marker kind")
	}
	v := parts[1]
	if len(v) < 2 || v[0] != 'v' || !isNum(v[1:]) {
		return m, fmt.Errorf("marker version is not v<number>")
	}
	if v != "v1" {
		return m, fmt.Errorf("%w %s", ErrUnknownVersion, v)
	}
	m.Version = 1
	keys := outcomeKeys
	switch m.Kind {
	case KindResolution:
		keys = resolutionKeys
	case KindReply:
		keys = replyKeys
	}
	fields := parts[2:]
	k := 0
	for _, f := range fields {
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

type markerKey struct {
	name     string
	optional bool
	set      func(m *Marker, val string) error
}

var outcomeKeys = []markerKey{
	{name: "id", set: func(m *Marker, v string) error { return hex64(&m.ID, v) }},
	{name: "source", set: func(m *Marker, v string) error {
		i := strings.LastIndexByte(v, '@')
		if i < 0 {
			return fmt.Errorf("not path@commit")
		}
		p, err := unescapePath(v[:i])
		if err != nil {
			return err
		}
		if !isCommit(v[i+1:]) {
			return fmt.Errorf("commit is not 7 to 64 lower-case hex digits")
		}
		m.Source, m.Commit = p, v[i+1:]
		return nil
	}},
	{name: "pr", set: func(m *Marker, v string) error {
		if v == "-" {
			return nil
		}
		n, err := issueNumber(v)
		m.PR = n
		return err
	}},
	{name: "actors", optional: true, set: func(m *Marker, v string) error {
		if !ActorList(v) {
			return fmt.Errorf("not a list of 1 to 20 GitHub logins")
		}
		m.Actors = v
		return nil
	}},
	prevKey,
	{name: "sig", set: setSig},
}

var prevKey = markerKey{name: "prev", optional: true, set: func(m *Marker, v string) error { return commentID(&m.Prev, v) }}

var replyKeys = []markerKey{
	{name: "command", set: func(m *Marker, v string) error { return commentID(&m.Command, v) }},
	prevKey,
	{name: "sig", set: setSig},
}

// Auths are the values of a resolution marker's auth field.
var Auths = []string{"admin", "maintain", "write", "triage", "read", "listed"}

// MaxActors is the most accounts an outcome marker records.
const MaxActors = 20

// ActorList reports whether v is a marker's actors value: 1 to 20 actors
// separated by commas.
func ActorList(v string) bool {
	parts := strings.Split(v, ",")
	if v == "" || len(parts) > MaxActors {
		return false
	}
	for _, p := range parts {
		if !Actor(p) {
			return false
		}
	}
	return true
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

var resolutionKeys = []markerKey{
	{name: "outcome", set: func(m *Marker, v string) error { return hex64(&m.Outcome, v) }},
	{name: "decision", set: func(m *Marker, v string) error { return token(&m.Decision, v) }},
	{name: "option", set: func(m *Marker, v string) error { return token(&m.Option, v) }},
	{name: "by", set: func(m *Marker, v string) error {
		if !Login(v) {
			return fmt.Errorf("not a GitHub login")
		}
		m.By = v
		return nil
	}},
	{name: "command", set: func(m *Marker, v string) error { return commentID(&m.Command, v) }},
	{name: "captured", optional: true, set: func(m *Marker, v string) error {
		n, err := issueNumber(v)
		m.Captured = n
		return err
	}},
	{name: "auth", optional: true, set: func(m *Marker, v string) error {
		for _, a := range Auths {
			if v == a {
				m.Auth = v
				return nil
			}
		}
		return fmt.Errorf("not a permission or \"listed\"")
	}},
	{name: "head", optional: true, set: func(m *Marker, v string) error {
		if !isCommit(v) {
			return fmt.Errorf("commit is not 7 to 64 lower-case hex digits")
		}
		m.Head = v
		return nil
	}},
	prevKey,
	{name: "sig", set: setSig},
}

func setSig(m *Marker, v string) error {
	if v == "-" {
		return nil
	}
	return hex64(&m.Sig, v)
}

func hex64(dst *string, v string) error {
	if len(v) != 64 || !isLowerHex(v) {
		return fmt.Errorf("not 64 lower-case hex digits")
	}
	*dst = v
	return nil
}

func token(dst *string, v string) error {
	if !Token(v) {
		return fmt.Errorf("not a token")
	}
	*dst = v
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

func isNum(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !isDigit(s[i]) {
			return false
		}
	}
	return true
}

func isLowerHex(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !isDigit(c) && !(c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

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
	}
	for _, r := range p {
		if r < 0x20 || r == 0x7f {
			return fmt.Errorf("source path has a control character")
		}
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

// field is one key=value of a marker, in marker order.
type field struct{ key, val string }

// fields are the marker's fields other than sig, in marker order.
func (m Marker) fields() []field {
	switch m.Kind {
	case KindOutcome:
		f := []field{
			{"id", m.ID},
			{"source", escapePath(m.Source) + "@" + m.Commit},
			{"pr", numOrDash(int64(m.PR))},
		}
		if m.Actors != "" {
			f = append(f, field{"actors", m.Actors})
		}
		return m.withPrev(f)
	case KindResolution:
		f := []field{
			{"outcome", m.Outcome},
			{"decision", m.Decision},
			{"option", m.Option},
			{"by", m.By},
			{"command", strconv.FormatInt(m.Command, 10)},
		}
		if m.Captured > 0 {
			f = append(f, field{"captured", strconv.Itoa(m.Captured)})
		}
		if m.Auth != "" {
			f = append(f, field{"auth", m.Auth})
		}
		if m.Head != "" {
			f = append(f, field{"head", m.Head})
		}
		return m.withPrev(f)
	case KindReply:
		return m.withPrev([]field{{"command", strconv.FormatInt(m.Command, 10)}})
	}
	return nil
}

func (m Marker) withPrev(f []field) []field {
	if m.Prev > 0 {
		f = append(f, field{"prev", strconv.FormatInt(m.Prev, 10)})
	}
	return f
}

func numOrDash(n int64) string {
	if n <= 0 {
		return "-"
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
	for _, f := range m.fields() {
		b.WriteString(" " + f.key + "=" + f.val)
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
