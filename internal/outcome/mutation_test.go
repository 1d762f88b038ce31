package outcome

import (
	"errors"
	"strings"
	"testing"
)

// Tests that bench/mutation (issue 18) found missing: each names the attack
// its defence stops.

// TestMutationVerifyReply: a reply answers the command it names, so that
// reconcile never answers it again. With a key, a reply must carry
// phasegate's signature over its marker and its text: otherwise any
// workflow posting as github-actions[bot] could silence a /resolve by
// "answering" it (attack 10a), or edit a refusal into an answer of another
// command.
func TestMutationVerifyReply(t *testing.T) {
	r := Reply{Command: 42, Prev: 7}
	plain, err := RenderReply("@alice you cannot resolve `D-001`.", r, nil)
	if err != nil {
		t.Fatal(err)
	}
	signed, err := RenderReply("@alice you cannot resolve `D-001`.", r, testKey)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name       string
		body       string
		key        []byte
		want       error
		wantSigned bool
	}{
		{name: "unsigned, no key", body: plain},
		{name: "signed, key", body: signed, key: testKey, wantSigned: true},
		{name: "signed, no key: the signature is not checked", body: signed},
		{name: "CRLF and trailing white space, as GitHub's editor saves", body: strings.ReplaceAll(signed, "\n", " \r\n"), key: testKey, wantSigned: true},
		{name: "unsigned, key: another workflow silencing a command", body: plain, key: testKey, want: ErrUnsigned},
		{name: "signed with another key", body: signed, key: []byte("another key"), want: ErrTampered},
		{name: "its text changed", body: strings.Replace(signed, "cannot", "can", 1), key: testKey, want: ErrTampered},
		{name: "its command changed", body: strings.Replace(signed, "command=42", "command=43", 1), key: testKey, want: ErrTampered},
		{name: "its marker broken", body: strings.Replace(plain, "command=42", "command=x", 1), want: ErrTampered},
		{name: "a resolution's marker", body: "Resolved\n\n<!-- phasegate:resolution v1 outcome=" + strings.Repeat("a", 64) +
			" decision=D-001 option=approve by=alice command=42 sig=- -->", want: ErrNotPhasegate},
		{name: "no marker", body: "@alice no.", want: ErrNotPhasegate},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := VerifyReplyComment(tc.body, tc.key)
			if tc.want != nil {
				if !errors.Is(err, tc.want) || got != nil {
					t.Fatalf("VerifyReplyComment = %+v, %v; want %v", got, err, tc.want)
				}
				// Every failure but "not a reply" is tampering (ErrUnsigned is too).
				if want := tc.want != ErrNotPhasegate; errors.Is(err, ErrTampered) != want {
					t.Errorf("error %v: tampered = %v, want %v", err, errors.Is(err, ErrTampered), want)
				}
				return
			}
			if err != nil || got.Command != 42 || got.Prev != 7 || got.Signed != tc.wantSigned {
				t.Fatalf("VerifyReplyComment = %+v, %v; want command 42, prev 7, signed %v", got, err, tc.wantSigned)
			}
		})
	}
}

// TestMutationSignText: the captured-issue marker's signature. Without a
// key it is "-" (nothing to check); with one it is the HMAC of the text
// under the key, so that an issue someone else pre-created with a marker
// cannot carry phasegate's signature of that outcome and decision.
func TestMutationSignText(t *testing.T) {
	text := "phasegate:captured v1\noutcome=" + strings.Repeat("a", 64) + " decision=D-002 issue=42"
	if got := SignText(nil, text); got != "-" {
		t.Errorf("SignText without a key = %q, want -", got)
	}
	sig := SignText(testKey, text)
	if len(sig) != 64 || strings.Trim(sig, "0123456789abcdef") != "" {
		t.Fatalf("SignText = %q, want 64 lower-case hex digits", sig)
	}
	for name, other := range map[string]string{
		"another key":   SignText([]byte("another key"), text),
		"another issue": SignText(testKey, strings.Replace(text, "issue=42", "issue=43", 1)),
	} {
		if other == sig {
			t.Errorf("%s signs the same: %s", name, sig)
		}
	}
	if again := SignText(testKey, text); again != sig {
		t.Errorf("SignText is not deterministic: %s, %s", sig, again)
	}
}
