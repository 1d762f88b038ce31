package app

import (
	"context"
	"errors"
	"os"
	"testing"
	"time"

	"github.com/phasegate/phasegate/internal/cli"
	"github.com/phasegate/phasegate/internal/testutil/redistest"
)

// serveEnv makes the test binary run `phasegate serve` instead of the
// tests: the serve processes of the smoke tests are this binary, so that
// no go build is needed.
const serveEnv = "APPBENCH_TEST_SERVE"

func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == validateArg {
		os.Exit(cli.Main(append([]string{"validate"}, os.Args[2:]...), os.Getenv, os.Stdout, os.Stderr))
	}
	if os.Getenv(serveEnv) != "" {
		os.Exit(cli.Main([]string{"serve"}, os.Getenv, os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}

// validateArg as the first argument makes the test binary run `phasegate
// validate` with the arguments after it.
const validateArg = "appbench-validate"

// serveCmd runs this test binary as serve.
func serveCmd(t *testing.T) []string {
	t.Helper()
	t.Setenv(serveEnv, "1")
	return []string{os.Args[0]}
}

// TestBigPRSmoke checks a 50-artifact pull request once. It asserts what
// happened, never how long it took.
func TestBigPRSmoke(t *testing.T) {
	if testing.Short() {
		t.Skip("runs serve processes")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	runs, err := BigPR(ctx, BigOptions{Serve: serveCmd(t), Artifacts: 50, Seed: 1, Warmup: true, Dir: t.TempDir(), Timeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	r := runs[0]
	total := Totals(r.Routes)
	if r.Artifacts != 50 || r.ContractsRuns != 1 || r.Conclusion == "" || r.PeakRSS <= 0 {
		t.Fatalf("run %+v", r)
	}
	if CallsTo(r.Routes, "/git/trees/") != 1 || CallsTo(r.Routes, "/git/blobs/") == 0 || total.Failed != 0 && total.Failed == total.Calls {
		t.Fatalf("routes %+v", r.Routes)
	}
	t.Logf("%d calls, %s, %d annotations", total.Calls, r.Conclusion, r.Annotations)
	for _, rt := range r.Routes {
		t.Logf("%5d %s (%d failed, %d B)", rt.Calls, rt.Route, rt.Failed, rt.Down)
	}
}

// TestBurstSmoke sends 4 pull requests over 2 repositories, to two
// replicas on Redis and to one replica without. It asserts what happened,
// never how long it took.
func TestBurstSmoke(t *testing.T) {
	if testing.Short() {
		t.Skip("runs serve processes")
	}
	for _, tc := range []struct {
		name     string
		replicas int
		redis    bool
	}{{"two replicas on Redis", 2, true}, {"one replica in memory", 1, false}} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			res, err := Burst(ctx, BurstOptions{Serve: serveCmd(t), Repos: 2, PRsPerRepo: 2, Artifacts: 10, Seed: 1,
				Replicas: tc.replicas, Redis: tc.redis, Dir: t.TempDir(), Timeout: time.Minute})
			if errors.Is(err, ErrNoRedis) {
				if os.Getenv(redistest.RequireEnv) != "" {
					t.Fatalf("%v and %s is set", err, redistest.RequireEnv)
				}
				t.Skip(err)
			}
			if err != nil {
				t.Fatal(err)
			}
			if res.PRs != 4 || res.Answers[202] != 4 || res.ExactlyOne != 4 || res.Repeated != 0 || res.Overlapping != 0 || len(res.ToContracts) != 4 {
				t.Fatalf("result %+v", res)
			}
			jobs := 0.0
			for _, r := range res.PerReplica {
				jobs += r.Jobs
			}
			if jobs != 4 {
				t.Errorf("replicas handled %v jobs, want 4: %+v", jobs, res.PerReplica)
			}
			t.Logf("%+v", res.PerReplica)
		})
	}
}

// TestGrowSmoke measures a 1-file pull request on a 60-artifact
// repository, cold and warm. It asserts what happened, never how long it
// took.
func TestGrowSmoke(t *testing.T) {
	if testing.Short() {
		t.Skip("runs serve processes")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	runs, err := Grow(ctx, GrowOptions{Serve: serveCmd(t), Validate: []string{os.Args[0], validateArg}, Sizes: []int{60}, Seed: 1,
		Dir: t.TempDir(), Timeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	r := runs[0]
	if r.Artifacts != 60 || r.Validate <= 0 || r.ValidateExit > 1 || r.PeakRSS <= 0 || r.ColdRSS <= 0 {
		t.Fatalf("run %+v", r)
	}
	for _, s := range []GrowStep{r.First, r.Change} {
		if s.Conclusion == "" || CallsTo(s.Routes, "/git/trees/") == 0 {
			t.Fatalf("step %+v", s)
		}
	}
	t.Logf("first %d calls, change %d calls, %s", Totals(r.First.Routes).Calls, Totals(r.Change.Routes).Calls, r.Change.Title)
}
