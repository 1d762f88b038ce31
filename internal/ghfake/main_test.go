package ghfake_test

import (
	"os"
	"testing"

	"github.com/phasegate/phasegate/internal/ghfake/ghfaketest"
	"github.com/phasegate/phasegate/internal/testutil"
)

// TestMain checks every exchange of this package's tests with a fake
// against GitHub's OpenAPI description. The tests send bad requests on
// purpose to see the fake refuse them: a request the description rejects
// is fine when the fake answered 4xx.
func TestMain(m *testing.M) {
	v, err := ghfaketest.Load()
	if err != nil {
		os.Stderr.WriteString("ghfaketest: " + err.Error() + "\n")
		os.Exit(1)
	}
	v.RefusedRequestsOK = true
	testutil.Exit(ghfaketest.Run(m, v, os.Stderr))
}
