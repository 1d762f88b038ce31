package server

import (
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/phasegate/phasegate/internal/ghfake/ghfaketest"
	"github.com/phasegate/phasegate/internal/testutil"
	"github.com/phasegate/phasegate/internal/testutil/redistest"
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
	flag.Parse()
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == "test.parallel" })
	if !set {
		_ = flag.Set("test.parallel", strconv.Itoa(parallel))
	}
	// Every exchange with the fake GitHub, the replicas' too (the fake
	// runs in this process), is held to GitHub's OpenAPI description.
	code := ghfaketest.Main(m, os.Stderr)
	redistest.StopShared() // the Redis tests' shared redis-server
	testutil.Exit(code)
}

// parallel is how many of the package's parallel tests run at once unless
// -test.parallel says otherwise (the default is GOMAXPROCS, two here).
// Several of them wait on real time, a test's own or Redis's: a hang until
// the client's attempt timeout, a durable job deferred past a rate limit's
// reset, a sender cut for its slowness. With two at a time, each such wait
// left a core idle; with four, other tests use it.
const parallel = 4

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
		key, _ := j.taskKey()
		key = key[:strings.LastIndexByte(key, ':')] // the commit's: kind:owner/repo:sha, without the input's digest
		_, _ = fmt.Fprintf(f, "%s %s %s %d %s\n", phase, key, replica, time.Now().UnixNano(), res)
	}
}
