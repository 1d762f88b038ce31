package server

import (
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/phasegate/phasegate/internal/ghfake/ghfaketest"
	"github.com/phasegate/phasegate/internal/testutil"
)

// childEnv makes the test binary run `phasegate serve` (Main, configured by
// the PHASEGATE_* variables) instead of the tests: a replica is a real
// process, so that it can be killed as a crash would kill it. The
// variable's value names the replica; it is the version in its User-Agent.
const childEnv = "PHASEGATE_TEST_SERVE_REPLICA"

func TestMain(m *testing.M) {
	if name := os.Getenv(childEnv); name != "" {
		if path := os.Getenv(jobLogEnv); path != "" {
			jobHook = fileJobHook(path, name)
		}
		os.Exit(Main(nil, os.Getenv, os.Stdout, os.Stderr, name))
	}
	// Every exchange with the fake GitHub, the replicas' too (the fake
	// runs in this process), is held to GitHub's OpenAPI description.
	testutil.Exit(ghfaketest.Main(m, os.Stderr))
}

// jobLogEnv names the file where a replica process of the tests logs the
// start and end of each durable job (jobHook): one line each,
// "<start|end> <key> <replica> <unix nanoseconds> <ok|error>".
const jobLogEnv = "PHASEGATE_TEST_JOB_LOG"

// fileJobHook appends the jobs' starts and ends to path.
func fileJobHook(path, replica string) func(string, *job, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		panic(err)
	}
	var mu sync.Mutex
	return func(phase string, j *job, err error) {
		res := "ok"
		if err != nil {
			res = "error"
		}
		mu.Lock()
		defer mu.Unlock()
		_, _ = fmt.Fprintf(f, "%s %s %s %d %s\n", phase, j.taskKey(), replica, time.Now().UnixNano(), res)
	}
}
