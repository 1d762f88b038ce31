package server

import (
	"reflect"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
	"unsafe"
)

// The acknowledgement of an issue_comment delivery reads a few fields of a
// body that is mostly the comment's text (up to 65,536 characters, often
// 20 KB and more). encoding/json scans such a body twice (checkValid, then
// the decode) a byte at a time and unescapes every string, and was most of
// the acknowledgement's CPU. decodeCommentPayload fills the same payload in
// one pass: it validates the whole body as encoding/json does, skips what
// payload does not hold, and unescapes only the strings it keeps.
//
// It must agree with json.Unmarshal exactly (FuzzDecodeCommentPayload,
// TestDecodeCommentPayloadExamples): whenever it is not sure it would — a
// value of another type than the field's, a null where a field is not a
// pointer, a key given twice, a key that matches a field only
// case-insensitively (encoding/json folds case), a field of payload it does
// not fill, a body it finds invalid — it says so and the caller decodes
// with encoding/json, whose answer (a payload or a malformed-payload error)
// stands. A body it is unsure of is never routed by a guess.

// maxJSONDepth is encoding/json's nesting limit: deeper is invalid.
const maxJSONDepth = 10000

// decodePayload decodes a verified body: an issue_comment's in one pass
// when decodeCommentPayload is sure of it, else with encoding/json.
func decodePayload(event string, body []byte) (*payload, error) {
	if event == "issue_comment" {
		if p, ok := decodeCommentPayload(body); ok {
			return p, nil
		}
	}
	p := new(payload)
	if err := jsonUnmarshal(body, p); err != nil {
		return nil, err
	}
	return p, nil
}

// decodeCommentPayload decodes an issue_comment body as json.Unmarshal
// into a payload would, or reports that it is not sure it would (false,
// body untouched). When sure, it has unescaped the comment's text in place:
// the strings of the payload share the memory of body, which the caller
// must neither read as JSON nor change afterwards.
func decodeCommentPayload(body []byte) (*payload, bool) {
	if len(body) == 0 {
		return nil, false
	}
	// A view of body: nothing writes body until it is decoded, and then
	// only the comment's text, which no other string of p shares.
	d := jdec{s: unsafe.String(unsafe.SliceData(body), len(body)), text: -1}
	p := new(payload)
	d.ws()
	if d.peek() != '{' || !d.fields(topFields, payloadNames, func(i int) bool { return d.topField(p, i) }) {
		return nil, false
	}
	if d.ws(); d.i != len(d.s) {
		return nil, false
	}
	if d.text >= 0 {
		p.Comment.Body = d.commentText(body)
	}
	return p, true
}

// commentText is the comment's text, unescaped where it lies in body (the
// text only shrinks: an escape is longer than what it stands for), so a
// 20 KB comment costs no second 20 KB. Text that is not UTF-8 (each bad
// byte grows into U+FFFD) is copied instead.
func (d *jdec) commentText(body []byte) string {
	raw := d.s[d.text : d.text+d.textLen]
	if !d.textEsc || !utf8.ValidString(raw) {
		return unquote(raw, d.textEsc)
	}
	w, r, end := d.text, d.text, d.text+d.textLen
	for r < end {
		i := strings.IndexByte(d.s[r:end], '\\')
		if i < 0 {
			i = end - r
		}
		if w != r {
			copy(body[w:], body[r:r+i])
		}
		w, r = w+i, r+i
		if r == end {
			break
		}
		var b [utf8.UTFMax]byte
		n, size := escapeAt(b[:], d.s[r:end])
		w += copy(body[w:], b[:n])
		r += size
	}
	return unsafe.String(&body[d.text], w-d.text)
}

// The members of each object decodeCommentPayload fills, by index, and
// the JSON names of each whole type (a key folding to one of these that
// is not filled makes it unsure).
var (
	topFields          = []string{"action", "installation", "repository", "sender", "issue", "comment"}
	installationFields = []string{"id", "account"}
	repositoryFields   = []string{"name", "full_name", "owner", "html_url"}
	userFields         = []string{"login", "type"}
	issueFields        = []string{"number", "labels"}
	labelFields        = []string{"name"}
	commentFields      = []string{"id", "body", "user", "html_url", "updated_at"}

	payloadNames      = jsonNames(payload{})
	installationNames = jsonNames(installationJSON{})
	repositoryNames   = jsonNames(repositoryJSON{})
	userNames         = jsonNames(user{})
	issueNames        = jsonNames(issueJSON{})
	labelNames        = jsonNames(labelJSON{})
	commentNames      = jsonNames(commentJSON{})
)

