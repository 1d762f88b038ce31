package action

import (
	"os"
	"testing"

	"github.com/phasegate/phasegate/internal/ghfake/ghfaketest"
	"github.com/phasegate/phasegate/internal/testutil"
)

// TestMain holds every exchange of these tests with the fake GitHub to
// GitHub's OpenAPI description.
func TestMain(m *testing.M) { testutil.Exit(ghfaketest.Main(m, os.Stderr)) }
