package ghfake

import (
	"bytes"
	"encoding/json"
	"io"
	"slices"
	"strconv"
	"unicode/utf8"
)

// The fake's answers are trees of map[string]any, []any, strings, numbers
// and booleans. json.Marshal encodes them through reflection, sorting each
// map's keys through reflect.Values, and grows a fresh buffer for each
// answer; with the race detector on, that was a tenth of the CPU of the
// client's tests. appendJSON writes the same bytes (the tests compare it
// with json.Marshal, and FuzzAppendJSON keeps them equal) into a buffer
// taken from a small free-list. Any other type is left to json.Marshal.

// appendJSON is json.Marshal(v) appended to dst; nil and the error when
// json.Marshal fails.
func appendJSON(dst []byte, v any) ([]byte, error) {
	switch v := v.(type) {
	case nil:
		return append(dst, "null"...), nil
	case string:
		return appendString(dst, v), nil
	case bool:
		return strconv.AppendBool(dst, v), nil
	case int:
		return strconv.AppendInt(dst, int64(v), 10), nil
	case int64:
		return strconv.AppendInt(dst, v, 10), nil
	case map[string]any:
		return appendObject(dst, v)
	case []any:
		return appendArray(dst, v)
	case []map[string]any:
		return appendArray(dst, v)
	case []string:
		return appendArray(dst, v)
	case map[string]string:
		return appendObject(dst, v)
	}
	b, err := json.Marshal(v)
	return append(dst, b...), err
}

func appendObject[V any](dst []byte, m map[string]V) ([]byte, error) {
	if m == nil {
		return append(dst, "null"...), nil
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys) // as json.Marshal: by the keys' bytes
	dst = append(dst, '{')
	for i, k := range keys {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendString(dst, k)
		dst = append(dst, ':')
		var err error
		if dst, err = appendJSON(dst, m[k]); err != nil {
			return nil, err
		}
	}
	return append(dst, '}'), nil
}

func appendArray[E any](dst []byte, list []E) ([]byte, error) {
	if list == nil {
		return append(dst, "null"...), nil
	}
	dst = append(dst, '[')
	for i, e := range list {
		if i > 0 {
			dst = append(dst, ',')
		}
		var err error
		if dst, err = appendJSON(dst, e); err != nil {
			return nil, err
		}
	}
	return append(dst, ']'), nil
}

const hexDigits = "0123456789abcdef"

// invalidUTF8 is what json.Marshal writes for a byte of invalid UTF-8: the
// escape \ufffd up to go1.26, the character U+FFFD itself from go1.27.
var invalidUTF8 = func() []byte {
	b, _ := json.Marshal("\xff")
	return b[1 : len(b)-1]
}()

// appendString is encoding/json's string encoding with HTML escaping, as
// json.Marshal does it: <, > and & as \u003c, \u003e and \u0026, other
// control characters as \u00XX, invalid UTF-8 as invalidUTF8, and U+2028 and
// U+2029 escaped.
func appendString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		if b := s[i]; b < utf8.RuneSelf {
			if b >= 0x20 && b != '"' && b != '\\' && b != '<' && b != '>' && b != '&' {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch b {
			case '\\', '"':
				dst = append(dst, '\\', b)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[b>>4], hexDigits[b&0xF])
			}
			i++
			start = i
			continue
		}
		c, size := utf8.DecodeRuneInString(s[i:])
		if c == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, invalidUTF8...)
			i += size
			start = i
			continue
		}
		if c == '\u2028' || c == '\u2029' {
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[c&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// payloads is the free-list of the buffers answers are encoded into; each
// keeps its capacity, up to maxPayloadBuffer, for the next answer.
var payloads = make(chan []byte, 8)

const maxPayloadBuffer = 4 << 20

func getPayloadBuffer() []byte {
	select {
	case b := <-payloads:
		return b[:0]
	default:
		return make([]byte, 0, 4096)
	}
}

func putPayloadBuffer(b []byte) {
	if cap(b) == 0 || cap(b) > maxPayloadBuffer {
		return
	}
	select {
	case payloads <- b[:0]:
	default:
	}
}

// maxRequestBody is the most of a request body the fake reads.
const maxRequestBody = 32 << 20

// readBody reads a request's body, up to maxRequestBody, into one buffer
// when its length is known ahead.
func readBody(r io.Reader, length int64) ([]byte, error) {
	lr := io.LimitReader(r, maxRequestBody)
	if length < 0 || length > maxRequestBody {
		return io.ReadAll(lr)
	}
	buf := bytes.NewBuffer(make([]byte, 0, length+bytes.MinRead))
	_, err := buf.ReadFrom(lr)
	return buf.Bytes(), err
}