// jsonNames are the JSON names of the fields of v's struct type.
func jsonNames(v any) []string {
	t := reflect.TypeOf(v)
	names := make([]string, 0, t.NumField())
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "" {
			name = f.Name
		}
		names = append(names, name)
	}
	return names
}

func (d *jdec) topField(p *payload, i int) bool {
	switch i {
	case 0:
		return d.str(&p.Action)
	case 1:
		return d.ptr(func() bool {
			p.Installation = new(installationJSON)
			return d.fields(installationFields, installationNames, func(i int) bool {
				if i == 0 {
					return d.int64(&p.Installation.ID)
				}
				return d.ptr(func() bool { p.Installation.Account = new(user); return d.user(p.Installation.Account) })
			})
		})
	case 2:
		return d.ptr(func() bool { p.Repository = new(repositoryJSON); return d.repository(p.Repository) })
	case 3:
		return d.nonNull(func() bool { return d.user(&p.Sender) })
	case 4:
		return d.ptr(func() bool { p.Issue = new(issueJSON); return d.issue(p.Issue) })
	default:
		return d.ptr(func() bool { p.Comment = new(commentJSON); return d.comment(p.Comment) })
	}
}

func (d *jdec) repository(r *repositoryJSON) bool {
	return d.fields(repositoryFields, repositoryNames, func(i int) bool {
		switch i {
		case 0:
			return d.str(&r.Name)
		case 1:
			return d.str(&r.FullName)
		case 2:
			return d.nonNull(func() bool { return d.user(&r.Owner) })
		default:
			return d.str(&r.HTMLURL)
		}
	})
}

func (d *jdec) user(u *user) bool {
	return d.fields(userFields, userNames, func(i int) bool {
		if i == 0 {
			return d.str(&u.Login)
		}
		return d.str(&u.Type)
	})
}

func (d *jdec) issue(is *issueJSON) bool {
	return d.fields(issueFields, issueNames, func(i int) bool {
		if i == 0 {
			return d.int(&is.Number)
		}
		if d.peek() != '[' { // null, or not an array: unsure
			return false
		}
		is.Labels = []labelJSON{}
		return d.array(func() bool {
			is.Labels = append(is.Labels, labelJSON{})
			l := &is.Labels[len(is.Labels)-1]
			return d.fields(labelFields, labelNames, func(int) bool { return d.str(&l.Name) })
		})
	})
}

func (d *jdec) comment(c *commentJSON) bool {
	return d.fields(commentFields, commentNames, func(i int) bool {
		switch i {
		case 0:
			return d.int64(&c.ID)
		case 1: // the text: unescaped once the whole body is read
			if d.peek() == 'n' {
				return d.literal("null")
			}
			start := d.i + 1
			raw, esc, ok := d.rawString()
			d.text, d.textLen, d.textEsc = start, len(raw), esc
			return ok
		case 2:
			return d.nonNull(func() bool { return d.user(&c.User) })
		case 3:
			return d.str(&c.HTMLURL)
		default:
			return d.str(&c.UpdatedAt)
		}
	})
}

// jdec reads JSON from s at i. Each method reads one value (or fails:
// invalid, or not what the field takes) and leaves i after it.
type jdec struct {
	s     string
	i     int
	depth int

	// where the comment's text lies in s (text -1: none read)
	text, textLen int
	textEsc       bool
}

func (d *jdec) peek() byte {
	if d.i < len(d.s) {
		return d.s[d.i]
	}
	return 0
}

func (d *jdec) ws() {
	for d.i < len(d.s) {
		switch d.s[d.i] {
		case ' ', '\t', '\n', '\r':
			d.i++
		default:
			return
		}
	}
}

// ptr reads an object into a pointer field (obj allocates and fills it);
// null leaves the field nil, as encoding/json does.
func (d *jdec) ptr(obj func() bool) bool {
	if d.peek() == 'n' {
		return d.literal("null")
	}
	return d.peek() == '{' && obj()
}

// nonNull reads an object into a struct field; null is left to
// encoding/json.
func (d *jdec) nonNull(obj func() bool) bool {
	return d.peek() == '{' && obj()
}

// fields reads an object whose members named in fields are read by
// field(index); the others are skipped, unless one of them folds to a
// name of the type (names) or a field comes twice.
func (d *jdec) fields(fields, names []string, field func(int) bool) bool {
	var seen uint64
	return d.object(func(key string) bool {
		for i, f := range fields {
			if key == f {
				if seen&(1<<i) != 0 {
					return false
				}
				seen |= 1 << i
				return field(i)
			}
		}
		for _, n := range names {
			if strings.EqualFold(key, n) {
				return false
			}
		}
		return d.skip()
	})
}

