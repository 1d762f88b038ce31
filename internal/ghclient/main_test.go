package ghclient

import (
	"os"
	"testing"

	"github.com/phasegate/phasegate/internal/ghfake/ghfaketest"
	"github.com/phasegate/phasegate/internal/testutil"
)

// TestMain holds every exchange of these tests with the fake GitHub to
// GitHub's OpenAPI description: what ghclient sends, and what the fake
// answers.
func TestMain(m *testing.M) { testutil.Exit(ghfaketest.Main(m, os.Stderr)) }
