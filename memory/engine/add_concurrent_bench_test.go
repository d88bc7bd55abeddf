package engine_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync/atomic"
	"testing"

	"github.com/mnemo-mcp/mnemo/memory"
)

// BenchmarkAddConcurrent measures adds from 8 clients at once into one
// user's scope of 5,000 exchanges (a team's busy user): with group commit
// the adds that wait share one fsync. ns/op is the time per add.
func BenchmarkAddConcurrent(b *testing.B) {
	svc := newBenchService(b, b.TempDir())
	fill(b, svc, 5000)
	var n atomic.Int64
	b.SetParallelism(4) // 4 × GOMAXPROCS(2) = 8 clients
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		r := rand.New(rand.NewPCG(uint64(n.Add(1)), 5))
		for pb.Next() {
			i := n.Add(1)
			req := memory.AddRequest{ThreadID: fmt.Sprintf("c-%d", i%8), UserInput: benchText(r, 25), AgentResponse: benchText(r, 35)}
			if _, err := svc.Add(context.Background(), req); err != nil {
				b.Error(err)
				return
			}
		}
	})
}
