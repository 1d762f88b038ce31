package corpus

import (
	"context"
	"testing"

	"github.com/phasegate/phasegate/internal/check"
	"github.com/phasegate/phasegate/internal/config"
)

// BenchmarkValidate10k is the in-process form of the CONTRIBUTING.md budget:
// 10,000 artifacts validated in well under a second on 2 cores. The corpus
// is generated once (untimed); each iteration compiles the schemas and
// checks the whole tree, as `phasegate validate` does minus printing.
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
}
