package redisx

import (
	"flag"
	"strconv"
	"testing"

	"github.com/phasegate/phasegate/internal/testutil"
	"github.com/phasegate/phasegate/internal/testutil/redistest"
)

// parallel is how many of the package's parallel tests run at once unless
// -test.parallel says otherwise. They spend their time waiting for Redis's
// real-time expiries, leases and polls, each test in its own database,
// at a small fraction of a core each: at the default (GOMAXPROCS, two
// here) two waited at a time, 7 s of waiting for 2.4 CPU-s. At 8 the
// longest waits (lease_test.go's, which start first) hold the package's
// wall time; at 16, every test starting at once starved the renewals of
// the short leases on a loaded machine.
const parallel = 8

func TestMain(m *testing.M) {
	flag.Parse()
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == "test.parallel" })
	if !set {
		_ = flag.Set("test.parallel", strconv.Itoa(parallel))
	}
	code := m.Run()
	redistest.StopShared()
	testutil.Exit(code)
}
