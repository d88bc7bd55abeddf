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

// BenchmarkTiers measures add_memory and retrieve_memory with the tiers
// on (the default): every add moves the exchange that leaves the thread's
// short-term window into a mid-term session, every retrieval counts visits.
// It reports the median besides the mean, and the sessions built.
func BenchmarkTiers(b *testing.B) {
	sizes := []int{10000, 100000}
	if testing.Short() {
		sizes = sizes[:1]
	}
	queries := benchQueries(1000)
	for _, n := range sizes {
		svc := newBenchService(b, b.TempDir())
		fill(b, svc, n)
		view, err := svc.MidTerm(context.Background(), "", "")
		if err != nil {
			b.Fatal(err)
		}
		b.Run(fmt.Sprintf("add/stored=%d", n), func(b *testing.B) {
			r := rand.New(rand.NewPCG(5, 5))
			var samples []time.Duration
			for b.Loop() {
				req := memory.AddRequest{ThreadID: "bench", UserInput: benchText(r, 25), AgentResponse: benchText(r, 35)}
				start := time.Now()
				if _, err := svc.Add(context.Background(), req); err != nil {
					b.Fatal(err)
				}
				samples = append(samples, time.Since(start))
			}
			reportMedian(b, samples)
			b.ReportMetric(float64(len(view.Sessions)), "sessions")
		})
		b.Run(fmt.Sprintf("retrieve/stored=%d", n), func(b *testing.B) {
			var samples []time.Duration
			i := 0
			for b.Loop() {
				q := queries[i%len(queries)]
				i++
				start := time.Now()
				if _, err := svc.Retrieve(context.Background(), memory.RetrieveRequest{ThreadID: "t0", Query: q}); err != nil {
					b.Fatal(err)
				}
				samples = append(samples, time.Since(start))
			}
			reportMedian(b, samples)
		})
		svc.Close(context.Background())
	}
}

func reportMedian(b *testing.B, samples []time.Duration) {
	slices.Sort(samples)
	b.ReportMetric(float64(percentile(samples, 50)), "p50-ns")
}