// object reads an object, calling member with each key (unescaped), the
// reader at its value; member must read the value.
func (d *jdec) object(member func(key string) bool) bool {
	if !d.enter('{') {
		return false
	}
	d.ws()
	if d.peek() == '}' {
		return d.leave()
	}
	for {
		raw, esc, ok := d.rawString()
		if !ok {
			return false
		}
		key := raw
		if esc {
			key = unquote(raw, true)
		}
		d.ws()
		if d.peek() != ':' {
			return false
		}
		d.i++
		d.ws()
		if !member(key) {
			return false
		}
		d.ws()
		switch d.peek() {
		case ',':
			d.i++
			d.ws()
		case '}':
			return d.leave()
		default:
			return false
		}
	}
}

// array reads an array, calling elem with the reader at each element.
func (d *jdec) array(elem func() bool) bool {
	if !d.enter('[') {
		return false
	}
	d.ws()
	if d.peek() == ']' {
		return d.leave()
	}
	for {
		if !elem() {
			return false
		}
		d.ws()
		switch d.peek() {
		case ',':
			d.i++
			d.ws()
		case ']':
			return d.leave()
		default:
			return false
		}
	}
}

func (d *jdec) enter(open byte) bool {
	if d.peek() != open || d.depth == maxJSONDepth {
		return false
	}
	d.i++
	d.depth++
	return true
}

func (d *jdec) leave() bool {
	d.i++
	d.depth--
	return true
}

// skip reads any value.
func (d *jdec) skip() bool {
	switch c := d.peek(); c {
	case '{':
		return d.object(func(string) bool { return d.skip() })
	case '[':
		return d.array(d.skip)
	case '"':
		_, _, ok := d.rawString()
		return ok
	case 't':
		return d.literal("true")
	case 'f':
		return d.literal("false")
	case 'n':
		return d.literal("null")
	default:
		_, ok := d.number()
		return ok
	}
}

func (d *jdec) literal(lit string) bool {
	if !strings.HasPrefix(d.s[d.i:], lit) {
		return false
	}
	d.i += len(lit)
	return true
}

// str reads a string into *dst; null leaves it, as encoding/json does.
func (d *jdec) str(dst *string) bool {
	if d.peek() == 'n' {
		return d.literal("null")
	}
	raw, esc, ok := d.rawString()
	if ok {
		*dst = unquote(raw, esc)
	}
	return ok
}

// int64 and int read an integer (null leaves it); a number that is not an
// integer of the field's size is left to encoding/json (an error there).
func (d *jdec) int64(dst *int64) bool {
	n, ok := d.integer(64)
	if ok && n != nil {
		*dst = *n
	}
	return ok
}

func (d *jdec) int(dst *int) bool {
	n, ok := d.integer(strconv.IntSize)
	if ok && n != nil {
		*dst = int(*n)
	}
	return ok
}

func (d *jdec) integer(bits int) (*int64, bool) {
	if d.peek() == 'n' {
		return nil, d.literal("null")
	}
	lit, ok := d.number()
	if !ok {
		return nil, false
	}
	n, err := strconv.ParseInt(lit, 10, bits)
	return &n, err == nil
}

// number reads a number as JSON spells it:
// -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func (d *jdec) number() (string, bool) {
	s, start := d.s, d.i
	i := start
	if i < len(s) && s[i] == '-' {
		i++
	}
	switch {
	case i < len(s) && s[i] == '0':
		i++
	case i < len(s) && s[i] >= '1' && s[i] <= '9':
		i = digits(s, i)
	default:
		return "", false
	}
	if i < len(s) && s[i] == '.' {
		if j := digits(s, i+1); j > i+1 {
			i = j
		} else {
			return "", false
		}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		j := digits(s, i)
		if j == i {
			return "", false
		}
		i = j
	}
	d.i = i
	return s[start:i], true
}

func digits(s string, i int) int {
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	return i
}

// rawString reads a string and returns what is between its quotes, and
// whether that holds an escape. Control characters are refused, and
// escapes must be JSON's. The quote and the backslashes are found with
// strings.IndexByte (vector instructions), then the text between them is
// checked for control characters eight bytes at a time.
func (d *jdec) rawString() (raw string, esc bool, ok bool) {
	s := d.s
	if d.peek() != '"' {
		return "", false, false
	}
	start := d.i + 1
	i := start
	quote := strings.IndexByte(s[i:], '"') + i // the first quote from i, or i-1: none
	for {
		if quote < i {
			if quote = strings.IndexByte(s[i:], '"') + i; quote < i {
				return "", false, false
			}
		}
		end := quote
		if b := strings.IndexByte(s[i:quote], '\\'); b >= 0 {
			end = i + b
		}
		if controlIndex(s[i:end]) >= 0 {
			return "", false, false
		}
		if end == quote {
			d.i = quote + 1
			return s[start:quote], esc, true
		}
		esc = true
		n, ok := escapeLen(s[end:])
		if !ok {
			return "", false, false
		}
		i = end + n // past the escape, and maybe past quote (an escaped one): found again
	}
}

