package sandboxtest

import (
	"slices"
	"testing"
	"time"

	"github.com/silas-ai/silas/sandbox"
)

// BenchmarkStart runs `true` in in b.N times and reports the median and the
// 99th percentile of a run's wall time, in milliseconds (p50-ms, p99-ms).
func BenchmarkStart(b *testing.B, in sandbox.Instance) {
	var took []time.Duration
	for b.Loop() {
		start := time.Now()
		res, err := in.Run(b.Context(), sandbox.Command{Args: []string{"true"}, Timeout: 30 * time.Second})
		if err != nil {
			b.Fatal(err)
		}
		if !res.Success() {
			b.Fatalf("true failed: exit %d %s: %s", res.ExitCode, res.Signal, res.Stderr)
		}
		took = append(took, time.Since(start))
	}
	slices.Sort(took)
	ms := func(q float64) float64 {
		return float64(took[int(q*float64(len(took)-1))]) / float64(time.Millisecond)
	}
	b.ReportMetric(ms(0.50), "p50-ms")
	b.ReportMetric(ms(0.99), "p99-ms")
}
