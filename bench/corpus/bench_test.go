package corpus

import (
	"context"
	"syscall"
	"testing"
	"time"

	"github.com/phasegate/phasegate/internal/check"
	"github.com/phasegate/phasegate/internal/config"
)

// BenchmarkValidate10k is the in-process form of the CONTRIBUTING.md budget:
// 10,000 artifacts validated in well under a second on 2 cores. The corpus
// is generated once (untimed); each iteration compiles the schemas and
// checks the whole tree, as `phasegate validate` does minus printing. Its
// cpu-ns/op is the process's CPU time (all threads, the collector's too).
//
//	go -C bench test -run '^$' -bench Validate10k -benchmem ./corpus
func BenchmarkValidate10k(b *testing.B) {
	const n = 10000
	dir := b.TempDir()
	if err := Generate(dir, n, 1); err != nil {
		b.Fatal(err)
	}
	opts := check.Options{Config: config.Default()}
	b.ReportAllocs()
	b.ResetTimer()
	cpu := cpuTime()
	for i := 0; i < b.N; i++ {
		v, err := check.NewValidator()
		if err != nil {
			b.Fatal(err)
		}
		res, err := v.Run(context.Background(), dir, opts)
		if err != nil {
			b.Fatal(err)
		}
		if res.Artifacts != n {
			b.Fatalf("checked %d artifacts, want %d", res.Artifacts, n)
		}
	}
	b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "artifacts/s")
	b.ReportMetric(float64(cpuTime()-cpu)/float64(b.N), "cpu-ns/op")
}

// cpuTime is the CPU time (user and system) the process used so far: on a
// shared machine it varies far less with the load than wall time, so
// benchstat can compare two versions measured at different loads.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
