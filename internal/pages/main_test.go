package pages

import (
	"os"
	"testing"

	"github.com/phasegate/phasegate/internal/ghfake/ghfaketest"
	"github.com/phasegate/phasegate/internal/testutil"
)

func TestMain(m *testing.M) { testutil.Exit(ghfaketest.Main(m, os.Stderr)) }
