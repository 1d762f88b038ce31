package ledger

import "testing"

// TestIsNegative: the repository's negative_options decide, case-insensitively;
// only a nil list means the defaults.
func TestIsNegative(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		option   string
		negative []string
		want     bool
	}{
		{name: "default reject", option: "Reject", want: true},
		{name: "default request-changes", option: "request-changes", want: true},
		{name: "default approve", option: "approve", want: false},
		{name: "configured", option: "DECLINE", negative: []string{"decline"}, want: true},
		{name: "configured replaces the defaults", option: "reject", negative: []string{"decline"}, want: false},
		{name: "configured empty: nothing is negative", option: "reject", negative: []string{}, want: false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := IsNegative(tc.option, tc.negative); got != tc.want {
				t.Errorf("IsNegative(%q, %q) = %v, want %v", tc.option, tc.negative, got, tc.want)
			}
		})
	}
}
