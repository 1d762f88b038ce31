package decide

import (
	"os"
	"testing"

	"github.com/phasegate/phasegate/internal/ghfake/ghfaketest"
)

// TestMain holds every exchange of these tests with the fake GitHub to
// GitHub's OpenAPI description.
func TestMain(m *testing.M) { os.Exit(ghfaketest.Main(m, os.Stderr)) }
