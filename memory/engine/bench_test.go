package engine_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/mnemo-mcp/mnemo/memory"
	"github.com/mnemo-mcp/mnemo/memory/engine"
	"github.com/mnemo-mcp/mnemo/memory/files"
)

// benchVocab is a small conversational vocabulary; texts draw from it with
// a skewed distribution so that term statistics look like real chat.
var benchVocab = strings.Fields(`i you we the a to and of in is it that for on with my this was have
	be are not at but so do can what how when where why will would like just about get know think
	go trip kyoto paris berlin coffee tea dog cat garden guitar piano running marathon yoga book
	novel painting photo camera wedding birthday sister brother mother father friend job interview
	manager project deadline release database migration server bug test deploy python golang rust
	recipe pasta curry vegan dinner lunch weekend holiday beach mountain hiking camping concert
	movie series music band album school class exam teacher student university degree research
	paper conference talk meeting budget salary house apartment rent move city car bike train`)

func benchText(r *rand.Rand, n int) string {
	var sb strings.Builder
	for i := range n {
		if i > 0 {
			sb.WriteByte(' ')
		}
		// Squaring a uniform draw skews toward the frequent head of the list.
		f := r.Float64()
		sb.WriteString(benchVocab[int(f*f*float64(len(benchVocab)))])
	}
	return sb.String()
}

func newBenchService(b *testing.B, dir string) *engine.Service {
	b.Helper()
	store, err := files.Open(dir)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { store.Close() })
	svc := engine.NewTestService(b, store, memory.DefaultConfig())
	return svc
}

// fill stores n exchanges through the service (32 per call to keep setup quick).
func fill(b *testing.B, svc *engine.Service, n int) {
	b.Helper()
	r := rand.New(rand.NewPCG(7, uint64(n)))
	for i := 0; i < n; i += 32 {
		var msgs []memory.Message
		for j := i; j < min(n, i+32); j++ {
			msgs = append(msgs,
				memory.Message{Role: memory.RoleUser, Content: fmt.Sprintf("%s (note %d)", benchText(r, 25), j)},
				memory.Message{Role: memory.RoleAssistant, Content: benchText(r, 35)})
		}
		if _, err := svc.Add(context.Background(), memory.AddRequest{ThreadID: fmt.Sprintf("t%d", i/320), Messages: msgs}); err != nil {
			b.Fatal(err)
		}
	}
}

// benchSizes are the stored exchanges of the scale benchmarks; 100,000 is
// left out under -short.
func benchSizes() []int {
	if testing.Short() {
		return []int{1000, 10000}
	}
	return []int{1000, 10000, 100000}
}

// benchQueries returns n distinct questions in the vocabulary, so that a
// retrieval benchmark does not measure one query's warm caches.
func benchQueries(n int) []string {
	r := rand.New(rand.NewPCG(3, 3))
	starts := []string{"When did", "What did", "Where is", "How was", "Why did", "Who was"}
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("%s %s?", starts[i%len(starts)], benchText(r, 4+i%5))
	}
	return out
}

// BenchmarkAdd measures one add_memory (one exchange, fsynced) into a scope
// that already holds n exchanges: the cost must stay flat as n grows.
func BenchmarkAdd(b *testing.B) {
	for _, n := range benchSizes() {
		b.Run(fmt.Sprintf("stored=%d", n), func(b *testing.B) {
			svc := newBenchService(b, b.TempDir())
			fill(b, svc, n)
			r := rand.New(rand.NewPCG(1, 1))
			req := memory.AddRequest{ThreadID: "bench", UserInput: benchText(r, 25), AgentResponse: benchText(r, 35)}
			b.ResetTimer()
			for b.Loop() {
				if _, err := svc.Add(context.Background(), req); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkRetrieve measures one retrieve_memory (ranking, facts, recent
// window and injection text) over n stored exchanges, cycling through
// 1,000 distinct queries.
func BenchmarkRetrieve(b *testing.B) {
	queries := benchQueries(1000)
	for _, n := range benchSizes() {
		b.Run(fmt.Sprintf("stored=%d", n), func(b *testing.B) {
			svc := newBenchService(b, b.TempDir())
			fill(b, svc, n)
			// The first retrieval builds the mid-term sessions
			// (BenchmarkSessionsRebuild measures that); the loop measures
			// the retrievals after it.
			if _, err := svc.Retrieve(context.Background(), memory.RetrieveRequest{ThreadID: "t0", Query: queries[0]}); err != nil {
				b.Fatal(err)
			}
			i := 0
			b.ResetTimer()
			for b.Loop() {
				q := queries[i%len(queries)]
				i++
				if _, err := svc.Retrieve(context.Background(), memory.RetrieveRequest{ThreadID: "t0", Query: q}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkRebuild measures what a restart costs: loading and indexing a
// scope of n exchanges from its turn log on first use.
func BenchmarkRebuild(b *testing.B) {
	for _, n := range benchSizes() {
		b.Run(fmt.Sprintf("stored=%d", n), func(b *testing.B) {
			dir := b.TempDir()
			fill(b, newBenchService(b, dir), n)
			b.ResetTimer()
			for b.Loop() {
				svc := newBenchService(b, dir)
				if _, err := svc.Profile(context.Background(), memory.ProfileRequest{}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkSessionsRebuild measures the worst start: n exchanges and no
// saved mid-term state (midterm.json lost, or written by a version without
// it), so that loading the scope places every page in a session again.
func BenchmarkSessionsRebuild(b *testing.B) {
	for _, n := range benchSizes() {
		b.Run(fmt.Sprintf("stored=%d", n), func(b *testing.B) {
			dir := b.TempDir()
			svc := newBenchService(b, dir)
			fill(b, svc, n)
			svc.Close(context.Background())
			b.ResetTimer()
			for b.Loop() {
				b.StopTimer()
				removeMidTerm(b, dir)
				svc := newBenchService(b, dir)
				b.StartTimer()
				if err := svc.Preload(context.Background(), "", ""); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func removeMidTerm(b *testing.B, dir string) {
	b.Helper()
	matches, err := filepath.Glob(filepath.Join(dir, "users", "*", "midterm.json"))
	if err != nil {
		b.Fatal(err)
	}
	for _, m := range matches {
		if err := os.Remove(m); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRetrieveParallel measures retrievals of one scope of 5,000
// exchanges from 8 goroutines at once (one user's clients): they rank in
// parallel, each under the scope's read lock. ns/op is the time per
// retrieval over all of them.
func BenchmarkRetrieveParallel(b *testing.B) {
	queries := benchQueries(1000)
	svc := newBenchService(b, b.TempDir())
	fill(b, svc, 5000)
	if _, err := svc.Retrieve(context.Background(), memory.RetrieveRequest{ThreadID: "t0", Query: queries[0]}); err != nil {
		b.Fatal(err)
	}
	var n atomic.Int64
	b.SetParallelism(4) // 4 × GOMAXPROCS(2) = 8 clients
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			q := queries[int(n.Add(1))%len(queries)]
			if _, err := svc.Retrieve(context.Background(), memory.RetrieveRequest{ThreadID: "t0", Query: q}); err != nil {
				b.Error(err)
				return
			}
		}
	})
}
