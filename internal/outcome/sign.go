package outcome

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"strconv"
	"strings"
)

// Signing. When a key is configured (PHASEGATE_SIGNING_KEY, passed in by the
// caller as bytes), a marker's sig is the lower-case hex HMAC-SHA256, under
// that key, of this message (every line ends with "\n"):
//
//	phasegate:<kind> v<version>
//	<key>=<value>        one line per marker field other than sig, in marker
//	                     order, spelled exactly as in the marker (source is
//	                     the percent-encoded path, "@", the commit; pr is "-"
//	                     when absent; captured only when present)
//	body=<hex>           the lower-case hex SHA-256 of the comment body above
//	                     the marker line: every byte of the normalised body
//	                     (see Normalize) before the marker line, including the
//	                     line break(s) that precede it
//
// So the signature covers the kind, the version, every field and everything
// a reader sees: an edit of the summary, the YAML or the marker breaks it.
// Signatures are compared in constant time (hmac.Equal). Without a key the
// marker's sig is "-".

// signedMessage is the message a marker's sig signs.
func signedMessage(m Marker, above string) string {
	var b strings.Builder
	b.WriteString("phasegate:" + string(m.Kind) + " v" + strconv.Itoa(m.Version) + "\n")
	for key, val := range m.fields() {
		b.WriteString(key + "=" + val + "\n")
	}
	sum := sha256.Sum256([]byte(above))
	b.WriteString("body=" + hex.EncodeToString(sum[:]) + "\n")
	return b.String()
}

// sign is the hex HMAC-SHA256 of the marker and the body above it; "" when
// there is no key.
func sign(key []byte, m Marker, above string) string {
	if len(key) == 0 {
		return ""
	}
	return SignText(key, signedMessage(m, above))
}

// sigValid reports, in constant time, whether m.Sig is the signature of m
// and above under key (both lower-case hex: ParseMarker accepts no other
// spelling of a sig).
func sigValid(key []byte, m Marker, above string) bool {
	return hmac.Equal([]byte(m.Sig), []byte(sign(key, m, above)))
}

// SignText is the hex HMAC-SHA256 of text under key, for phasegate's other
// markers (the captured-issue marker); "-" when there is no key.
func SignText(key []byte, text string) string {
	if len(key) == 0 {
		return "-"
	}
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(text))
	return hex.EncodeToString(mac.Sum(nil))
}
