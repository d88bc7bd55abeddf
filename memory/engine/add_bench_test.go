package engine_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/mnemo-mcp/mnemo/memory"
)

// BenchmarkAddServed measures one add_memory the way a server sees them
// (mnemo bench's pattern: one exchange per call, dated, threads of 50)
// into a scope of n exchanges read back after a restart, with the saved
// mid-term sessions loaded (Preload, as serve does): every add past a
// thread's short-term window places a page into a session, and the first
// adds meet sessions loaded from midterm.json. It reports the median.
func BenchmarkAddServed(b *testing.B) {
	for _, n := range []int{5000, 100000} {
		if testing.Short() && n > 10000 {
			continue
		}
		b.Run(fmt.Sprintf("stored=%d", n), func(b *testing.B) {
			dir := b.TempDir()
			svc := newBenchService(b, dir)
			fill(b, svc, n)
			if err := svc.Preload(context.Background(), "", ""); err != nil {
				b.Fatal(err)
			}
			svc.Close(context.Background())
			svc = newBenchService(b, dir)
			if err := svc.Preload(context.Background(), "", ""); err != nil {
				b.Fatal(err)
			}
			r := rand.New(rand.NewPCG(9, 9))
			base := time.Date(2025, 1, 1, 9, 0, 0, 0, time.UTC)
			var samples []time.Duration
			i := 0
			for b.Loop() {
				req := memory.AddRequest{ThreadID: fmt.Sprintf("served-%d", i/50), UserInput: benchText(r, 25), AgentResponse: benchText(r, 35),
					Timestamp: base.Add(time.Duration(i) * time.Minute).Format(time.RFC3339)}
				i++
				start := time.Now()
				if _, err := svc.Add(context.Background(), req); err != nil {
					b.Fatal(err)
				}
				samples = append(samples, time.Since(start))
			}
			slices.Sort(samples)
			b.ReportMetric(float64(percentile(samples, 50)), "p50-ns")
		})
	}
}