// escapeLen is the length of the JSON escape at the start of s (a
// backslash), false when it is not one.
func escapeLen(s string) (int, bool) {
	if len(s) < 2 {
		return 0, false
	}
	switch s[1] {
	case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
		return 2, true
	case 'u':
		return 6, len(s) >= 6 && hex4(s[2:6])
	}
	return 0, false
}

// controlIndex is the index of the first byte of s below 0x20, or -1.
func controlIndex(s string) int {
	const (
		ones  = 0x0101010101010101
		highs = 0x8080808080808080
	)
	i := 0
	for ; i+8 <= len(s); i += 8 {
		// A byte below 0x20 sets its high bit in x-0x20…, where x's is
		// clear (exact for whether there is such a byte).
		if x := le64(s, i); (x-0x20*ones)&^x&highs != 0 {
			break
		}
	}
	for ; i < len(s); i++ {
		if s[i] < 0x20 {
			return i
		}
	}
	return -1
}

// le64 is the eight bytes of s from i, little-endian (one load).
func le64(s string, i int) uint64 {
	t := s[i : i+8]
	return uint64(t[0]) | uint64(t[1])<<8 | uint64(t[2])<<16 | uint64(t[3])<<24 |
		uint64(t[4])<<32 | uint64(t[5])<<40 | uint64(t[6])<<48 | uint64(t[7])<<56
}

func hex4(s string) bool {
	for i := 0; i < 4; i++ {
		c := s[i]
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
			return false
		}
	}
	return true
}

// unquote is the text of a string between its quotes (validated by
// rawString), as encoding/json decodes it: escapes resolved, a UTF-16
// surrogate that is not half of a pair and every byte that is not UTF-8
// replaced by U+FFFD. Without an escape and with valid UTF-8 it is raw
// itself.
func unquote(raw string, esc bool) string {
	if !esc && utf8.ValidString(raw) {
		return raw
	}
	var b strings.Builder
	b.Grow(len(raw))
	for len(raw) > 0 {
		i := strings.IndexByte(raw, '\\')
		if i < 0 {
			i = len(raw)
		}
		appendUTF8(&b, raw[:i])
		if raw = raw[i:]; raw == "" {
			break
		}
		raw = unescape(&b, raw)
	}
	return b.String()
}

// appendUTF8 writes s with each byte that is not UTF-8 replaced by U+FFFD.
func appendUTF8(b *strings.Builder, s string) {
	if utf8.ValidString(s) {
		b.WriteString(s)
		return
	}
	for _, r := range s { // ranging yields RuneError for each bad byte
		b.WriteRune(r)
	}
}

// unescape writes the escape at the start of raw and returns what follows.
func unescape(b *strings.Builder, raw string) string {
	var buf [utf8.UTFMax]byte
	n, size := escapeAt(buf[:], raw)
	b.Write(buf[:n])
	return raw[size:]
}

// escapeAt writes into b (utf8.UTFMax bytes) what the escape at the start
// of raw stands for: n bytes, for size bytes of raw.
func escapeAt(b []byte, raw string) (n, size int) {
	c := raw[1]
	if c != 'u' {
		b[0] = escaped[c]
		return 1, 2
	}
	r := hexRune(raw[2:6])
	size = 6
	if utf16.IsSurrogate(r) {
		r2 := utf8.RuneError
		if len(raw) >= 12 && raw[6] == '\\' && raw[7] == 'u' && hex4(raw[8:12]) {
			r2 = hexRune(raw[8:12])
		}
		if dec := utf16.DecodeRune(r, r2); dec != utf8.RuneError {
			return utf8.EncodeRune(b, dec), 12
		}
		r = utf8.RuneError
	}
	return utf8.EncodeRune(b, r), size
}

// escaped is the byte of each one-letter escape.
var escaped = [256]byte{'"': '"', '\\': '\\', '/': '/', 'b': '\b', 'f': '\f', 'n': '\n', 'r': '\r', 't': '\t'}

func hexRune(s string) rune {
	n, _ := strconv.ParseUint(s, 16, 32)
	return rune(n)
}
