package ghfake

import "testing"

func TestSignWebhook(t *testing.T) {
	tests := []struct {
		name         string
		secret, body string
		want         string
	}{
		// GitHub's documented example ("Validating webhook deliveries").
		{name: "documented example", secret: "It's a Secret to Everybody", body: "Hello, World!", want: "sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17"},
		{name: "other secret", secret: "It's a Secret to Nobody", body: "Hello, World!"},
		{name: "other body", secret: "It's a Secret to Everybody", body: "Hello, World?"},
	}
	documented := tests[0].want
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := SignWebhook([]byte(tt.secret), []byte(tt.body))
			if tt.want != "" && got != tt.want {
				t.Fatalf("SignWebhook = %s, want %s", got, tt.want)
			}
			if tt.want == "" && got == documented {
				t.Fatalf("SignWebhook(%q, %q) = the documented example's signature", tt.secret, tt.body)
			}
		})
	}
}
