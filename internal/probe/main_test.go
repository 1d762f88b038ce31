package probe

import (
	"testing"

	"github.com/phasegate/phasegate/internal/testutil"
)

func TestMain(m *testing.M) { testutil.Exit(m.Run()) }
