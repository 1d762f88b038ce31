package ghfake

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
)

// SignWebhook is the X-Hub-Signature-256 header GitHub sends with a webhook
// delivery of body under the webhook secret: "sha256=" and the hex HMAC-SHA256.
// The fake signs its deliveries with it, and tests sign theirs.
func SignWebhook(secret, body []byte) string {
	mac := hmac.New(sha256.New, secret)
	mac.Write(body)
	return "sha256=" + hex.EncodeToString(mac.Sum(nil))
}
