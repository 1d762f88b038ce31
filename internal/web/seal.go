package web

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hkdf"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
)

// sealVersion is the first byte of every sealed value; a value of another
// version does not open.
const sealVersion = 1

// MinSessionKey is the shortest session key accepted, in bytes.
const MinSessionKey = 32

// maxSealed bounds a sealed cookie value read back (browsers keep 4 KiB a
// cookie): anything longer is not ours and is not decoded.
const maxSealed = 4096

// sealer seals values into cookie-safe text with AES-256-GCM under keys
// derived from the session keys for one purpose (session, oauth state,
// flash): a value sealed for one purpose never opens as another. The first
// key seals; every key opens (rotation).
type sealer struct {
	purpose string
	aeads   []cipher.AEAD
}

func newSealer(keys [][]byte, purpose string) (*sealer, error) {
	if len(keys) == 0 {
		return nil, errors.New("no session key")
	}
	s := &sealer{purpose: purpose}
	for i, k := range keys {
		if len(k) < MinSessionKey {
			return nil, fmt.Errorf("session key %d is %d bytes, want at least %d", i+1, len(k), MinSessionKey)
		}
		dk, err := hkdf.Key(sha256.New, k, nil, "phasegate web "+purpose+" v1", 32)
		if err != nil {
			return nil, fmt.Errorf("deriving the %s key: %w", purpose, err)
		}
		block, err := aes.NewCipher(dk)
		if err != nil {
			return nil, fmt.Errorf("the %s cipher: %w", purpose, err)
		}
		gcm, err := cipher.NewGCM(block)
		if err != nil {
			return nil, fmt.Errorf("the %s cipher: %w", purpose, err)
		}
		s.aeads = append(s.aeads, gcm)
	}
	return s, nil
}

// aad binds the version and the purpose to the ciphertext.
func (s *sealer) aad() []byte { return []byte{sealVersion, ':'} }

// seal encrypts v's JSON: base64url(version ‖ nonce ‖ ciphertext+tag).
func (s *sealer) seal(v any) (string, error) {
	plain, err := json.Marshal(v)
	if err != nil {
		return "", fmt.Errorf("sealing the %s: %w", s.purpose, err)
	}
	a := s.aeads[0]
	out := make([]byte, 1+a.NonceSize(), 1+a.NonceSize()+len(plain)+a.Overhead())
	out[0] = sealVersion
	if _, err := rand.Read(out[1:]); err != nil {
		return "", fmt.Errorf("sealing the %s: %w", s.purpose, err)
	}
	out = a.Seal(out, out[1:], plain, s.aad())
	return base64.RawURLEncoding.EncodeToString(out), nil
}

// open decrypts text into v; false when it is not a value this sealer
// sealed under one of its keys (tampered, truncated, another version,
// another purpose, a retired key) or does not decode into v.
func (s *sealer) open(text string, v any) bool {
	if len(text) == 0 || len(text) > maxSealed {
		return false
	}
	raw, err := base64.RawURLEncoding.Strict().DecodeString(text)
	if err != nil || len(raw) < 1 || raw[0] != sealVersion {
		return false
	}
	for _, a := range s.aeads {
		if len(raw) < 1+a.NonceSize()+a.Overhead() {
			return false
		}
		nonce, ct := raw[1:1+a.NonceSize()], raw[1+a.NonceSize():]
		plain, err := a.Open(nil, nonce, ct, s.aad())
		if err != nil {
			continue
		}
		return json.Unmarshal(plain, v) == nil
	}
	return false
}

// randomText is n random bytes, base64url without padding.
func randomText(n int) string { return base64.RawURLEncoding.EncodeToString(randomBytes(n)) }

func randomBytes(n int) []byte {
	b := make([]byte, n)
	_, _ = rand.Read(b) // crypto/rand.Read never fails (Go 1.24+)
	return b
}
