package ghfaketest

import (
	"encoding/json"
	"fmt"
)

// CheckWebhook validates a webhook payload against one of the event
// schemas the subset keeps (webhookSchemas in
// bench/cmd/openapi-subset/main.go), for the events the fake builds
// payloads of because @octokit/webhooks-examples has none.
func (v *Validator) CheckWebhook(schema string, payload []byte) error {
	ref := v.doc.Components.Schemas[schema]
	if ref == nil || ref.Value == nil {
		return fmt.Errorf("%s has no schema %s: %s", SubsetFile, schema, Regenerate)
	}
	var doc any
	if err := json.Unmarshal(payload, &doc); err != nil {
		return fmt.Errorf("the %s payload is not JSON: %w", schema, err)
	}
	if err := ref.Value.VisitJSON(doc); err != nil {
		return fmt.Errorf("the payload breaks %s: %w", schema, err)
	}
	return nil
}
